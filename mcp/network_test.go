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
				RequestHeaders: []protocol.Header{{Name: "Cookie", Value: "<redacted>"}}},
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
		{NetworkArgs{ID: "5"}, []string{"Cookie: <redacted>", "no bodies"}},
		{NetworkArgs{Show: "downloads"}, []string{"#3 complete 9B application/pdf /home/u/Downloads/f.pdf"}},
		{NetworkArgs{Show: "downloads", ID: "3"}, []string{"download #3 ended", "/home/u/Downloads/f.pdf"}},
		{NetworkArgs{Show: "downloads", ID: "4"}, []string{"no download #4"}},
		{NetworkArgs{Show: "files"}, []string{"not requests or downloads"}},
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
