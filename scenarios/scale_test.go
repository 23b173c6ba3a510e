package scenarios

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// chainedRoot returns the decoded tree of a scenario whose turn has n
// groups, each after the one before, and a last one that closes a cycle
// back to the first: what toml.Decode would give, built directly, so that
// the decoder can be measured beyond the file size cap.
func chainedRoot(n int) map[string]any {
	tools := map[string]any{}
	calls := make([]map[string]any, n)
	for i := range n {
		name := fmt.Sprintf("t%d", i)
		tools[name] = map[string]any{"service": "s"}
		calls[i] = map[string]any{"tool": name, "count": int64(0)}
		if i > 0 {
			calls[i]["after"] = []any{fmt.Sprintf("t%d", i-1)}
		}
	}
	calls[0]["after"] = []any{fmt.Sprintf("t%d", n-1)}
	return map[string]any{
		"duration": "1m",
		"services": map[string]any{"s": map[string]any{}},
		"tools":    tools,
		"workload": map[string]any{"sessions": int64(1), "calls": calls},
		"strategy": []map[string]any{{"name": "a"}},
	}
}

// TestChainedGroups decodes 100,000 chained groups (the reproducer took
// over 120 s, a linear tool lookup per reference and a recursive walk per
// link) and checks the one cycle is found and reported on one short line.
// Its time is measured by BenchmarkDecodeChainedGroups.
func TestChainedGroups(t *testing.T) {
	const n = 100_000
	d := newDecoder("chain.toml", nil, nil)
	sc := d.decodeScenario(chainedRoot(n), "chain")
	if len(sc.Tools) != n || len(sc.Workload.Calls) != n {
		t.Fatalf("%d tools, %d groups; want %d of each", len(sc.Tools), len(sc.Workload.Calls), n)
	}
	e := &Error{Problems: d.problems}
	want := "workload.calls[1].after[0]: dependency cycle t0 → t99999 → t99998 → t99997 → … (99992 more) → t4 → t3 → t2 → t1 → t0; calls in a cycle can never start, so remove one of these after entries"
	if len(e.Problems) != 1 || !strings.HasSuffix(e.Error(), want) {
		t.Errorf("problems:\n%.2000s\nwant one: %s", e.Error(), want)
	}
	if sc.Workload.Calls[n-1].After[0] != fmt.Sprintf("t%d", n-2) {
		t.Errorf("last group after %v", sc.Workload.Calls[n-1].After)
	}
}

// BenchmarkDecodeChainedGroups reports the decoder's time per group at two
// sizes: linear decoding gives the same figure for both.
func BenchmarkDecodeChainedGroups(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			root := chainedRoot(n)
			b.ResetTimer()
			for b.Loop() {
				d := newDecoder("chain.toml", nil, nil)
				d.decodeScenario(root, "chain")
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/group")
		})
	}
}

// BenchmarkParseUnknownTools reports the time to load 3,000 references to
// unknown tools among n tools (the reproducer took 55 s at n = 3,000).
func BenchmarkParseUnknownTools(b *testing.B) {
	for _, n := range []int{300, 3000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var src strings.Builder
			src.WriteString("duration = \"1m\"\n[services.s]\n[[strategy]]\nname = \"a\"\n")
			for i := range n {
				fmt.Fprintf(&src, "[tools.tool%04d]\nservice = \"s\"\n", i)
			}
			src.WriteString("[workload]\nsessions = 1\ncalls = [\n")
			for i := range 3000 {
				fmt.Fprintf(&src, "  { tool = \"tool%04dx\" },\n", i)
			}
			src.WriteString("]\n")
			data := []byte(src.String())
			for b.Loop() {
				var e *Error
				if _, err := Parse("unknown.toml", data); !errors.As(err, &e) {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/3000, "ns/reference")
		})
	}
}

// BenchmarkIndexLongLine reports the position index's time per byte on one
// long line, where a column used to cost the whole line so far.
func BenchmarkIndexLongLine(b *testing.B) {
	src := []byte("a = [" + strings.Repeat("1,", MaxFileBytes/2-4) + "]\n")
	for b.Loop() {
		indexPositions(src)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(src)), "ns/byte")
}
