package mcp

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/tether-browser/tether/policy"
	"github.com/tether-browser/tether/protocol"
)

// NetworkArgs are browser_network's arguments.
type NetworkArgs struct {
	Target
	Show   string `json:"show,omitempty"`
	ID     string `json:"id,omitempty" jsonschema:"Request: headers; download: wait"`
	Filter string `json:"filter,omitempty" jsonschema:"URL part, type (image, xhr), 4xx or failed"`
}

// Waiting for a download: how long at most, and how often to look.
var (
	downloadWaitMax = 60 * time.Second
	downloadPoll    = 500 * time.Millisecond
)

// requestLines is how many requests one result lists at most (the newest).
const requestLines = 200

func (h *handlers) networkTool() Tool {
	return Tool{
		Def: mcpgo.NewTool("browser_network",
			mcpgo.WithDescription("A tab's requests since it was shared, or show: downloads. No bodies (needs debugger). Untrusted."),
			mcpgo.WithInputSchema[NetworkArgs](),
			readOnly(),
		),
		Class:   policy.Read,
		handler: mcpgo.NewTypedToolHandler(h.network),
	}
}

func (h *handlers) network(ctx context.Context, req mcpgo.CallToolRequest, args NetworkArgs) (*mcpgo.CallToolResult, error) {
	switch args.Show {
	case "", "requests":
		if args.ID != "" {
			return h.requestHeaders(ctx, args)
		}
		return h.requests(ctx, args)
	case "downloads":
		if args.ID != "" {
			return h.waitDownload(ctx, req, args)
		}
		var res protocol.DownloadsResult
		if err := h.browser.Call(ctx, args.Profile, protocol.MethodDownloads, &protocol.TabParams{Tab: args.Tab}, &res, h.cfg.ActionTimeout); err != nil {
			return browserError("browser_network downloads", err), nil
		}
		if len(res.Downloads) == 0 {
			return mcpgo.NewToolResultText(fmt.Sprintf("Tab %d: no downloads. %s", res.Tab, attributionNote)), nil
		}
		lines := make([]string, len(res.Downloads))
		for i, d := range res.Downloads {
			lines[i] = downloadLine(d)
		}
		return mcpgo.NewToolResultText(fmt.Sprintf("Tab %d: %d download(s), oldest first; names and URLs are untrusted page data.\n%s",
			res.Tab, len(res.Downloads), h.fenced(strings.Join(lines, "\n")))), nil
	}
	return mcpgo.NewToolResultError(fmt.Sprintf("show %q is not requests or downloads: leave show out for the requests, or pass show: \"downloads\".", args.Show)), nil
}

// attributionNote says which downloads a tab lists.
const attributionNote = "A download is the tab's when its request was seen in the tab, or otherwise (blob:, data:, <a download>) when it came from the tab's origin within 10 s of a tool action; others are not shown."

// requestFilter is browser_network's filter: every word must match.
type requestFilter struct {
	url    []string
	types  []string
	class  []int // status classes: 4 for 4xx
	failed bool
}

var statusClass = regexp.MustCompile(`^[1-5]xx$`)

// requestTypes are webRequest's resource types, and the aliases agents use.
var requestTypes = map[string]string{
	"xhr": "xmlhttprequest", "fetch": "xmlhttprequest", "document": "main_frame", "frame": "sub_frame", "css": "stylesheet",
	"main_frame": "main_frame", "sub_frame": "sub_frame", "stylesheet": "stylesheet", "script": "script", "image": "image",
	"font": "font", "object": "object", "xmlhttprequest": "xmlhttprequest", "ping": "ping", "csp_report": "csp_report",
	"media": "media", "websocket": "websocket", "webtransport": "webtransport", "webbundle": "webbundle", "other": "other",
}

func parseFilter(s string) requestFilter {
	var f requestFilter
	for _, w := range strings.Fields(s) {
		lw := strings.ToLower(w)
		switch {
		case lw == "failed" || lw == "failures":
			f.failed = true
		case statusClass.MatchString(lw):
			f.class = append(f.class, int(lw[0]-'0'))
		case requestTypes[lw] != "":
			f.types = append(f.types, requestTypes[lw])
		default:
			f.url = append(f.url, lw) // matched in any letter case: an agent's "API" finds /api/
		}
	}
	return f
}

// failedRequest: a network error, or an HTTP status of 400 or more.
func failedRequest(r protocol.NetRequest) bool { return r.Error != "" || r.Status >= 400 }

