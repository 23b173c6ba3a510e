package sim

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/simbench/simbench/internal/simtest"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/trace"
)

// A service that always takes 1 ms, reached with no network delay and never
// queued, answers 97% of the turns; a 5 ms one the other 3%. Most turns
// take exactly 1 ms, so p50 and p95 read as exactly 1.000 ms (not the
// middle or top of a bucket holding 1 ms) and p99 and max as 5.000 ms.
func TestConstantServiceReadsAsItself(t *testing.T) {
	sc := simtest.MustParse(t, `
name = "constant"
duration = "10s"
[workload]
arrival_rate = "100/s"
arrival = "constant"
calls = [ { mix = { fast = 97, slow = 3 }, count = 1 } ]
[services.fast]
latency = { dist = "constant", value = "1ms" }
network_delay = "0s"
[services.slow]
latency = { dist = "constant", value = "5ms" }
network_delay = "0s"
[tools.fast]
service = "fast"
[tools.slow]
service = "slow"
[[strategy]]
name = "open"
`)
	st := runOnly(t, sc).Strategies[0]
	if st.Turns < 900 {
		t.Fatalf("%d turns, want about 1000", st.Turns)
	}
	tests := []struct {
		name      string
		got, want float64
	}{
		{"p50", st.TurnLatencyMs.P50, 1},
		{"p95", st.TurnLatencyMs.P95, 1},
		{"call p95", st.CallLatencyMs.P95, 1},
		{"answer p95", float64(st.AnswerLatencyMs.P95), 1},
		{"p99", st.TurnLatencyMs.P99, 5},
		{"max", st.TurnLatencyMs.Max, 5},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %v ms, want %v", tt.name, tt.got, tt.want)
		}
	}
}

// An M/M/1 queue of 120,000 turns (Poisson arrivals at 100/s, one call a
// turn, exponential service of mean 8 ms, one at a time): every percentile
// the results report is within 0.1% of the exact nearest-rank value of the
// turn latencies, read from the run's trace (a turn is one attempt, from
// its submission to its result).
func TestMM1PercentilesWithinATenthOfAPercent(t *testing.T) {
	sc := simtest.MustParse(t, `
name = "mm1"
duration = "1200s"
[workload]
arrival_rate = "100/s"
calls = [ { tool = "t", count = 1 } ]
[services.s]
latency = { dist = "exponential", mean = "8ms" }
network_delay = "0s"
[tools.t]
service = "s"
[[strategy]]
name = "one-server"
max_in_flight = 1
`)
	path := filepath.Join(t.TempDir(), "mm1.jsonl")
	w, err := trace.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), sc, Options{Trace: w})
	if err != nil {
		w.Abort()
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lat []float64 // ms
	r := trace.NewReader(bytes.NewReader(data), "mm1.jsonl")
	for r.Next() {
		rec := r.Record()
		if rec.Attempt != 1 || rec.Outcome != trace.OutcomeSuccess {
			t.Fatalf("line %d: %+v, want first attempts that succeed", r.Line(), *rec)
		}
		lat = append(lat, (rec.End-rec.Intended)*1000)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	st := res.Strategies[0]
	if len(lat) < 100_000 || int64(len(lat)) != st.Turns {
		t.Fatalf("%d traced turns, %d in the results; want the same ≥ 100,000", len(lat), st.Turns)
	}
	slices.Sort(lat)
	exact := func(q float64) float64 { return lat[int(math.Ceil(q*float64(len(lat))))-1] }
	check := func(name string, got, want float64) {
		t.Helper()
		if rel := math.Abs(got-want) / want; rel > 0.001 {
			t.Errorf("%s = %v ms, exact %v ms: %.3f%% off", name, got, want, 100*rel)
		}
	}
	for _, s := range []struct {
		name string
		sum  results.Summary
	}{{"turn", st.TurnLatencyMs}, {"ok turn", st.OKTurnLatencyMs}, {"call", st.CallLatencyMs}} {
		check(s.name+" p50", s.sum.P50, exact(0.5))
		check(s.name+" p95", s.sum.P95, exact(0.95))
		check(s.name+" p99", s.sum.P99, exact(0.99))
		check(s.name+" max", s.sum.Max, lat[len(lat)-1])
	}
	a := st.AnswerLatencyMs
	check("answer p50", float64(a.P50), exact(0.5))
	check("answer p95", float64(a.P95), exact(0.95))
	check("answer p99", float64(a.P99), exact(0.99))
	t.Logf("p50 %v p95 %v p99 %v ms; exact %v %v %v", st.TurnLatencyMs.P50, st.TurnLatencyMs.P95, st.TurnLatencyMs.P99, exact(0.5), exact(0.95), exact(0.99))
}
