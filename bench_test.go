package main

import (
	"context"
	"testing"

	"github.com/simbench/simbench/gate"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sim"
)

// BenchmarkScenario runs every built-in scenario × strategy in virtual time
// (BenchmarkScenario/tier3/bounded-64) and reports the run's figures. The
// figures are deterministic — the same code, scenario and seed give the
// same numbers — so `simbench gate` compares them exactly; ns/op and
// allocs/op measure the simulator itself and are noisy.
func BenchmarkScenario(b *testing.B) {
	for _, info := range scenarios.List() {
		sc, err := scenarios.Builtin(info.Name)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(info.Name, func(b *testing.B) {
			for _, st := range sc.Strategies {
				b.Run(st.Name, func(b *testing.B) {
					b.ReportAllocs()
					var res *results.Results
					for i := 0; i < b.N; i++ {
						res, err = sim.Run(context.Background(), sc, sim.Options{Strategies: []string{st.Name}, Parallel: 1})
						if err != nil {
							b.Fatal(err)
						}
					}
					reportFigures(b, &res.Strategies[0])
				})
			}
		})
	}
}

// reportFigures reports one strategy's deterministic figures: those of
// results' registry with a benchmark unit (results.BenchFigures), in it,
// the units the gate's tolerances are set for.
func reportFigures(b *testing.B, s *results.StrategyResult) {
	for _, f := range results.BenchFigures() {
		v, _ := f.Value(s)
		b.ReportMetric(v, f.Bench)
	}
}

// The benchmark reports every figure of results' registry that has a
// benchmark unit, under that unit, with the value worked out by hand from
// the strategy's fields; the gate judges each unit in the registry's
// direction.
func TestBenchUnitsFromRegistry(t *testing.T) {
	s := &results.StrategyResult{Turns: 9, FailedTurns: 2, UnfinishedTurns: 1, Calls: 40, Attempts: 50, Failed: 3,
		RateLimited: 7, EarlyRetries: 4, WriteRaces: 1, GoodputPerS: 1.5, WastedWorkS: 12.5,
		TurnLatencyMs: results.Summary{P50: 100, P95: 400, P99: 900}}
	want := map[string]float64{"p50-turn-ms": 100, "p95-turn-ms": 400, "p99-turn-ms": 900, "429s/op": 7,
		"goodput/s": 1.5, "wasted-s": 12.5, "early-retries": 4, "write-races": 1, "failed-calls": 3,
		"failed-turns": 2, "unfinished-turns": 1, "attempts/call": 1.25}
	got := testing.Benchmark(func(b *testing.B) { reportFigures(b, s) }).Extra
	for unit, v := range want {
		if got[unit] != v {
			t.Errorf("%s = %v, want %v", unit, got[unit], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("units %v, want those of %v", got, want)
	}
	for _, f := range results.BenchFigures() {
		tol, ok := gate.Lookup(f.Bench)
		if !ok || (tol.Better == gate.HigherIsBetter) != (f.Better == results.Higher) || f.Better == results.Neutral {
			t.Errorf("%s: the gate's tolerance %+v, %v; the registry's direction %v", f.Bench, tol, ok, f.Better)
		}
	}
}
