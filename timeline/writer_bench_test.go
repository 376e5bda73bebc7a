package timeline

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkWriterStores is the writer's cost per row: b.N rows recorded
// in bursts of 16 (calls ending close together, as under load), each
// burst flushed.
func BenchmarkWriterStores(b *testing.B) {
	ctx := context.Background()
	s, err := Open(filepath.Join(b.TempDir(), "timeline.db"), Options{MaxRows: 10000})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	e := Entry{Time: time.Now(), Client: "claude-ai", Profile: "work", Tab: 3, Tool: "browser_click", Args: "ref=e12",
		Class: "interact", Site: "https://example.com", Decision: "allow (default for interact actions)", Duration: time.Millisecond, Outcome: OK, CallID: "0123456789ab"}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if _, err := s.Record(ctx, e); err != nil {
			b.Fatal(err)
		}
		if i%16 == 15 {
			if err := s.Flush(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := s.Flush(ctx); err != nil {
		b.Fatal(err)
	}
}
