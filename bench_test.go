package main

import (
	"context"
	"testing"

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
