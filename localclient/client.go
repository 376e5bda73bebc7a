// Package localclient is the one Go client of the daemon's local API
// (apitype): the CLI, the tray and the window reach the daemon only
// through it. Client makes the requests; Model is the state the tray and
// the window show, built from the event stream, with the one "calls
// running now" both use.
//
// It imports only apitype and config, so that its callers depend on no
// broker, policy or timeline code.
package localclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tether-browser/tether/apitype"
	"github.com/tether-browser/tether/config"
)

// ErrNotRunning is returned (wrapped) when no daemon answers: none has
// recorded itself in the config dir, or the recorded one is gone.
var ErrNotRunning = errors.New("Tether is not running (start it with `tether`, or `tether serve` without a tray)")

// Error is a request the daemon refused: Status is the HTTP status and
// Message the daemon's apitype.Error text, which says what to do next.
type Error struct {
	Status  int
	Message string
}

func (e *Error) Error() string { return e.Message }

// IsStatus reports whether err is an *Error with that HTTP status.
func IsStatus(err error, status int) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == status
}

// Client calls the local API of the daemon recorded in a config dir. It
// reads the daemon's port from its record and the control token from
// `control-token`, and reads both again when a request fails because the
// daemon restarted (connection refused) or the token was rotated (401);
// such a request was not handled, so it is sent once more. It is safe for
// concurrent use.
type Client struct {
	paths config.Paths
	http  *http.Client
	// stream is the client for the event stream, with no overall timeout.
	stream *http.Client

	mu    sync.Mutex
	base  string // e.g. http://127.0.0.1:47615; "" until read
	token string
}

// New returns a client of the daemon of the config dir p.
// Every connection it opens first checks the daemon's proof
// (ProvenDialer), so its control token never goes to another program.
func New(p config.Paths) *Client {
	tr := &http.Transport{DialContext: ProvenDialer(p), MaxIdleConnsPerHost: 4, IdleConnTimeout: 90 * time.Second}
	return &Client{paths: p,
		http:   &http.Client{Timeout: 30 * time.Second, Transport: tr},
		stream: &http.Client{Transport: tr},
	}
}

// endpoint returns the base URL and token, read from the config dir when
// not cached or when reload is set. The daemon proves itself on each new
// connection (ProvenDialer, New) before the token goes out. Without a
// daemon record the error wraps ErrNotRunning, and is an
// *OtherProgramError when another program answers on the port a daemon
// would take ($TETHER_PORT or the default: CheckPort).
func (c *Client) endpoint(ctx context.Context, reload bool) (string, string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.base != "" && c.token != "" && !reload {
		return c.base, c.token, nil
	}
	rec, err := c.paths.ReadDaemonRecord()
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if port, perr := config.PortFromEnv(); perr == nil {
				if op := CheckPort(ctx, c.paths, port); op != nil {
					return "", "", op
				}
			}
		}
		if errors.Is(err, fs.ErrNotExist) {
			return "", "", notRunningError{err} // no record: the usual case, said plainly
		}
		return "", "", fmt.Errorf("%w: %v", ErrNotRunning, err)
	}
	token, err := c.paths.ReadControlToken()
	if err != nil {
		return "", "", fmt.Errorf("%w: %v", ErrNotRunning, err)
	}
	c.base, c.token = rec.URL(), token
	return c.base, c.token, nil
}

// notRunningError is ErrNotRunning for the plain cases (no daemon record,
// nothing listening on its port): its text is ErrNotRunning's alone, and
// errors.Is finds both ErrNotRunning and the cause.
type notRunningError struct{ cause error }

func (e notRunningError) Error() string   { return ErrNotRunning.Error() }
func (e notRunningError) Unwrap() []error { return []error{ErrNotRunning, e.cause} }

