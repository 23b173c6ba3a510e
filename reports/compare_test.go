package reports

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/simbench/simbench/results"
)

func TestChangesVerdicts(t *testing.T) {
	got := map[string]Change{}
	for _, c := range Changes(tier3Results(), tier3Later(), CompareOptions{}) {
		got[c.Strategy+"/"+c.Metric] = c
	}
	tests := []struct {
		key         string
		wantDelta   float64
		wantVerdict string
	}{
		{"bounded-8/p95 ms", -150, Better},    // latency: lower is better
		{"bounded-8/goodput/s", 1.57, Better}, // goodput: higher is better
		{"bounded-8/turns", 170, Better},      // more turns completed
		{"unbounded/429s", 1480, Worse},       // more 429s
		{"unbounded/early", -2140, Better},    // fewer early retries
		{"unbounded/wasted s", -14.5, Better}, // less wasted work
		{"sequential/p95 ms", 0, ""},          // unchanged
		{"unbounded/attempts", 0, ""},         // unchanged
	}
	for _, tt := range tests {
		c, ok := got[tt.key]
		if !ok {
			t.Errorf("no change for %s", tt.key)
			continue
		}
		if math.Abs(c.Delta-tt.wantDelta) > 1e-9 || c.Verdict != tt.wantVerdict {
			t.Errorf("%s: delta %v %q, want %v %q", tt.key, c.Delta, c.Verdict, tt.wantDelta, tt.wantVerdict)
		}
	}
	for key := range got {
		if strings.HasPrefix(key, "bounded-16/") || strings.HasPrefix(key, "bounded-32-nojitter/") {
			t.Errorf("%s compared although the strategy is in one run only", key)
		}
	}
	if c := got["unbounded/429s"]; math.Abs(c.Percent-100*1480.0/13730) > 1e-9 {
		t.Errorf("429s change %v%%, want %v%%", c.Percent, 100*1480.0/13730)
	}
}

func TestChangesDirections(t *testing.T) {
	old := &results.Results{Strategies: []results.StrategyResult{{Name: "s", Turns: 10, Attempts: 100, Failed: 2, WriteRaces: 1,
		PeakInFlight: map[string]int{"llm": 8}}}}
	nw := &results.Results{Strategies: []results.StrategyResult{{Name: "s", Turns: 9, Attempts: 140, Failed: 0, WriteRaces: 3,
		PeakInFlight: map[string]int{"llm": 16}}}}
	want := map[string]string{
		"turns": Worse, "attempts": "", "failed": Better, "races": Worse, "peak": "",
	}
	for _, c := range Changes(old, nw, CompareOptions{}) {
		if w, ok := want[c.Metric]; ok && c.Verdict != w {
			t.Errorf("%s %v → %v: verdict %q, want %q", c.Metric, c.Old, c.New, c.Verdict, w)
		}
	}
}

func TestChangesFromZero(t *testing.T) {
	old := &results.Results{Strategies: []results.StrategyResult{{Name: "s", Turns: 1}}}
	nw := &results.Results{Strategies: []results.StrategyResult{{Name: "s", Turns: 1, RateLimited: 5}}}
	for _, c := range Changes(old, nw, CompareOptions{}) {
		if c.Metric == "429s" && (!math.IsNaN(c.Percent) || c.Verdict != Worse) {
			t.Errorf("0 → 5 429s: %v%% %q, want NaN and worse", c.Percent, c.Verdict)
		}
	}
	var b bytes.Buffer
	if _, err := Compare(&b, old, nw, CompareOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "n/a") {
		t.Errorf("a change from 0 is not shown as n/a:\n%s", b.String())
	}
}

func TestCompareGolden(t *testing.T) {
	var b bytes.Buffer
	if _, err := Compare(&b, tier3Results(), tier3Later(), CompareOptions{}); err != nil {
		t.Fatal(err)
	}
	golden(t, "compare.txt", b.Bytes())
	for _, want := range []string{"only in old: bounded-32-nojitter", "only in new: bounded-16", "8 better, 1 worse", "sequential  no change"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("compare lacks %q:\n%s", want, b.String())
		}
	}
}

func TestCompareSameRun(t *testing.T) {
	var b bytes.Buffer
	if _, err := Compare(&b, tier3Results(), tier3Results(), CompareOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "no metric changed") || !strings.Contains(b.String(), "0 better, 0 worse") {
		t.Errorf("a run compared with itself:\n%s", b.String())
	}
}

func TestCompareNil(t *testing.T) {
	if _, err := Compare(&bytes.Buffer{}, nil, tier3Results(), CompareOptions{}); err == nil {
		t.Error("no error for a missing run")
	}
}

