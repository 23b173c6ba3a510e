package decision

import (
	"math/rand/v2"
	"testing"

	"github.com/simbench/simbench/results"
)

// pointOver is the point SweepPointOf makes of seeds whose p95s are xs.
func pointOver(xs []float64) results.SweepPoint {
	iv := results.IntervalOf(xs)
	return results.SweepPoint{Cap: 1, P95Ms: results.AnswerMs(iv.Mean), P95LoMs: results.AnswerMs(iv.Lo), P95HiMs: results.AnswerMs(iv.Hi),
		Seeds: len(xs), AnsweredShare: 1}
}

// The p95's interval holds every seed's value over 2 to 4 seeds, and not
// over 5: what cannotBeFaster rests on.
func TestIntervalCoversSeedsUpToFour(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := 2; n <= 4; n++ {
		if !intervalCoversSeeds(n) {
			t.Fatalf("intervalCoversSeeds(%d) = false", n)
		}
		for range 20000 {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = r.ExpFloat64() * 1000
			}
			xs[0] *= 1 + 10*r.Float64() // one far seed, the worst case
			iv := results.IntervalOf(xs)
			for _, x := range xs {
				if x < iv.Lo || x > iv.Hi {
					t.Fatalf("%d seeds %v: interval [%v, %v] leaves out %v", n, xs, iv.Lo, iv.Hi, x)
				}
			}
		}
	}
	if intervalCoversSeeds(5) {
		t.Fatal("intervalCoversSeeds(5) = true")
	}
	if iv := results.IntervalOf([]float64{0, 0, 0, 0, 1}); iv.Hi >= 1 {
		t.Fatalf("5 seeds [0 0 0 0 1]: interval [%v, %v] holds 1; the check would be too strict", iv.Lo, iv.Hi)
	}
}

// A pace that cannotBeFaster rules out after one seed is never faster
// than its own point over all seeds, whatever the other seeds measure,
// nor over the one seed it keeps.
func TestCannotBeFasterHoldsWhateverTheOtherSeeds(t *testing.T) {
	rule := Rule{MaxShare: DefaultMaxRateLimitedShare}
	r := rand.New(rand.NewPCG(3, 4))
	ruled := 0
	for range 20000 {
		own := pointOver([]float64{3000 + 200*r.Float64(), 3000 + 200*r.Float64(), 3000 + 200*r.Float64()})
		first := results.SweepPoint{Cap: 1, P95Ms: results.AnswerMs(2800 + 600*r.Float64()), AnsweredShare: 1, Seeds: 1}
		if !rule.cannotBeFaster([]results.SweepPoint{first}, 3, &own) {
			continue
		}
		ruled++
		if rule.faster(&first, &own) {
			t.Fatalf("one seed %v ruled out but faster than %+v", first.P95Ms, own)
		}
		for range 20 {
			all := pointOver([]float64{float64(first.P95Ms), 3500 * r.Float64(), 3500 * r.Float64()})
			if rule.faster(&all, &own) {
				t.Fatalf("first seed %v ruled out, but over all seeds %+v is faster than %+v", first.P95Ms, all, own)
			}
		}
	}
	if ruled == 0 {
		t.Fatal("no first seed was ruled out: the test checks nothing")
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
