package clients

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/tailscale/hujson"
)

// Property: for any input, Connect then Disconnect keeps every other entry
// semantically equal, and an input that doesn't parse is refused (the writer
// never writes on error: TestRefusesUnparsableFiles checks the bytes on
// disk). The fuzz targets' seed corpus runs in every `go test`;
// `go test -fuzz FuzzJSONConnectDisconnect ./clients` explores further.
// TestGeneratedJSONConfigs feeds the same check with random valid JSONC.

var fuzzEntry = fields{{"command", "/opt/tether/bin/tether"}, {"args", []string{"mcp"}}, {"env", fields{{"TETHER_CONFIG_DIR", "/tmp/t"}}}}

// decodeJSONC decodes HuJSON bytes (BOM allowed) to Go values; ok is false
// for anything encoding/json would not take after standardizing.
func decodeJSONC(b []byte) (any, bool) {
	// hujson.Standardize overwrites comments in its argument: give it a copy.
	std, err := hujson.Standardize(bytes.Clone(bytes.TrimPrefix(b, utf8BOM)))
	if err != nil {
		return nil, false
	}
	var v any
	if json.Unmarshal(std, &v) != nil {
		return nil, false
	}
	return v, true
}

// splitTether returns v without mcpServers.tether (an mcpServers left empty
// counts as absent) and the tether entry.
func splitTether(v any) (rest any, entry any) {
	m, ok := v.(map[string]any)
	if !ok {
		return v, nil
	}
	out := map[string]any{}
	for k, x := range m {
		out[k] = x
	}
	if ms, ok := m["mcpServers"].(map[string]any); ok {
		r := map[string]any{}
		for k, x := range ms {
			if k == ServerName {
				entry = x
			} else {
				r[k] = x
			}
		}
		if len(r) == 0 {
			delete(out, "mcpServers")
		} else {
			out["mcpServers"] = r
		}
	}
	return out, entry
}

func checkJSONRoundTrip(t *testing.T, in []byte) {
	t.Helper()
	c, _ := Lookup("cursor")
	out, _, err := edit(c, "mcp.json", in, fuzzEntry)
	before, ok := decodeJSONC(in)
	blank := len(bytes.TrimSpace(bytes.TrimPrefix(in, utf8BOM))) == 0
	if _, perr := hujson.Parse(bytes.TrimPrefix(in, utf8BOM)); perr != nil && !blank {
		if !errors.Is(err, ErrRefused) {
			t.Fatalf("unparsable input %q: err %v, want ErrRefused", in, err)
		}
		return
	}
	if err != nil {
		if !errors.Is(err, ErrRefused) {
			t.Fatalf("input %q: err %v is not a refusal", in, err)
		}
		return // top level not an object, mcpServers not an object, duplicate tether
	}
	if !ok && !blank {
		return // parses as HuJSON, but not as Go values (e.g. 1e999): nothing to compare
	}
	after, ok := decodeJSONC(out)
	if !ok {
		t.Fatalf("connect produced invalid JSON from %q:\n%s", in, out)
	}
	restBefore, oldEntry := splitTether(before)
	if blank {
		restBefore = map[string]any{}
	}
	restAfter, entry := splitTether(after)
	if !reflect.DeepEqual(restBefore, restAfter) {
		t.Fatalf("connect changed other entries:\n%s\n→\n%s", in, out)
	}
	want := plain(fuzzEntry).(map[string]any)
	if old, ok := oldEntry.(map[string]any); ok {
		for k, v := range old {
			if _, owned := want[k]; !owned && !contains(ownedKeys, k) {
				want[k] = v
			}
		}
	}
	if !reflect.DeepEqual(entry, any(want)) {
		t.Fatalf("entry %v, want %v in\n%s", entry, want, out)
	}
	// Idempotent.
	if again, ch, err := edit(c, "mcp.json", out, fuzzEntry); err != nil || ch != Unchanged || !bytes.Equal(again, out) {
		t.Fatalf("second connect: %v %v\n%s", ch, err, again)
	}
	d, err := parseJSONDoc("mcp.json", out)
	if err != nil {
		t.Fatal(err)
	}
	if ch, err := d.disconnect("mcp.json", "mcpServers"); err != nil || ch != Removed {
		t.Fatalf("disconnect: %v %v", ch, err)
	}
	back := d.pack()
	final, ok := decodeJSONC(back)
	if !ok {
		t.Fatalf("disconnect produced invalid JSON:\n%s", back)
	}
	if rest, e := splitTether(final); e != nil || !reflect.DeepEqual(rest, restBefore) {
		t.Fatalf("connect+disconnect changed other entries:\n%s\n→\n%s", in, back)
	}
	// Without an entry of ours before, a non-empty servers object comes back
	// byte for byte.
	bm, _ := before.(map[string]any)
	if ms, _ := bm["mcpServers"].(map[string]any); oldEntry == nil && len(ms) > 0 && !bytes.Equal(back, in) {
		t.Fatalf("connect+disconnect changed bytes:\n%q\n→\n%q", in, back)
	}
}

