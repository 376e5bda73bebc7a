package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tether-browser/tether/apitype"
	"github.com/tether-browser/tether/config"
	"github.com/tether-browser/tether/localclient/localclienttest"
)

func TestApprovalsAnswersByIDPrefix(t *testing.T) {
	f := localclienttest.New(t)
	t.Setenv(config.EnvConfigDir, f.Paths.Dir)
	deadline := time.Now().Add(time.Minute).UnixMilli()
	f.SetAnswer("GET", apitype.PathApprovals, http.StatusOK, []apitype.Approval{
		{ID: "ab12cd34ef56", Tool: "browser_file_upload", Client: "claude-code", Sites: []string{"https://forms.example.com"}, DeadlineMs: deadline},
		{ID: "ab99cd34ef56", Tool: "browser_evaluate", DeadlineMs: deadline},
		{ID: "ab99ee000000", Tool: "browser_evaluate", DeadlineMs: deadline},
	})
	ctx := context.Background()
	if err := runApprovals(ctx, []string{"allow", "ab"}); err == nil || !strings.Contains(err.Error(), "at least 4 characters") {
		t.Fatalf("a 2-character prefix: %v", err)
	}
	if err := runApprovals(ctx, []string{"allow", "ab99"}); err == nil || !strings.Contains(err.Error(), "give more of the id") {
		t.Fatalf("an ambiguous prefix: %v", err)
	}
	if err := runApprovals(ctx, []string{"allow", "ab9"}); err == nil || !strings.Contains(err.Error(), "at least 4 characters") {
		t.Fatalf("a 3-character prefix matching one call: %v", err)
	}
	if err := runApprovals(ctx, []string{"allow", ""}); err == nil || !strings.Contains(err.Error(), "at least 4 characters") {
		t.Fatalf("an empty id, which every call starts with: %v", err)
	}
	if err := runApprovals(ctx, []string{"allow", "abcd"}); err == nil || !strings.Contains(err.Error(), "answered or timed out") {
		t.Fatalf("a prefix matching none: %v", err)
	}
	if err := runApprovals(ctx, []string{"allow", "zzzz"}); err == nil || !strings.Contains(err.Error(), "answered or timed out") {
		t.Fatalf("an unknown id: %v", err)
	}
	if err := runApprovals(ctx, []string{"allow", "ab12x"}); err == nil || !strings.Contains(err.Error(), "answered or timed out") {
		t.Fatalf("a 5-character non-prefix: %v", err)
	}
	if err := runApprovals(ctx, []string{"sometimes", "ab12"}); err == nil || !strings.Contains(err.Error(), "unknown answer") {
		t.Fatalf("an unknown answer: %v", err)
	}
	if n := len(f.Requests()); n != 0 {
		t.Fatalf("refused commands sent %d requests", n)
	}
	if err := runApprovals(ctx, []string{"always", "ab12"}); err != nil {
		t.Fatal(err)
	}
	reqs := f.Requests()
	var a apitype.AnswerRequest
	if len(reqs) != 1 || reqs[0].Path != apitype.PathApprovalAnswer || json.Unmarshal([]byte(reqs[0].Body), &a) != nil ||
		a != (apitype.AnswerRequest{ID: "ab12cd34ef56", Answer: apitype.AlwaysAllowSite, By: "cli"}) {
		t.Fatalf("the answer sent: %+v (%+v)", reqs, a)
	}
	f.SetAnswer("POST", apitype.PathApprovalAnswer, http.StatusConflict, apitype.Error{Error: "already answered"})
	if err := runApprovals(ctx, []string{"deny", "ab99c"}); err == nil || !strings.Contains(err.Error(), "already answered or timed out") {
		t.Fatalf("a call decided meanwhile: %v", err)
	}
}
