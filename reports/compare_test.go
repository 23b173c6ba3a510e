package reports

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/simbench/simbench/sim"
)

func TestChangesVerdicts(t *testing.T) {
	got := map[string]Change{}
	for _, c := range Changes(tier3Results(), tier3Later()) {
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
	old := &sim.Results{Strategies: []sim.StrategyResult{{Name: "s", Turns: 10, Attempts: 100, Failed: 2, WriteRaces: 1,
		PeakInFlight: map[string]int{"llm": 8}}}}
	nw := &sim.Results{Strategies: []sim.StrategyResult{{Name: "s", Turns: 9, Attempts: 140, Failed: 0, WriteRaces: 3,
		PeakInFlight: map[string]int{"llm": 16}}}}
	want := map[string]string{
		"turns": Worse, "attempts": "", "failed": Better, "races": Worse, "peak": "",
	}
	for _, c := range Changes(old, nw) {
		if w, ok := want[c.Metric]; ok && c.Verdict != w {
			t.Errorf("%s %v → %v: verdict %q, want %q", c.Metric, c.Old, c.New, c.Verdict, w)
		}
	}
}

func TestChangesFromZero(t *testing.T) {
	old := &sim.Results{Strategies: []sim.StrategyResult{{Name: "s", Turns: 1}}}
	nw := &sim.Results{Strategies: []sim.StrategyResult{{Name: "s", Turns: 1, RateLimited: 5}}}
	for _, c := range Changes(old, nw) {
		if c.Metric == "429s" && (!math.IsNaN(c.Percent) || c.Verdict != Worse) {
			t.Errorf("0 → 5 429s: %v%% %q, want NaN and worse", c.Percent, c.Verdict)
		}
	}
	var b bytes.Buffer
	if err := Compare(&b, old, nw); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "n/a") {
		t.Errorf("a change from 0 is not shown as n/a:\n%s", b.String())
	}
}

func TestCompareGolden(t *testing.T) {
	var b bytes.Buffer
	if err := Compare(&b, tier3Results(), tier3Later()); err != nil {
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
	if err := Compare(&b, tier3Results(), tier3Results()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "no metric changed") || !strings.Contains(b.String(), "0 better, 0 worse") {
		t.Errorf("a run compared with itself:\n%s", b.String())
	}
}

func TestCompareNil(t *testing.T) {
	if err := Compare(&bytes.Buffer{}, nil, tier3Results()); err == nil {
		t.Error("no error for a missing run")
	}
}

// A p95 time to answer that none came (more than 5% of turns failed) is
// infinite: becoming answered is better, losing the answer worse, and
// staying unanswered no change.
func TestChangesOfUnansweredP95(t *testing.T) {
	run := func(p95 sim.AnswerMs) *sim.Results {
		share := 1.0
		if !p95.Answered() {
			share = 0.8
		}
		return &sim.Results{Strategies: []sim.StrategyResult{{Name: "s", Turns: 10,
			AnswerLatencyMs: sim.AnswerSummary{P50: 100, P95: p95, P99: p95, AnsweredShare: share}}}}
	}
	verdict := func(a, b *sim.Results) (Change, bool) {
		for _, c := range Changes(a, b) {
			if c.Metric == "answer p95" {
				return c, true
			}
		}
		return Change{}, false
	}
	tests := []struct {
		old, new    sim.AnswerMs
		wantVerdict string
	}{
		{sim.Unanswered, 900, Better},
		{900, sim.Unanswered, Worse},
		{sim.Unanswered, sim.Unanswered, ""},
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
	if err := Compare(&b, run(900), run(sim.Unanswered)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "answer p95") || !strings.Contains(b.String(), "—") || strings.Contains(b.String(), "Inf") {
		t.Errorf("an answer lost is not shown as —, n/a:\n%s", b.String())
	}
}
