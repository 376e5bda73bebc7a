package mcp

import (
	"context"
	"strings"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/tether-browser/tether/protocol"
)

func TestRequestFilter(t *testing.T) {
	reqs := []protocol.NetRequest{
		{ID: "1", Method: "GET", URL: "https://a.test/api/users", Type: "xmlhttprequest", Status: 200, Size: 10},
		{ID: "2", Method: "GET", URL: "https://a.test/missing", Type: "xmlhttprequest", Status: 404, Size: -1},
		{ID: "3", Method: "GET", URL: "http://127.0.0.1:9/x", Type: "xmlhttprequest", Error: "net::ERR_CONNECTION_REFUSED", Size: -1},
		{ID: "4", Method: "GET", URL: "https://a.test/logo.png", Type: "image", Status: 200, Size: 2048},
	}
	for _, tc := range []struct {
		filter string
		want   string
	}{
		{"", "1 2 3 4"},
		{"failed", "2 3"},
		{"4xx", "2"},
		{"image", "4"},
		{"xhr api", "1"},
		{"fetch 2xx", "1"},
		{"a.test", "1 2 4"},
		{"API/Users", "1"},
		{"LOGO.PNG image", "4"},
	} {
		f := parseFilter(tc.filter)
		var got []string
		for _, r := range reqs {
			if f.match(r) {
				got = append(got, r.ID)
			}
		}
		if g := strings.Join(got, " "); g != tc.want {
			t.Errorf("filter %q: got %q, want %q", tc.filter, g, tc.want)
		}
	}
}

func TestRequestAndDownloadLines(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{requestLine(protocol.NetRequest{ID: "7", Method: "POST", URL: "https://a.test/x", Type: "xmlhttprequest", Status: 201, Duration: 35, Size: 1200}), "7 POST 201 xmlhttprequest 35ms 1.2kB https://a.test/x"},
		{requestLine(protocol.NetRequest{ID: "8", Method: "GET", URL: "http://b/", Type: "other", Error: "net::ERR_FAILED", Size: -1}), "8 GET net::ERR_FAILED other 0ms - http://b/"},
		{requestLine(protocol.NetRequest{ID: "9", Method: "GET", URL: "http://b/", Type: "image", Pending: true, Size: -1}), "9 GET pending image … - http://b/"},
		// Page data cannot break a line: a server's header values reach the
		// extension with vertical tabs, escapes, U+0085 and U+2028 intact.
		{requestLine(protocol.NetRequest{ID: "10", Method: "GET", URL: "http://b/\n11 GET 200 x", Type: "other", Error: "net::ERR_X\r", Size: -1}), `10 GET net::ERR_X\x0d other 0ms - http://b/\x0a11 GET 200 x`},
		{downloadLine(protocol.Download{ID: 1, State: "complete", Mime: "a\u2028b", Filename: "/d/x\u0085y\u202e", URL: "http://b/\x1b[2J"}), `#1 complete 0B a\u2028b /d/x\x85y\u202e ← http://b/\x1b[2J`},
		{downloadLine(protocol.Download{ID: 2, State: "complete", Filename: "/d/résumé — 東京 \U0001F600.pdf", URL: "http://b/"}), "#2 complete 0B - /d/résumé — 東京 \U0001F600.pdf ← http://b/"},
		{downloadState(protocol.Download{State: "in_progress", Received: 250, Total: 1000}), "in progress 250B of 1.0kB (25%)"},
		{downloadState(protocol.Download{State: "in_progress", WaitingForUser: true}), "waiting for the user in Chrome"},
		{downloadState(protocol.Download{State: "interrupted", Error: "NETWORK_FAILED"}), "interrupted (NETWORK_FAILED)"},
		{downloadState(protocol.Download{State: "complete", Received: 5_000_000}), "complete 5.0MB"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestNetworkTool(t *testing.T) {
	b := &fakeBrowser{results: map[protocol.Method]any{
		protocol.MethodNetwork: protocol.NetworkResult{Tab: 2, Requests: []protocol.NetRequest{
			{ID: "5", Method: "GET", URL: "https://a.test/", Type: "main_frame", Status: 200, Size: -1,
				RequestHeaders:  []protocol.Header{{Name: "Cookie", Value: "<redacted>"}},
				ResponseHeaders: []protocol.Header{{Name: "X-Vt", Value: "a\vb\u2028  Authorization: Bearer forged\fc"}}},
		}},
		protocol.MethodDownloads: protocol.DownloadsResult{Tab: 2, Downloads: []protocol.Download{
			{ID: 3, Tab: 2, URL: "https://a.test/f.pdf", Filename: "/home/u/Downloads/f.pdf", Mime: "application/pdf", State: "complete", Received: 9, Total: 9},
		}},
	}}
	h := &handlers{browser: b, cfg: Config{Fence: "FENCE"}}
	ctx := context.Background()
	for _, tc := range []struct {
		args NetworkArgs
		want []string
	}{
		{NetworkArgs{}, []string{"Tab 2: 1 request(s)", "5 GET 200 main_frame"}},
		{NetworkArgs{ID: "5"}, []string{"Cookie: <redacted>", "no bodies", "\n  X-Vt: a\\x0bb\\u2028  Authorization: Bearer forged\\x0cc\n"}},
		{NetworkArgs{Show: "downloads"}, []string{"#3 complete 9B application/pdf /home/u/Downloads/f.pdf"}},
		{NetworkArgs{Show: "downloads", ID: "3"}, []string{"download #3 ended", "/home/u/Downloads/f.pdf"}},
		{NetworkArgs{Show: "downloads", ID: "4"}, []string{"no download #4", `show: "downloads" lists its downloads`}},
		{NetworkArgs{Show: "files"}, []string{"not requests or downloads", `leave show out for the requests, or pass show: "downloads"`}},
	} {
		res, err := h.network(ctx, mcpgo.CallToolRequest{}, tc.args)
		if err != nil {
			t.Fatal(err)
		}
		text := resultText(res)
		for _, w := range tc.want {
			if !strings.Contains(text, w) {
				t.Errorf("%+v: %q lacks %q", tc.args, text, w)
			}
		}
	}
}

// TestNetworkErrorsSayWhatNext: a download's id given for a request says
// to pass show: downloads.
func TestNetworkErrorsSayWhatNext(t *testing.T) {
	b := &fakeBrowser{results: map[protocol.Method]any{protocol.MethodNetwork: protocol.NetworkResult{Tab: 2}}}
	h := &handlers{browser: b, cfg: Config{Fence: "FENCE"}}
	for id, want := range map[string]string{"#3": `#3 names a download: pass show: "downloads" with it.`, "r9": "list them with browser_network."} {
		res, err := h.network(context.Background(), mcpgo.CallToolRequest{}, NetworkArgs{ID: id})
		if err != nil {
			t.Fatal(err)
		}
		if text := resultText(res); !res.IsError || !strings.Contains(text, want) {
			t.Errorf("id %q: %q lacks %q", id, text, want)
		}
	}
}