func (f requestFilter) match(r protocol.NetRequest) bool {
	if f.failed && !failedRequest(r) {
		return false
	}
	url := strings.ToLower(r.URL)
	for _, u := range f.url {
		if !strings.Contains(url, u) {
			return false
		}
	}
	if len(f.types) > 0 && !slices.Contains(f.types, r.Type) {
		return false
	}
	if len(f.class) > 0 {
		ok := false
		for _, c := range f.class {
			ok = ok || r.Status/100 == c
		}
		if !ok {
			return false
		}
	}
	return true
}

func (h *handlers) requests(ctx context.Context, args NetworkArgs) (*mcpgo.CallToolResult, error) {
	var res protocol.NetworkResult
	if err := h.browser.Call(ctx, args.Profile, protocol.MethodNetwork, &protocol.NetworkParams{TabParams: protocol.TabParams{Tab: args.Tab}}, &res, h.cfg.ActionTimeout); err != nil {
		return browserError("browser_network", err), nil
	}
	f := parseFilter(args.Filter)
	var lines []string
	for _, r := range res.Requests {
		if f.match(r) {
			lines = append(lines, requestLine(r))
		}
	}
	lead := fmt.Sprintf("Tab %d: %d request(s)", res.Tab, len(lines))
	if args.Filter != "" {
		lead += fmt.Sprintf(" matching %q of %d", args.Filter, len(res.Requests))
	}
	if res.Dropped > 0 {
		lead += fmt.Sprintf(" (%d older ones dropped)", res.Dropped)
	}
	if len(lines) == 0 {
		return mcpgo.NewToolResultText(lead + " since it was shared."), nil
	}
	if n := len(lines) - requestLines; n > 0 {
		lines = lines[n:]
		lead += fmt.Sprintf("; the newest %d shown (filter to see others)", requestLines)
	}
	return mcpgo.NewToolResultText(lead + ", oldest first: id method status type time size URL. Pass id for headers. URLs are untrusted page data.\n" +
		h.fenced(strings.Join(lines, "\n"))), nil
}

// requestLine is one request: "r12 GET 404 xmlhttprequest 35ms 1.2kB https://…".
func requestLine(r protocol.NetRequest) string {
	status := strconv.Itoa(r.Status)
	switch {
	case r.Error != "":
		status = r.Error
		if r.Status != 0 {
			status = fmt.Sprintf("%d %s", r.Status, r.Error)
		}
	case r.Pending && r.Status == 0:
		status = "pending"
	}
	took := "…"
	if !r.Pending {
		took = fmt.Sprintf("%dms", r.Duration)
	}
	size := "-"
	if r.Size >= 0 {
		size = ByteSize(r.Size)
	}
	line := OneLine(fmt.Sprintf("%s %s %s %s %s %s %s", r.ID, r.Method, status, r.Type, took, size, r.URL))
	if r.FromCache {
		line += " (cache)"
	}
	return line
}

// ByteSize is n bytes for people: 512B, 1.2kB, 3.4MB.
func ByteSize(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%dB", n)
	case n < 1_000_000:
		return fmt.Sprintf("%.1fkB", float64(n)/1e3)
	case n < 1_000_000_000:
		return fmt.Sprintf("%.1fMB", float64(n)/1e6)
	}
	return fmt.Sprintf("%.1fGB", float64(n)/1e9)
}

func (h *handlers) requestHeaders(ctx context.Context, args NetworkArgs) (*mcpgo.CallToolResult, error) {
	var res protocol.NetworkResult
	p := &protocol.NetworkParams{TabParams: protocol.TabParams{Tab: args.Tab}, ID: args.ID}
	if err := h.browser.Call(ctx, args.Profile, protocol.MethodNetwork, p, &res, h.cfg.ActionTimeout); err != nil {
		return browserError("browser_network", err), nil
	}
	if len(res.Requests) == 0 {
		hint := "list them with browser_network."
		if strings.HasPrefix(args.ID, "#") {
			hint = "#" + strings.TrimPrefix(args.ID, "#") + " names a download: pass show: \"downloads\" with it."
		}
		return mcpgo.NewToolResultError(fmt.Sprintf("Tab %d has no request %q (the newest 500 are kept); %s", res.Tab, args.ID, hint)), nil
	}
	r := res.Requests[0]
	var b strings.Builder
	b.WriteString(requestLine(r))
	if r.Initiator != "" {
		b.WriteString("\ninitiator: " + OneLine(r.Initiator))
	}
	for _, side := range []struct {
		name string
		hs   []protocol.Header
	}{{"request headers", r.RequestHeaders}, {"response headers", r.ResponseHeaders}} {
		fmt.Fprintf(&b, "\n%s:", side.name)
		if len(side.hs) == 0 {
			b.WriteString(" none seen")
		}
		for _, hd := range side.hs {
			fmt.Fprintf(&b, "\n  %s: %s", OneLine(hd.Name), OneLine(hd.Value))
		}
	}
	return mcpgo.NewToolResultText(fmt.Sprintf("Tab %d, request %s. Cookie, Set-Cookie, Authorization and Proxy-Authorization are always <redacted>; no bodies; a WebSocket shows its handshake only. Untrusted page data.\n%s",
		res.Tab, r.ID, h.fenced(b.String()))), nil
}

