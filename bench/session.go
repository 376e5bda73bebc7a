package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/tether-browser/tether/test/mcpclient"
)

// callTimeout bounds every tool call from the client's side, above the
// 30 s navigation timeout every server is given: a call that hangs is an
// error for that page, not a stalled run.
const callTimeout = 60 * time.Second

// session is one MCP client over stdio to one server (Tether through
// `tether mcp`, or a peer), started in its own process group so that the
// browsers it launches end with it.
type session struct {
	name string
	c    *client.Client
	mu   sync.Mutex
	cmd  *exec.Cmd
	errs *tailBuffer
}

// startSession runs command with args in dir (env added to the bench's own)
// and initializes an MCP session with it.
func startSession(ctx context.Context, name, dir string, env []string, command string, args ...string) (*session, error) {
	s := &session{name: name, errs: &tailBuffer{max: 16 << 10}}
	t := transport.NewStdioWithOptions(command, env, args,
		transport.WithCommandStderrWriter(s.errs),
		transport.WithCommandFunc(func(ctx context.Context, command string, env []string, args []string) (*exec.Cmd, error) {
			cmd := exec.CommandContext(ctx, command, args...)
			cmd.Env = append(cmd.Environ(), env...)
			cmd.Dir = dir
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			s.mu.Lock()
			s.cmd = cmd
			s.mu.Unlock()
			return cmd, nil
		}))
	if err := t.Start(ctx); err != nil {
		return nil, fmt.Errorf("%s: start: %w", name, err)
	}
	s.c = client.NewClient(t)
	ictx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if _, err := mcpclient.Initialize(ictx, s.c, "tether-bench"); err != nil {
		s.Close()
		return nil, fmt.Errorf("%s: initialize: %w\n%s", name, err, s.errs)
	}
	return s, nil
}

// pid is the server process's id (for Tether: the `tether mcp` bridge).
func (s *session) pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// Close ends the session, then the server's whole process group.
func (s *session) Close() {
	_ = s.c.Close()
	if pid := s.pid(); pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGTERM)
		time.Sleep(200 * time.Millisecond)
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}

// call runs a tool and returns its text content, the client's wall time,
// and an error for a failed call or an error result.
func (s *session) call(ctx context.Context, tool string, args map[string]any) (string, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	t0 := time.Now()
	res, err := s.c.CallTool(ctx, req)
	d := time.Since(t0)
	if err != nil {
		return "", d, fmt.Errorf("%s %s: %w", s.name, tool, err)
	}
	text := mcpclient.Text(res)
	if res.IsError {
		return text, d, fmt.Errorf("%s %s: error result: %s", s.name, tool, clip(text, 300))
	}
	return text, d, nil
}

// toolsListSize is what tools/list costs in context: the characters of every
// tool's name, description and (compact JSON) schemas, read from the raw
// response so that nothing is lost to the client's own types.
func (s *session) toolsListSize(ctx context.Context) (chars, tools int, err error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	var cursor string
	for page := 0; ; page++ {
		var params any
		if cursor != "" {
			params = map[string]any{"cursor": cursor}
		}
		resp, err := s.c.GetTransport().SendRequest(ctx, transport.JSONRPCRequest{
			JSONRPC: "2.0", ID: mcp.NewRequestId(int64(1_000_000 + page)), Method: "tools/list", Params: params})
		if err != nil {
			return 0, 0, err
		}
		if resp.Error != nil {
			return 0, 0, errors.New(resp.Error.Message)
		}
		var r struct {
			Tools      []map[string]json.RawMessage `json:"tools"`
			NextCursor string                       `json:"nextCursor"`
		}
		if err := json.Unmarshal(resp.Result, &r); err != nil {
			return 0, 0, err
		}
		for _, t := range r.Tools {
			for _, k := range []string{"name", "description"} {
				var v string
				_ = json.Unmarshal(t[k], &v)
				chars += utf8.RuneCountInString(v)
			}
			for _, k := range []string{"inputSchema", "outputSchema"} {
				if raw := t[k]; len(raw) > 0 {
					var b bytes.Buffer
					if err := json.Compact(&b, raw); err == nil {
						chars += utf8.RuneCount(b.Bytes())
					}
				}
			}
		}
		tools += len(r.Tools)
		if cursor = r.NextCursor; cursor == "" {
			return chars, tools, nil
		}
	}
}

// tailBuffer keeps the last max bytes written to it (a server's stderr).
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = t.b[len(t.b)-t.max:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

var _ io.Writer = (*tailBuffer)(nil)

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