// A p95 time to answer that none came (more than 5% of turns failed) is
// infinite: becoming answered is better, losing the answer worse, and
// staying unanswered no change.
func TestChangesOfUnansweredP95(t *testing.T) {
	run := func(p95 results.AnswerMs) *results.Results {
		share := 1.0
		if !p95.Answered() {
			share = 0.8
		}
		return &results.Results{Strategies: []results.StrategyResult{{Name: "s", Turns: 10,
			AnswerLatencyMs: results.AnswerSummary{P50: 100, P95: p95, P99: p95, AnsweredShare: share}}}}
	}
	verdict := func(a, b *results.Results) (Change, bool) {
		for _, c := range Changes(a, b, CompareOptions{}) {
			if c.Metric == "answer p95" {
				return c, true
			}
		}
		return Change{}, false
	}
	tests := []struct {
		old, new    results.AnswerMs
		wantVerdict string
	}{
		{results.Unanswered, 900, Better},
		{900, results.Unanswered, Worse},
		{results.Unanswered, results.Unanswered, ""},
	}
	for _, tt := range tests {
		c, ok := verdict(run(tt.old), run(tt.new))
		if !ok {
			t.Fatalf("%v → %v: no answer p95 change", tt.old, tt.new)
		}
		if c.Verdict != tt.wantVerdict || (tt.wantVerdict != "" && !math.IsNaN(c.Percent)) || (tt.wantVerdict == "" && c.Delta != 0) {
			t.Errorf("%v → %v: %+v, want verdict %q", tt.old, tt.new, c, tt.wantVerdict)
		}
	}
	var b bytes.Buffer
	if _, err := Compare(&b, run(900), run(results.Unanswered), CompareOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "answer p95") || !strings.Contains(b.String(), "—") || strings.Contains(b.String(), "Inf") {
		t.Errorf("an answer lost is not shown as —, n/a:\n%s", b.String())
	}
}

// seeded builds a run of one strategy over seeds whose p95 turn latencies
// are given, and whose turns are 100 each.
func seeded(seed uint64, p95s ...float64) *results.Results {
	r := &results.Results{Scenario: "x", Seed: seed, DurationS: 60}
	s := results.StrategyResult{Name: "s"}
	for i, v := range p95s {
		r.Seeds = append(r.Seeds, seed+uint64(i))
		s.SeedRuns = append(s.SeedRuns, results.StrategyResult{Name: "s", Turns: 100, TurnLatencyMs: results.Summary{P95: v}})
	}
	s.Turns, s.TurnLatencyMs = 100, s.SeedRuns[0].TurnLatencyMs
	r.Strategies = []results.StrategyResult{s}
	return r
}

func changeOf(t *testing.T, a, b *results.Results, metric string) Change {
	t.Helper()
	for _, c := range Changes(a, b, CompareOptions{}) {
		if c.Metric == metric {
			return c
		}
	}
	t.Fatalf("no change of %s", metric)
	return Change{}
}

func TestChangesOverSeeds(t *testing.T) {
	// Overlapping samples: within noise, with the test's p-value.
	c := changeOf(t, seeded(42, 1000, 1010, 990, 1005, 995), seeded(7, 1004, 996, 1012, 988, 1001), "p95 ms")
	if c.Verdict != WithinNoise || math.IsNaN(c.P) || c.P < 0.05 {
		t.Errorf("overlapping seeds: %+v, want within noise with p ≥ 0.05", c)
	}
	// Every new seed slower than every old one, intervals apart: worse.
	c = changeOf(t, seeded(42, 1000, 1010, 990, 1005, 995), seeded(7, 1200, 1210, 1190, 1205, 1195), "p95 ms")
	if c.Verdict != Worse || c.P >= 0.05 || math.Abs(c.Delta-200) > 1e-9 || !(c.Lo > 0 && c.Lo < 200 && c.Hi > 200) {
		t.Errorf("separated seeds: %+v, want worse by 200 with p < 0.05 and an interval around it", c)
	}
	// One seed a side, different seeds: undecided, and two seeds a side
	// are the least that measure their spread.
	c = changeOf(t, seeded(42, 1000), seeded(7, 1010), "p95 ms")
	if c.Verdict != Undecided || c.SeedsNeeded != 2 {
		t.Errorf("one seed each: %+v, want undecided, needing 2 seeds", c)
	}
	// The same seed: deterministic, so any change counts.
	c = changeOf(t, seeded(42, 1000), seeded(42, 1010), "p95 ms")
	if c.Verdict != Worse {
		t.Errorf("same seed: %+v, want worse", c)
	}
}

func TestCompareAcrossDurationsUsesRates(t *testing.T) {
	a, b := seeded(42, 1000), seeded(42, 1000)
	b.DurationS = 600
	b.Strategies[0].Turns = 1000 // ten times the turns in ten times the time
	c := changeOf(t, a, b, "turns/min")
	if c.Old != 100 || c.New != 100 || c.Verdict != "" {
		t.Errorf("turns across durations: %+v, want 100/min both, unchanged", c)
	}
	var out bytes.Buffer
	if _, err := Compare(&out, a, b, CompareOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "different durations (60 s, 600 s): counts are compared as rates per minute") {
		t.Errorf("no duration warning:\n%s", out.String())
	}
}

func TestCompareWarnsAndRefuses(t *testing.T) {
	a, b := seeded(42, 1000), seeded(7, 1000)
	a.ScenarioDigest, b.ScenarioDigest = "aa", "bb"
	var out bytes.Buffer
	if _, err := Compare(&out, a, b, CompareOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"scenario file differs", "different seeds (seed 42, seed 7)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	b.Strategies[0].Name = "other"
	if _, err := Compare(&bytes.Buffer{}, a, b, CompareOptions{}); !errors.Is(err, ErrNothingInCommon) {
		t.Errorf("no strategy in common: err = %v, want ErrNothingInCommon", err)
	}
}