// send makes one request and returns the response (status < 300) or an
// error. It retries once, with the record and token read again, when the
// first attempt provably did not reach the handler: connection refused,
// or 401.
func (c *Client) send(ctx context.Context, hc *http.Client, method, path string, query url.Values, body any, accept string) (*http.Response, error) {
	var payload []byte
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		payload = b
	}
	for attempt := 0; ; attempt++ {
		base, token, err := c.endpoint(ctx, attempt > 0)
		if err != nil {
			return nil, err
		}
		u := base + path
		if len(query) > 0 {
			u += "?" + query.Encode()
		}
		var rd io.Reader
		if payload != nil {
			rd = bytes.NewReader(payload)
		}
		req, err := http.NewRequestWithContext(ctx, method, u, rd)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		if payload != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := hc.Do(req)
		if err != nil {
			if attempt == 0 && ctx.Err() == nil && refused(err) {
				continue // the daemon may have restarted on another port
			}
			if refused(err) {
				return nil, notRunningError{err}
			}
			// The program on the port failed the proof (ProvenDialer): its
			// own error says what it is and what to do, without the URL.
			var op *OtherProgramError
			if errors.As(err, &op) {
				return nil, op
			}
			var ue *url.Error
			if errors.Is(err, ErrNotThisTether) && errors.As(err, &ue) {
				return nil, ue.Err
			}
			return nil, err
		}
		if resp.StatusCode == http.StatusUnauthorized && attempt == 0 {
			resp.Body.Close()
			continue // `tether token rotate` replaced the control token
		}
		if resp.StatusCode >= 300 {
			defer resp.Body.Close()
			var ae apitype.Error
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
			if json.Unmarshal(b, &ae) == nil && ae.Error != "" {
				return nil, &Error{Status: resp.StatusCode, Message: ae.Error}
			}
			return nil, &Error{Status: resp.StatusCode, Message: fmt.Sprintf("the Tether daemon answered %s %s with %s", method, path, resp.Status)}
		}
		return resp, nil
	}
}

// refused reports whether err is a refused TCP connection (nothing
// listens on the recorded port).
func refused(err error) bool {
	return strings.Contains(err.Error(), "connection refused") || strings.Contains(err.Error(), "actively refused")
}

// do sends a request with an optional JSON body and decodes a JSON answer
// into out (nil: the answer is ignored).
func (c *Client) do(ctx context.Context, method, path string, query url.Values, body, out any) error {
	resp, err := c.send(ctx, c.http, method, path, query, body, "application/json")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil || resp.StatusCode == http.StatusNoContent {
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("read the daemon's answer to %s: %w", path, err)
	}
	return nil
}

// State returns everything the tray and the window show besides the
// timeline.
func (c *Client) State(ctx context.Context) (apitype.State, error) {
	var s apitype.State
	return s, c.do(ctx, http.MethodGet, apitype.PathState, nil, nil, &s)
}

// Profiles lists every browser profile and those waiting to pair.
func (c *Client) Profiles(ctx context.Context) (apitype.ProfileList, error) {
	var l apitype.ProfileList
	return l, c.do(ctx, http.MethodGet, apitype.PathProfiles, nil, nil, &l)
}

// ApproveProfile pairs a waiting profile, named by its pairing code or
// full id. A 404 *Error: none waits under that name; 409: that name is of
// a profile already paired (or matches several).
func (c *Client) ApproveProfile(ctx context.Context, name string) (apitype.Profile, error) {
	var p apitype.Profile
	return p, c.do(ctx, http.MethodPost, apitype.PathProfileApprove, nil, apitype.NameRequest{Name: name}, &p)
}

// Tokens lists the named MCP tokens, by name.
func (c *Client) Tokens(ctx context.Context) ([]apitype.Token, error) {
	var l []apitype.Token
	return l, c.do(ctx, http.MethodGet, apitype.PathTokens, nil, nil, &l)
}

