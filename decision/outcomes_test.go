package decision

import (
	"context"
	"strings"
	"testing"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
)

// The rule reads the time to answer among the turns the scheduler could
// answer when a run has it (the model's turns may fail), else the time to
// answer of every turn.
func TestAnswerOfLeavesModelFailuresOut(t *testing.T) {
	all := results.AnswerSummary{P50: 900, P95: results.Unanswered, AnsweredShare: 0.8}
	sched := results.AnswerSummary{P50: 800, P95: 2000, AnsweredShare: 0.97}
	s := results.StrategyResult{AnswerLatencyMs: all, Tasks: &results.Tasks{ModelFailedTurns: 17, SchedulerAnswerLatencyMs: &sched, CostPerAnsweredTaskUSD: 0.25}}
	p := SweepPointOf(8, s)
	if p.P95Ms != 2000 || p.AnsweredShare != 0.97 || p.CostPerAnsweredTaskUSD != 0.25 {
		t.Errorf("point %+v: want the scheduler's p95 2,000 ms, 97%% answered, $0.25 a task", p)
	}
	if !(Rule{MaxShare: 0.001}).qualifies(p) {
		t.Errorf("point %+v does not qualify; a model that errs is no failure of the cap", p)
	}
	s.Tasks.SchedulerAnswerLatencyMs = nil
	if p := SweepPointOf(8, s); p.P95Ms.Answered() || p.AnsweredShare != 0.8 {
		t.Errorf("without the scheduler's figures the point is %+v; want every turn's", p)
	}
}

// Where the scenario prices a service, the sentence says what the chosen
// configuration costs per answered task and names a cheaper one that also
// meets the rule; strategies that miss the rule are not offered, however
// cheap. Unpriced, neither is said.
func TestDecisionNamesTheCheapestThatMeetsTheRule(t *testing.T) {
	rule := Rule{MaxShare: 0.001}
	pts := []results.SweepPoint{{Cap: 4, P95Ms: 900, AnsweredShare: 1, CostPerAnsweredTaskUSD: 0.5}, {Cap: 8, P95Ms: 880, AnsweredShare: 1, CostPerAnsweredTaskUSD: 0.52}}
	written := []results.Outcome{
		{Strategy: "wide", P95Ms: 3000, AnsweredShare: 0.99, CostPerAnsweredTaskUSD: 0.02, MeetsRule: true},
		{Strategy: "wider", P95Ms: results.Unanswered, AnsweredShare: 0.5, CostPerAnsweredTaskUSD: 0.001},
	}
	in := input{Strategy: "narrow", Row: NewSweepRow("x", pts, rule), Rule: rule, Seeds: []uint64{1}, Strategies: written, Priced: true}
	d := build(in)
	want := "with strategy narrow, set max_in_flight = 4: p95 answer 900 ms, 100% answered, 0 429s, $0.5000 per answered task; wide as written also meets the rule at $0.0200 per answered task, p95 answer 3.0 s"
	if d.Sentence != want {
		t.Errorf("sentence\n got %q\nwant %q", d.Sentence, want)
	}
	if c := d.Evidence.Cheapest; c == nil || c.Strategy != "wide" {
		t.Errorf("cheapest %+v; want wide", c)
	}
	written[0].CostPerAnsweredTaskUSD = 0.9
	if d := build(in); d.Evidence.Cheapest == nil || d.Evidence.Cheapest.Strategy != "narrow@4" || !strings.HasSuffix(d.Sentence, ", $0.5000 per answered task") {
		t.Errorf("the choice is the cheapest: %q, %+v", d.Sentence, d.Evidence.Cheapest)
	}
	in.Priced = false
	if d := build(in); d.Evidence.Cheapest != nil || strings.Contains(d.Sentence, "$") {
		t.Errorf("unpriced: %q, %+v", d.Sentence, d.Evidence.Cheapest)
	}
}

// narrow-vs-wide's model is right 85% of the time; those turns are no
// failure of the cap, so the decision recommends one, with its cost,
// where it used to find no cap and advise lightening the load.
func TestNarrowVersusWideGetsACap(t *testing.T) {
	sc, err := scenarios.Builtin("narrow-vs-wide")
	if err != nil {
		t.Fatal(err)
	}
	d, err := Decide(context.Background(), sc, Options{Rule: Rule{MaxShare: 0.001}})
	if err != nil {
		t.Fatal(err)
	}
	dec := d.Decision
	if dec.Evidence.Chosen == 0 || strings.Contains(dec.Sentence, "lighten the load") || !strings.Contains(dec.Sentence, " per answered task") {
		t.Fatalf("sentence %q: want a cap, and its cost", dec.Sentence)
	}
	if e := dec.Expected; e.AnsweredShare < MinAnsweredShare || e.CostPerAnsweredTaskUSD <= 0 || dec.Evidence.Cheapest == nil {
		t.Errorf("expected %+v, cheapest %+v", e, dec.Evidence.Cheapest)
	}
}
