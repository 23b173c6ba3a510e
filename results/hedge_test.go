package results

import (
	"slices"
	"testing"
)

// The hedge figures apply to a strategy that hedged and to no other, so
// seed_stats gains their keys only where a strategy hedged.
func TestHedgeFigures(t *testing.T) {
	h := &StrategyResult{Attempts: 1000, Hedges: 40, HedgesWon: 15, CancelledWorkS: 12.5}
	for key, want := range map[string]float64{"hedges": 40, "hedges_won": 15, "cancelled_work_s": 12.5} {
		if v, ok := h.Figure(key); !ok || v != want {
			t.Errorf("Figure(%q) = %v, %v; want %v, true", key, v, ok, want)
		}
		if _, ok := (&StrategyResult{Attempts: 1000}).Figure(key); ok {
			t.Errorf("Figure(%q) applies to a strategy that never hedged", key)
		}
		if !slices.Contains(FigureKeys(), key) {
			t.Errorf("FigureKeys lacks %q", key)
		}
	}
	seeds := func(hedges ...int64) *StrategyResult {
		s := &StrategyResult{}
		for _, n := range hedges {
			s.SeedRuns = append(s.SeedRuns, StrategyResult{Attempts: 100, Hedges: n, HedgesWon: n / 2, CancelledWorkS: float64(n)})
		}
		return s
	}
	st := SeedStatsOf(seeds(10, 20))
	if iv, ok := st["hedges"]; !ok || iv.Mean != 15 || iv.N != 2 {
		t.Errorf("seed_stats hedges = %+v, %v; want a mean of 15 over 2 seeds", iv, ok)
	}
	if _, ok := st["cancelled_work_s"]; !ok {
		t.Error("seed_stats lacks cancelled_work_s")
	}
	for key := range SeedStatsOf(seeds(0, 0)) {
		if key == "hedges" || key == "hedges_won" || key == "cancelled_work_s" {
			t.Errorf("seed_stats of a strategy that never hedged holds %q", key)
		}
	}
}
