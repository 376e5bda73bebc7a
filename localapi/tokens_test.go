package localapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/tether-browser/tether/apitype"
	"github.com/tether-browser/tether/config"
	"github.com/tether-browser/tether/mcptoken"
)

// The tokens routes issue, list and revoke named tokens in the daemon's
// store: a revoked token is refused at once.
func TestTokenRoutes(t *testing.T) {
	st, err := mcptoken.Open(config.Paths{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, func(c *Config) { c.Tokens = st })
	code, body := f.do(t, "POST", apitype.PathTokenAdd, `{"name": "ci-runner"}`, nil)
	var issued apitype.IssuedToken
	if code != http.StatusOK || json.Unmarshal([]byte(body), &issued) != nil || issued.Name != "ci-runner" || !strings.HasPrefix(issued.Secret, mcptoken.Prefix) || issued.CreatedMs == 0 {
		t.Fatalf("add: %d %s", code, body)
	}
	if n, ok := st.Lookup(issued.Secret); !ok || n != "ci-runner" {
		t.Fatalf("the issued token is not the store's: %q %v", n, ok)
	}
	for _, tc := range []struct {
		body string
		want int
	}{
		{`{"name": "ci-runner"}`, http.StatusConflict},
		{`{"name": "Bad Name"}`, http.StatusBadRequest},
		{`{}`, http.StatusBadRequest},
	} {
		if code, body := f.do(t, "POST", apitype.PathTokenAdd, tc.body, nil); code != tc.want {
			t.Errorf("add %s: %d %s; want %d", tc.body, code, body, tc.want)
		}
	}
	code, body = f.do(t, "GET", apitype.PathTokens, "", nil)
	var list []apitype.Token
	if code != http.StatusOK || json.Unmarshal([]byte(body), &list) != nil || len(list) != 1 || list[0].Name != "ci-runner" || list[0].LastUsedMs == 0 {
		t.Fatalf("list: %d %s", code, body)
	}
	if strings.Contains(body, issued.Secret) {
		t.Fatal("the list shows the secret")
	}
	if code, body := f.do(t, "POST", apitype.PathTokenRevoke, `{"name": "ci-runner"}`, nil); code != http.StatusNoContent {
		t.Fatalf("revoke: %d %s", code, body)
	}
	if _, ok := st.Lookup(issued.Secret); ok {
		t.Fatal("a revoked token is accepted")
	}
	if code, body := f.do(t, "POST", apitype.PathTokenRevoke, `{"name": "ci-runner"}`, nil); code != http.StatusNotFound || !strings.Contains(body, "tether token list") {
		t.Errorf("revoke again: %d %s; want 404", code, body)
	}
}