// AddToken issues a named MCP token; its Secret is shown this once. A 400
// *Error: a bad name; 409: the name is taken.
func (c *Client) AddToken(ctx context.Context, name string) (apitype.IssuedToken, error) {
	var t apitype.IssuedToken
	return t, c.do(ctx, http.MethodPost, apitype.PathTokenAdd, nil, apitype.NameRequest{Name: name}, &t)
}

// RevokeToken removes a named MCP token at once. A 404 *Error: none has
// that name.
func (c *Client) RevokeToken(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodPost, apitype.PathTokenRevoke, nil, apitype.NameRequest{Name: name}, nil)
}

// DenyProfile refuses a waiting profile (pairing code or full id) and
// returns what it denied: its id, label and code as it claimed them (all
// empty from a daemon before this answer, which sent 204). A 404 *Error:
// none waits under that name.
func (c *Client) DenyProfile(ctx context.Context, name string) (apitype.Profile, error) {
	var p apitype.Profile
	return p, c.do(ctx, http.MethodPost, apitype.PathProfileDeny, nil, apitype.NameRequest{Name: name}, &p)
}

// ForgetProfile removes a paired profile (slug, label or id prefix).
func (c *Client) ForgetProfile(ctx context.Context, name string) (apitype.Profile, error) {
	var p apitype.Profile
	return p, c.do(ctx, http.MethodPost, apitype.PathProfileForget, nil, apitype.NameRequest{Name: name}, &p)
}

// SetTabOwner gives a shared tab to an AI app, or back to the user (App "").
func (c *Client) SetTabOwner(ctx context.Context, req apitype.TabOwnerRequest) error {
	return c.do(ctx, http.MethodPost, apitype.PathTabOwner, nil, req, nil)
}

// Paused reports the kill switch.
func (c *Client) Paused(ctx context.Context) (bool, error) {
	var p apitype.Pause
	err := c.do(ctx, http.MethodGet, apitype.PathPause, nil, nil, &p)
	return p.Paused, err
}

// SetPaused turns the kill switch on or off and returns its new state.
func (c *Client) SetPaused(ctx context.Context, paused bool) (bool, error) {
	var p apitype.Pause
	err := c.do(ctx, http.MethodPost, apitype.PathPause, nil, apitype.Pause{Paused: paused}, &p)
	return p.Paused, err
}

// Approvals lists the held calls, oldest first.
func (c *Client) Approvals(ctx context.Context) ([]apitype.Approval, error) {
	var a []apitype.Approval
	return a, c.do(ctx, http.MethodGet, apitype.PathApprovals, nil, nil, &a)
}

// Answer answers a held call: answer is apitype.AllowOnce,
// AlwaysAllowSite or Deny; by is "window" or "cli". The first answer
// wins: a 409 *Error says the call was already decided.
func (c *Client) Answer(ctx context.Context, id, answer, by string) error {
	return c.do(ctx, http.MethodPost, apitype.PathApprovalAnswer, nil, apitype.AnswerRequest{ID: id, Answer: answer, By: by}, nil)
}

// query is f as query parameters.
func (f filter) query() url.Values {
	q := url.Values{}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	set("client", f.Client)
	set("profile", f.Profile)
	set("outcome", f.Outcome)
	if f.BeforeID > 0 {
		q.Set("before", strconv.FormatInt(f.BeforeID, 10))
	}
	if f.Limit > 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	return q
}

type filter apitype.TimelineFilter

// Timeline returns the recorded calls matching f, newest first.
func (c *Client) Timeline(ctx context.Context, f apitype.TimelineFilter) ([]apitype.TimelineEntry, error) {
	var out []apitype.TimelineEntry
	return out, c.do(ctx, http.MethodGet, apitype.PathTimeline, filter(f).query(), nil, &out)
}

// TimelineFacets returns the values the timeline's filters offer.
func (c *Client) TimelineFacets(ctx context.Context) (apitype.TimelineFacets, error) {
	var out apitype.TimelineFacets
	return out, c.do(ctx, http.MethodGet, apitype.PathTimelineFacets, nil, nil, &out)
}

