package protocol

import (
	"encoding/json"
	"strings"
	"testing"
)

// The extra decode conn.call does for each result: a 40 000-character
// snapshot and a 5 MB page for browser_read.
func BenchmarkDecodeResult(b *testing.B) {
	for _, tc := range []struct {
		name   string
		method Method
		v      any
	}{
		{"snapshot40k", MethodSnapshot, PageResult{Tab: 1, URL: "https://example.com/", Snapshot: strings.Repeat("- link \"x\" [ref=e1]\n", 2000)}},
		{"read5MB", MethodRead, ReadResult{Tab: 1, HTML: strings.Repeat("<p>hello &amp; \"world\"</p>\n", 5<<20/28)}},
	} {
		raw, _ := json.Marshal(tc.v)
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				if _, err := DecodeResult(tc.method, raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