// downloadLine is one download: "#3 complete 12.3kB application/pdf /path ← url".
func downloadLine(d protocol.Download) string {
	return OneLine(fmt.Sprintf("#%d %s %s %s ← %s", d.ID, downloadState(d), orDash(d.Mime), orDash(d.Filename), d.URL))
}

// OneLine keeps page data on its line: control characters (a newline, a
// vertical tab, an escape, U+0085), the Unicode line and paragraph
// separators and bidirectional formatting characters, which a server may
// put in a header value and which some readers take as a line break (or
// reorder a line by), are written as escapes (\x0b, \u2028). A header or
// request line cannot then forge another.
func OneLine(s string) string {
	odd := func(r rune) bool {
		return unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Bidi_Control, r)
	}
	if !strings.ContainsFunc(s, odd) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case !odd(r):
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// downloadState says where a download stands, with its size or progress.
func downloadState(d protocol.Download) string {
	switch {
	case d.State == "complete":
		return "complete " + ByteSize(d.Received)
	case d.State == "interrupted":
		return "interrupted (" + orDash(d.Error) + ")"
	case d.WaitingForUser:
		return "waiting for the user in Chrome"
	}
	s := "in progress " + ByteSize(d.Received)
	if d.Total > 0 {
		s += fmt.Sprintf(" of %s (%d%%)", ByteSize(d.Total), d.Received*100/d.Total)
	}
	if d.Paused {
		s += ", paused"
	}
	return s
}

// waitDownload waits (downloadWaitMax at most) for download args.ID of the
// tab to end, sending progress while it runs; it returns early when Chrome
// waits for the user.
func (h *handlers) waitDownload(ctx context.Context, req mcpgo.CallToolRequest, args NetworkArgs) (*mcpgo.CallToolResult, error) {
	id, err := strconv.Atoi(strings.TrimPrefix(args.ID, "#"))
	if err != nil || id <= 0 {
		return mcpgo.NewToolResultError(fmt.Sprintf("id %q is not a download id (the number after # in show: downloads)", args.ID)), nil
	}
	progress := progressFunc(ctx, req)
	deadline := time.Now().Add(downloadWaitMax)
	var userSince time.Time
	for {
		var res protocol.DownloadsResult
		if err := h.browser.Call(ctx, args.Profile, protocol.MethodDownloads, &protocol.TabParams{Tab: args.Tab}, &res, h.cfg.ActionTimeout); err != nil {
			return browserError("browser_network downloads", err), nil
		}
		var d *protocol.Download
		for i := range res.Downloads {
			if res.Downloads[i].ID == id {
				d = &res.Downloads[i]
			}
		}
		if d == nil {
			return mcpgo.NewToolResultError(fmt.Sprintf("Tab %d has no download #%d; browser_network show: \"downloads\" lists its downloads. %s", res.Tab, id, attributionNote)), nil
		}
		line := func(lead string) *mcpgo.CallToolResult {
			return mcpgo.NewToolResultText(fmt.Sprintf("Tab %d: %s Names and URLs are untrusted page data.\n%s", res.Tab, lead, h.fenced(downloadLine(*d))))
		}
		switch {
		case d.State != "in_progress":
			return line("download #" + strconv.Itoa(id) + " ended."), nil
		case d.WaitingForUser:
			// Chrome names the file only after its save dialog: a moment without one is normal.
			if userSince.IsZero() {
				userSince = time.Now()
			} else if time.Since(userSince) >= time.Second {
				return line("waiting for the user in Chrome (where to save it, or whether to keep a flagged file); wait again once they answered."), nil
			}
		default:
			userSince = time.Time{}
		}
		if progress != nil {
			progress(downloadState(*d))
		}
		if time.Now().Add(downloadPoll).After(deadline) {
			return line(fmt.Sprintf("download #%d still runs after %s; wait again to keep waiting.", id, downloadWaitMax)), nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(downloadPoll):
		}
	}
}
