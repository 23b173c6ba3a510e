package results

import (
	"slices"
	"testing"
)

// Each name of the registry names one figure: a key, a column header, a
// threshold name or a benchmark unit given to two figures would let a
// table, a threshold or the gate read the wrong one. A figure that a
// threshold or the gate judges has a direction; every figure has a title
// and a unit.
func TestRegistryNamesEachFigureOnce(t *testing.T) {
	seen := map[string]string{}
	once := func(kind, name, key string) {
		if name == "" {
			return
		}
		if other, dup := seen[kind+" "+name]; dup {
			t.Errorf("%s %q names both %s and %s", kind, name, other, key)
		}
		seen[kind+" "+name] = key
	}
	units := []string{UnitCount, UnitMs, UnitS, UnitPerS, UnitShare, UnitRatio, UnitUSD, UnitMean}
	for _, f := range Figures() {
		once("key", f.Key, f.Key)
		once("header", f.Header, f.Key)
		once("threshold", f.Threshold, f.Key)
		once("bench unit", f.Bench, f.Key)
		if f.Title == "" || !slices.Contains(units, f.Unit) {
			t.Errorf("%s: title %q, unit %q; want a title and one of %v", f.Key, f.Title, f.Unit, units)
		}
		if (f.Threshold != "" || f.Bench != "") && f.Better == Neutral {
			t.Errorf("%s: threshold %q, bench unit %q, but no better direction", f.Key, f.Threshold, f.Bench)
		}
		if f.MaxWorse != 0 && f.Bench == "" {
			t.Errorf("%s: a gate tolerance without a benchmark unit", f.Key)
		}
		if f.Derived == slices.Contains(FigureKeys(), f.Key) {
			t.Errorf("%s: derived %v, yet FigureKeys lists it %v", f.Key, f.Derived, !f.Derived)
		}
	}
	if !slices.Equal(ThresholdNames(), []string{"answer_p50", "answer_p95", "answer_p99", "turn_p95",
		"answered_share", "rate_limited_share", "goodput_per_s", "failed_turns", "early_retries"}) {
		t.Errorf("ThresholdNames = %v: the order error messages list them in changed", ThresholdNames())
	}
}

// Threshold values, worked out by hand from the fields: times in seconds,
// shares over what they divide, and no data where there is none.
func TestThresholdValues(t *testing.T) {
	s := &StrategyResult{Turns: 8, UnfinishedTurns: 2, FailedTurns: 1, Attempts: 40, RateLimited: 6, EarlyRetries: 3,
		GoodputPerS: 2.5, TurnLatencyMs: Summary{P95: 1250},
		AnswerLatencyMs: AnswerSummary{P50: 400, P95: 2000, P99: Unanswered, AnsweredShare: 0.875}}
	want := map[string]float64{"answer_p50": 0.4, "answer_p95": 2, "turn_p95": 1.25, "answered_share": 0.875,
		"rate_limited_share": 0.15, "goodput_per_s": 2.5, "failed_turns": 1, "early_retries": 3}
	for _, name := range ThresholdNames() {
		v, ok := s.Metric(name)
		w, has := want[name]
		if ok != has || v != w {
			t.Errorf("Metric(%q) = %v, %v; want %v, %v", name, v, ok, w, has)
		}
	}
	// Every turn unfinished: answered none of those begun, a share of 0,
	// where the figure, over finished turns, does not apply.
	idle := &StrategyResult{UnfinishedTurns: 3}
	if v, ok := idle.Metric("answered_share"); !ok || v != 0 {
		t.Errorf("answered_share of unfinished turns = %v, %v; want 0, true", v, ok)
	}
	if _, ok := idle.Figure("answer_latency_ms.answered_share"); ok {
		t.Error("the answered share figure applies with no turn finished")
	}
	for _, name := range []string{"turn_p95", "answer_p95", "rate_limited_share"} {
		if _, ok := idle.Metric(name); ok {
			t.Errorf("Metric(%q) has data with no turn finished and no attempt", name)
		}
	}
	if _, ok := s.Metric("turn_latency_ms.p95"); ok {
		t.Error("Metric reads a figure by its key, not by a threshold name")
	}
}

// Derived figures are computed, not read: attempts per call is 0 without
// calls (what the benchmark has always reported), else the quotient.
func TestDerivedFigures(t *testing.T) {
	for _, tc := range []struct {
		s    StrategyResult
		want float64
	}{{StrategyResult{Calls: 8, Attempts: 10}, 1.25}, {StrategyResult{Attempts: 3}, 0}} {
		f, _ := Lookup("attempts_per_call")
		if v, ok := f.Value(&tc.s); !ok || v != tc.want {
			t.Errorf("attempts per call of %d/%d = %v, %v; want %v", tc.s.Attempts, tc.s.Calls, v, ok, tc.want)
		}
		if _, ok := tc.s.Figure("attempts_per_call"); ok {
			t.Error("Figure reads a derived figure, which results.json does not hold")
		}
	}
}

// Plots have one name and a title each; a variant title, where a plot has
// one, is a different heading.
func TestPlotRegistry(t *testing.T) {
	names := map[string]bool{}
	for _, p := range Plots() {
		if names[p.Name] || p.Name == "" || p.Title == "" || p.VariantTitle == p.Title {
			t.Errorf("plot %+v: want a name of its own, a title and a variant title other than it", p)
		}
		names[p.Name] = true
		if got, ok := Plot(p.Name); !ok || got != p {
			t.Errorf("Plot(%q) = %+v, %v", p.Name, got, ok)
		}
	}
}
