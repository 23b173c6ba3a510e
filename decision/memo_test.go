package decision

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sim"
)

// A strategy swept again at a pace it was swept at before (as across
// does when no tuning's choice is shown no worse than every configuration
// measured) simulates nothing the second time with the memo, and every run
// again without it; both sweeps are the same.
func TestMemoSimulatesNoRunTwice(t *testing.T) {
	sc, err := scenarios.Parse("crowd.toml", []byte(crowdScenario))
	if err != nil {
		t.Fatal(err)
	}
	for _, noMemo := range []bool{false, true} {
		o := Options{Rule: Rule{MaxShare: DefaultMaxRateLimitedShare}, Parallel: 1, NoLoad: true, noMemo: noMemo}
		runs := 0
		o.ran = func(scenarios.Strategy, int, results.StrategyResult) { runs++ }
		name, o, opts, err := setUp(sc, o)
		if err != nil {
			t.Fatal(err)
		}
		first, err := tuneAt(context.Background(), sc, sc.Strategy(name), 0.9, 0, o, opts)
		if err != nil {
			t.Fatal(err)
		}
		once := runs
		again, err := tuneAt(context.Background(), sc, sc.Strategy(name), 0.9, 0, o, opts)
		if err != nil {
			t.Fatal(err)
		}
		if once == 0 {
			t.Fatal("the first sweep simulated nothing")
		}
		switch {
		case !noMemo && runs != once:
			t.Errorf("with the memo the second sweep simulated %d runs, the first %d", runs-once, once)
		case noMemo && runs != 2*once:
			t.Errorf("without the memo the second sweep simulated %d runs, the first %d", runs-once, once)
		}
		if !reflect.DeepEqual(first.sw.row, again.sw.row) {
			t.Errorf("memo %v: the second sweep differs from the first:\n%+v\n%+v", !noMemo, first.sw.row, again.sw.row)
		}
	}
}

// simKey leaves out only what no run reads: two strategies with one key
// run the same, figure for figure, and a name that seeds jitter is kept.
func TestSimKeyRunsAlike(t *testing.T) {
	src := `name = "keys"
seed = 7
duration = "30s"
[workload]
sessions = 12
think = { dist = "uniform", min = "100ms", max = "600ms" }
calls = [ { tool = "t", count = 3 } ]
[services.s]
rpm = 300
latency = { dist = "lognormal", p50 = "100ms", p95 = "400ms" }
headers = "standard"
[tools.t]
service = "s"
[[strategy]]
name = "plain"
description = "one"
max_in_flight = 6
retry = { backoff = "exponential", base = "100ms", cap = "2s", attempts = 4 }
[[strategy]]
name = "plain-too"
description = "two"
max_in_flight = 6
recommend = true
retry = { backoff = "exponential", base = "100ms", cap = "2s", attempts = 4 }
[[strategy]]
name = "jitter"
max_in_flight = 6
retry = { backoff = "full-jitter", base = "100ms", cap = "2s", attempts = 4, honor_retry_after = false }
[[strategy]]
name = "jitter-too"
max_in_flight = 6
retry = { backoff = "full-jitter", base = "100ms", cap = "2s", attempts = 4, honor_retry_after = false }
`
	sc, err := scenarios.Parse("keys.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	sc.Strategy("plain-too").Headroom = 0.5 // read only with a token bucket, which it has not
	st := func(name string) scenarios.Strategy { return *sc.Strategy(name) }
	if simKey(st("plain")) != simKey(st("plain-too")) {
		t.Fatalf("plain and plain-too differ only in what no run reads, yet their keys differ:\n%s\n%s", simKey(st("plain")), simKey(st("plain-too")))
	}
	if simKey(st("jitter")) == simKey(st("jitter-too")) {
		t.Fatal("jitter and jitter-too draw from streams of their own names, yet share a key")
	}
	res, err := sim.Run(context.Background(), sc, sim.Options{Parallel: 1})
	if err != nil {
		t.Fatal(err)
	}
	figures := func(i int) string {
		r := res.Strategies[i]
		r.Name = ""
		b, _ := json.Marshal(r)
		return string(b)
	}
	if figures(0) != figures(1) {
		t.Error("plain and plain-too share a key but run differently")
	}
	if res.Strategies[2].RateLimited == 0 {
		t.Fatal("jitter never met a 429, so never retried: the test compares nothing")
	}
	if figures(2) == figures(3) {
		t.Error("jitter and jitter-too run alike: the names' streams gave the same draws")
	}
}