// ExportTimeline copies the rows matching f (every one when f.Limit is 0),
// oldest first, as JSON Lines to w, and returns how many lines it wrote.
func (c *Client) ExportTimeline(ctx context.Context, w io.Writer, f apitype.TimelineFilter) (int, error) {
	resp, err := c.send(ctx, c.stream, http.MethodGet, apitype.PathTimelineExport, filter(f).query(), nil, "application/jsonl")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	cw := &lineCounter{w: w}
	if _, err := io.Copy(cw, resp.Body); err != nil {
		return cw.n, fmt.Errorf("export the timeline: %w", err)
	}
	return cw.n, nil
}

type lineCounter struct {
	w io.Writer
	n int
}

func (l *lineCounter) Write(p []byte) (int, error) {
	l.n += bytes.Count(p, []byte{'\n'})
	return l.w.Write(p)
}

// Clients lists the MCP clients Tether can connect.
func (c *Client) Clients(ctx context.Context) ([]apitype.Client, error) {
	var out []apitype.Client
	return out, c.do(ctx, http.MethodGet, apitype.PathClients, nil, nil, &out)
}

// Connect writes Tether's entry into an MCP client's config.
func (c *Client) Connect(ctx context.Context, id string) (apitype.ClientOutcome, error) {
	var out apitype.ClientOutcome
	return out, c.do(ctx, http.MethodPost, apitype.PathClientConnect, nil, apitype.ClientRequest{ID: id}, &out)
}

// Disconnect removes Tether's entry from an MCP client's config.
func (c *Client) Disconnect(ctx context.Context, id string) (apitype.ClientOutcome, error) {
	var out apitype.ClientOutcome
	return out, c.do(ctx, http.MethodPost, apitype.PathClientDisconnect, nil, apitype.ClientRequest{ID: id}, &out)
}

// Extension returns the window's Extension page.
func (c *Client) Extension(ctx context.Context) (apitype.ExtensionState, error) {
	var out apitype.ExtensionState
	return out, c.do(ctx, http.MethodGet, apitype.PathExtension, nil, nil, &out)
}

// WriteExtension writes the unpacked extension for the user's Chrome.
func (c *Client) WriteExtension(ctx context.Context) (apitype.ExtensionState, error) {
	var out apitype.ExtensionState
	return out, c.do(ctx, http.MethodPost, apitype.PathExtensionWrite, nil, nil, &out)
}

// RevealExtension opens the extension's folder in the file manager.
func (c *Client) RevealExtension(ctx context.Context) error {
	return c.do(ctx, http.MethodPost, apitype.PathExtensionReveal, nil, nil, nil)
}

// OpenTestBrowser starts `tether browser`.
func (c *Client) OpenTestBrowser(ctx context.Context) error {
	return c.do(ctx, http.MethodPost, apitype.PathTestBrowser, nil, nil, nil)
}

// OpenWindow opens the window: the daemon starts its process or raises
// the running one. A 409 *Error: this daemon has no window (tether serve).
func (c *Client) OpenWindow(ctx context.Context) error {
	return c.do(ctx, http.MethodPost, apitype.PathWindowOpen, nil, nil, nil)
}

// WindowPainted reports the window's first painted frame, sinceStart
// after its process started.
func (c *Client) WindowPainted(ctx context.Context, sinceStart time.Duration) error {
	return c.do(ctx, http.MethodPost, apitype.PathWindowPainted, nil,
		apitype.WindowPainted{SinceStartMs: float64(sinceStart) / float64(time.Millisecond)}, nil)
}

// Shutdown stops the daemon; in-flight MCP calls finish first.
func (c *Client) Shutdown(ctx context.Context) error {
	return c.do(ctx, http.MethodPost, apitype.PathShutdown, nil, nil, nil)
}