func contains(s []string, x string) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

func FuzzJSONConnectDisconnect(f *testing.F) {
	for _, tc := range jsonCases {
		if tc.in != nil {
			f.Add([]byte(strings.ReplaceAll(*tc.in, "KEY", "mcpServers")))
		}
	}
	for _, s := range []string{
		`{"mcpServers": {"tether": 3}}`,
		`{"mcpServers": {"a": 1,}, "b": [1,],}`,
		`{"mcpServers": {"a": 1 /* c */}/* d */}`,
		"{\"mcpServers\": {\"a\": 1 // c\n}}",
		`{"mcpServers": {"a": 1}`,
		`{"mcpServers": {"a": 1}}}`,
		`[]`, `"x"`, `{"mcpServers": null}`, `/* only a comment */`,
		"\ufeff\ufeff{}", `{"a": 1e999}`, `{"mcpServers": {"tether": {"disabled": true, "url": "x"}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(checkJSONRoundTrip)
}

// TestGeneratedJSONConfigs: 500 random valid configs with random formatting
// (indent, CRLF, BOM, comments, trailing commas, one-line objects).
func TestGeneratedJSONConfigs(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 47615))
	for i := range 500 {
		in := genConfig(r)
		t.Run(fmt.Sprint(i), func(t *testing.T) { checkJSONRoundTrip(t, []byte(in)) })
	}
}

type gen struct {
	r       *rand.Rand
	nl      string
	unit    string
	comment bool
	trail   bool
	oneLine bool
}

func genConfig(r *rand.Rand) string {
	g := gen{r: r, nl: pick(r, "\n", "\r\n"), unit: pick(r, "  ", "    ", "\t"), comment: r.IntN(2) == 0, trail: r.IntN(3) == 0, oneLine: r.IntN(5) == 0}
	var members []string
	for i := range r.IntN(4) {
		members = append(members, fmt.Sprintf("%q: %s", fmt.Sprintf("k%d", i), g.value(2)))
	}
	if r.IntN(6) > 0 {
		var servers []string
		for i := range r.IntN(4) {
			name := pick(r, "github", "files", "my-server", "tether-like", "x y", "ünï")
			servers = append(servers, fmt.Sprintf("%q: %s", fmt.Sprintf("%s%d", name, i), g.server()))
		}
		if r.IntN(5) == 0 {
			servers = append(servers, `"tether": {"command": "/old/tether", "args": ["mcp"], "disabled": false}`)
		}
		r.Shuffle(len(servers), func(i, j int) { servers[i], servers[j] = servers[j], servers[i] })
		members = append(members, `"mcpServers": `+g.object(servers, 1))
	}
	r.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
	out := g.object(members, 0) + pick(r, "", g.nl)
	if g.comment && r.IntN(2) == 0 {
		out = "// settings" + g.nl + out
	}
	if r.IntN(8) == 0 {
		out = "\ufeff" + out
	}
	return out
}

func (g gen) object(members []string, depth int) string {
	if len(members) == 0 {
		return pick(g.r, "{}", "{ }", "{"+g.nl+strings.Repeat(g.unit, depth)+"}")
	}
	if g.oneLine {
		s := "{" + strings.Join(members, ", ")
		if g.trail {
			s += ","
		}
		return s + "}"
	}
	ind := strings.Repeat(g.unit, depth+1)
	var b strings.Builder
	b.WriteString("{")
	for i, m := range members {
		if g.comment && g.r.IntN(4) == 0 {
			b.WriteString(g.nl + ind + "// about " + fmt.Sprint(i))
		}
		b.WriteString(g.nl + ind + m)
		if i < len(members)-1 || g.trail {
			b.WriteString(",")
		}
		if g.comment && g.r.IntN(4) == 0 {
			b.WriteString(" /* note */")
		}
	}
	if g.comment && g.r.IntN(4) == 0 {
		b.WriteString(g.nl + ind + "// end")
	}
	return b.String() + g.nl + strings.Repeat(g.unit, depth) + "}"
}

func (g gen) server() string {
	return fmt.Sprintf(`{"command": %q, "args": [%q], "env": {"A": %q}}`, pick(g.r, "npx", `C:\x\y.exe`, "/usr/bin/z"), pick(g.r, "-y", "mcp", `"quoted"`), pick(g.r, "1", "", "ü"))
}

func (g gen) value(depth int) string {
	switch g.r.IntN(6) {
	case 0:
		return fmt.Sprint(g.r.IntN(1000))
	case 1:
		return pick(g.r, "true", "false", "null", "1.50", "-0", "1e3")
	case 2:
		return fmt.Sprintf("%q", pick(g.r, "", "a\"b", "ü", `\`, "line\nbreak"))
	case 3:
		return "[1, \"two\", {\"three\": 3}]"
	default:
		if depth > 3 {
			return "{}"
		}
		return g.object([]string{`"x": ` + g.value(depth+1)}, depth)
	}
}

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

// FuzzTOMLConnectDisconnect: for Codex's TOML, a successful connect keeps
// every other setting equal and connect+disconnect gives the input's
// settings back; anything else is a refusal (ErrRefused), never a broken file.
func FuzzTOMLConnectDisconnect(f *testing.F) {
	for _, tc := range tomlCases {
		if tc.in != nil {
			f.Add([]byte(*tc.in))
		}
	}
	for _, s := range []string{
		"a = \"\"\"\n[mcp_servers.tether]\n\"\"\"\n",
		"[mcp_servers]\ntether.command = \"x\"\n",
		"[mcp_servers.tether.env]\nA = \"1\"\n",
		"[mcp_servers.tether]\nargs = [\n\"a\", # c\n]\n[x]\ny = 1",
		"[[mcp_servers.tether]]\n",
		"[ mcp_servers . \"tether\" ]\ncommand = 'x'\n",
		"x = 1\n[mcp_servers.tether]\ncommand = \"/old\"",
		"bad = \n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		c, _ := Lookup("codex")
		before, perr := parseTOML("config.toml", bytes.TrimPrefix(in, utf8BOM))
		out, _, err := edit(c, "config.toml", in, fuzzEntry)
		if perr != nil || err != nil {
			if !errors.Is(err, ErrRefused) {
				t.Fatalf("input %q: parse %v, connect %v; want a refusal", in, perr, err)
			}
			return
		}
		after, err := parseTOML("config.toml", bytes.TrimPrefix(out, utf8BOM))
		if err != nil || !reflect.DeepEqual(withoutTether(before), withoutTether(after)) {
			t.Fatalf("connect broke %q:\n%s (%v)", in, out, err)
		}
		back, ch, err := tomlDisconnect("config.toml", out)
		if err != nil || ch != Removed {
			t.Fatalf("disconnect after connect of %q: %v %v\n%s", in, ch, err, out)
		}
		final, err := parseTOML("config.toml", bytes.TrimPrefix(back, utf8BOM))
		if err != nil || !reflect.DeepEqual(withoutTether(before), final) && !reflect.DeepEqual(withoutTether(before), withoutTether(final)) || tomlTether(final) != nil {
			t.Fatalf("connect+disconnect changed %q:\n%s", in, back)
		}
	})
}
