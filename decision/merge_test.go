package decision

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sim"
)

// TestMerge: the recommendations of every plan, the load check under the
// binding service, the verified cap and the decision go into the results;
// without a decision (Arithmetic) there is no verified cap.
func TestMerge(t *testing.T) {
	p, _ := Recommend(Service{Name: "openai", RPM: 10_000, MeanLatency: 400 * time.Millisecond, CallsPerTurn: 8})
	q, _ := Recommend(Service{Name: "search", RPM: 60_000, MeanLatency: 400 * time.Millisecond, CallsPerTurn: 1})
	l, _ := CheckLoad(37, 80, []Plan{p, q})
	d := &results.Decision{Strategy: "bounded", MaxInFlight: 20}
	r := &Result{Plans: []Plan{p, q}, Plan: &p, Load: &l, Decision: d, Row: results.SweepRow{Chosen: 20}}

	res := &results.Results{Recommendation: map[string]results.Recommendation{"other": {MaxInFlight: 3}}}
	r.Merge(res)
	if res.Decision != d || len(res.Recommendation) != 3 || res.Recommendation["other"].MaxInFlight != 3 {
		t.Fatalf("merged %+v", res)
	}
	if got := res.Recommendation["openai"]; got.VerifiedCap != 20 || got.OfferedTurnsPerMinute != 2220 || !strings.HasSuffix(got.Reason, strings.Join(l.Lines(), "\n")) {
		t.Errorf("openai: %+v", got)
	}
	if got := res.Recommendation["search"]; got != q.Recommendation() {
		t.Errorf("search: %+v, want its plan's recommendation unchanged", got)
	}

	r.Decision = nil
	recs := r.Recommendations()
	if recs["openai"].VerifiedCap != 0 || recs["openai"].OfferedTurnsPerMinute != 0 {
		t.Errorf("without a decision: %+v", recs["openai"])
	}
	if (&Result{}).Recommendations() != nil {
		t.Error("no plans gave recommendations")
	}
	empty := &results.Results{}
	(&Result{}).Merge(empty)
	if empty.Recommendation != nil || empty.Decision != nil {
		t.Errorf("an empty result merged %+v", empty)
	}
}

// TestSweepByLoad: caps given by hand under two loads give a row per
// load, the chosen caps and knees by load, and the seeds; no decision.
func TestSweepByLoad(t *testing.T) {
	sc, err := scenarios.Builtin("tier3")
	if err != nil {
		t.Fatal(err)
	}
	var runs int
	var finished, aborted bool
	sw, err := Sweep(context.Background(), sc, SweepOptions{
		Caps: []int{1, 8, 64}, Loads: []sim.Load{{Sessions: 4}, {Sessions: 40}}, Rule: Rule{MaxShare: 0.001},
		Seeds: 2, Duration: 10 * time.Second,
		Progress: func(n int, each time.Duration) (func(string, time.Duration, time.Duration), func(bool)) {
			runs = n
			return func(string, time.Duration, time.Duration) {}, func(a bool) { finished, aborted = true, a }
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if sw.Decision != nil || sw.Strategy != sim.SweepStrategy(sc) || len(sw.Rows) != 2 || sw.Rows[1].Load != "sessions=40" {
		t.Fatalf("sweep %+v", sw)
	}
	if runs != 3*2*2 || !finished || aborted {
		t.Errorf("progress: %d runs, finished %v, aborted %v; want 12, true, false", runs, finished, aborted)
	}
	if len(sw.Seeds) != 2 || sw.Seeds[1] != sc.Seed+1 {
		t.Errorf("seeds %v", sw.Seeds)
	}
	for _, row := range sw.Rows {
		if len(row.Points) != 3 || sw.Chosen[row.Load] != row.Chosen || sw.Knee[row.Load] != row.Knee || row.Points[0].Seeds != 2 {
			t.Errorf("row %+v; chosen %v, knee %v", row, sw.Chosen, sw.Knee)
		}
	}
	if _, err := Sweep(context.Background(), sc, SweepOptions{Strategy: "nope", Caps: []int{1}, Seeds: 1}); !errors.As(err, new(InputError)) || !strings.Contains(err.Error(), "nope") {
		t.Errorf("an unknown strategy: %v", err)
	}
}
