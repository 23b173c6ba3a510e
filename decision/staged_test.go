package decision

import (
	"testing"

	"github.com/simbench/simbench/results"
)

// pointOver is the point SweepPointOf makes of seeds whose p95s are xs.
func pointOver(xs []float64) results.SweepPoint {
	iv := results.IntervalOf(xs)
	return results.SweepPoint{Cap: 1, P95Ms: results.AnswerMs(iv.Mean), P95LoMs: results.AnswerMs(iv.Lo), P95HiMs: results.AnswerMs(iv.Hi),
		Seeds: len(xs), AnsweredShare: 1}
}

// cannotBeFaster leaves out a pace whose first seed scores clearly above
// its own point (by 5 times own's spread, at least minMargin), and keeps
// one within that margin.
func TestCannotBeFasterOnlyWhenClearlySlower(t *testing.T) {
	rule := Rule{MaxShare: DefaultMaxRateLimitedShare}
	own := pointOver([]float64{3000, 3000, 3000})
	own.PerSeed = []results.SeedFigures{{P95Ms: 3000, AnsweredShare: 1}, {P95Ms: 3000, AnsweredShare: 1}, {P95Ms: 3000, AnsweredShare: 1}}
	for _, tc := range []struct {
		first float64
		want  bool
	}{{3000 * (1 + minMargin), true}, {3000 * (1 + minMargin/2), false}, {2000, false}} {
		p := results.SweepPoint{Cap: 1, P95Ms: results.AnswerMs(tc.first), AnsweredShare: 1, Seeds: 1}
		if got := rule.cannotBeFaster([]results.SweepPoint{p}, &own); got != tc.want {
			t.Errorf("first seed %v against 3000: cannotBeFaster = %v, want %v", tc.first, got, tc.want)
		}
	}
}

// One seed's shares that put the mean over the rule's bounds whatever the
// other seeds measure make cannotQualify true; shares the others could
// still bring back do not.
func TestCannotQualifyOnlyWhenNoSeedsCanBringItBack(t *testing.T) {
	rule := Rule{MaxShare: 0.001}
	for _, c := range []struct {
		p    results.SweepPoint
		want bool
	}{
		{results.SweepPoint{P95Ms: 1, AnsweredShare: 1, RateLimitedShare: 0.0031}, true},
		{results.SweepPoint{P95Ms: 1, AnsweredShare: 1, RateLimitedShare: 0.0029}, false},
		{results.SweepPoint{P95Ms: 1, AnsweredShare: 0.84}, true},
		{results.SweepPoint{P95Ms: 1, AnsweredShare: 0.86}, false},
		{results.SweepPoint{P95Ms: results.Unanswered, AnsweredShare: 1}, true},
	} {
		if got := rule.cannotQualify([]results.SweepPoint{c.p}, 3); got != c.want {
			t.Errorf("%+v over 3 seeds: cannotQualify = %v, want %v", c.p, got, c.want)
		}
	}
}

// stagedTrial is a trial at cap c whose seeds answered with p95s xs (ms).
func stagedTrial(c int, xs ...float64) *trial {
	t := &trial{cap: c}
	for _, x := range xs {
		t.runs = append(t.runs, results.StrategyResult{AnswerLatencyMs: results.AnswerSummary{
			P50: results.AnswerMs(x / 2), P95: results.AnswerMs(x), AnsweredShare: 1}})
	}
	return t
}

// A cap whose first seed is the fastest of the sweep gets its other seeds
// even where it cannot change the chosen cap: the decision quotes it as the
// best cap.
func TestSettleRunsTheBestCapOverEverySeed(t *testing.T) {
	r := Rule{MaxShare: DefaultMaxRateLimitedShare}
	chosen := stagedTrial(20, 1000, 1001, 999) // a small spread: the least margin, 2%
	slow := stagedTrial(10, 3000)
	fastest := stagedTrial(40, 985) // within the tolerance of cap 20: chosen stays 20
	ts := []*trial{slow, chosen, fastest}
	open := settle(ts, r, 3)
	if len(open) != 1 || open[0] != fastest {
		var caps []int
		for _, o := range open {
			caps = append(caps, o.cap)
		}
		t.Fatalf("settle left caps %v open, want [40]", caps)
	}
	fastest.runs = stagedTrial(40, 985, 1000, 995).runs
	if open := settle(ts, r, 3); len(open) != 0 {
		t.Fatalf("settle left %d caps open once the best cap ran every seed, want 0 (cap 10's one seed settles it)", len(open))
	}
	pts := []results.SweepPoint{slow.point(3), chosen.point(3), fastest.point(3)}
	if c, b, _ := r.Choose(pts); c != 20 || b != 40 {
		t.Fatalf("Choose = chosen %d, best %d; want 20 and 40", c, b)
	}
}
