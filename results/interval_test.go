package results

import (
	"encoding/json"
	"math"
	"testing"
)

func TestIntervalOf(t *testing.T) {
	// Mean 3, sample sd √2.5; t(0.975, 4) = 2.776445: half width 1.963243.
	iv := IntervalOf([]float64{1, 2, 3, 4, 5})
	if iv.Mean != 3 || iv.N != 5 || math.Abs(iv.HalfWidth()-1.963243) > 1e-5 {
		t.Errorf("interval %+v (half %v), want mean 3 ± 1.963243", iv, iv.HalfWidth())
	}
	if one := IntervalOf([]float64{7}); one.Lo != 7 || one.Hi != 7 {
		t.Errorf("one value: %+v, want [7, 7]", one)
	}
	if inf := IntervalOf([]float64{1, math.Inf(1)}); !math.IsInf(inf.Mean, 1) {
		t.Errorf("an unanswered seed: %+v, want an infinite mean", inf)
	}
	b, err := IntervalOf([]float64{1, math.Inf(1)}).MarshalJSON()
	if err != nil || string(b) != `{"mean":null,"lo":null,"hi":null,"n":2}` {
		t.Errorf("json %s, %v", b, err)
	}
}

// An interval has no width when, and only when, every seed gave the same
// value: equal values (whose float mean could round off them) give exactly
// the value, and values a hair apart give a width above zero.
func TestIntervalZeroWidthOnlyForEqualSeeds(t *testing.T) {
	v := 0.1 + 0.2 // a value whose sum of three is not three times it
	iv := IntervalOf([]float64{v, v, v})
	if iv.Mean != v || iv.Lo != v || iv.Hi != v {
		t.Errorf("equal seeds: %+v, want exactly %v", iv, v)
	}
	if iv := IntervalOf([]float64{3317.76, 3317.76, 3317.761}); !(iv.HalfWidth() > 0) {
		t.Errorf("seeds 0.001 apart: %+v, want a width above zero", iv)
	}
}

func TestSeedStats(t *testing.T) {
	s := StrategyResult{Name: "s", SeedRuns: []StrategyResult{
		{Turns: 10, TurnLatencyMs: Summary{P95: 100}, PeakInFlight: map[string]int{"llm": 4}, AnswerLatencyMs: AnswerSummary{P95: 90, AnsweredShare: 1}},
		{Turns: 12, TurnLatencyMs: Summary{P95: 110}, PeakInFlight: map[string]int{"llm": 4}, AnswerLatencyMs: AnswerSummary{P95: Unanswered, AnsweredShare: 0.5}},
	}}
	st := SeedStatsOf(&s)
	if iv := st["turns"]; iv.Mean != 11 || iv.N != 2 || !(iv.Lo < 11 && iv.Hi > 11) {
		t.Errorf("turns %+v, want 11 with an interval around it", iv)
	}
	if iv := st["turn_latency_ms.p95"]; iv.Mean != 105 {
		t.Errorf("p95 %+v, want 105", iv)
	}
	if iv := st["peak_in_flight.llm"]; iv.Mean != 4 || iv.Lo != 4 || iv.Hi != 4 {
		t.Errorf("peak %+v, want exactly 4", iv)
	}
	if iv := st["answer_latency_ms.p95"]; !math.IsInf(iv.Mean, 1) {
		t.Errorf("answer p95 %+v, want +Inf: a seed never answered", iv)
	}
	s.SeedStats = st
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back StrategyResult
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if iv, ok := back.SeedInterval("answer_latency_ms.p95"); !ok || !math.IsInf(iv.Mean, 1) {
		t.Errorf("read back: %+v %v, want +Inf (null in JSON)", iv, ok)
	}
	if iv, ok := back.SeedInterval("turns"); !ok || iv != st["turns"] {
		t.Errorf("read back turns %+v, want %+v", iv, st["turns"])
	}
	if _, ok := (&StrategyResult{}).SeedInterval("turns"); ok {
		t.Error("one seed: an interval")
	}
}
