package decision

import (
	"math"
	"testing"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
)

// seeded is a point whose seeds' p95s are xs (every turn answered, no
// 429), with its means as SweepPointOf makes them.
func seeded(c int, xs ...float64) results.SweepPoint {
	p := pointOver(xs)
	p.Cap = c
	for _, x := range xs {
		p.PerSeed = append(p.PerSeed, results.SeedFigures{P95Ms: results.AnswerMs(x), AnsweredShare: 1})
	}
	return p
}

// studentT2 is Student's t quantile at p with 2 degrees of freedom, in
// closed form: (2p − 1) ÷ √(2p(1 − p)).
func studentT2(p float64) float64 { return (2*p - 1) / math.Sqrt(2*p*(1-p)) }

// Compare is a one-sided paired t-test on the seeds' log ratios at
// Alpha/Looks, margin ln(1 + tolerance): worked out here from the closed
// form of Student's quantile with 2 degrees of freedom.
func TestCompareIsThePairedTest(t *testing.T) {
	rule := Rule{MaxShare: DefaultMaxRateLimitedShare}
	tq := studentT2(1 - Alpha/Looks) // 6.205
	margin := math.Log(1.05)
	for _, tc := range []struct {
		name string
		d    [3]float64 // each seed's ln(a ÷ b)
	}{
		{"a hair slower, consistently", [3]float64{0.015, 0.02, 0.025}},
		{"a hair slower, noisily", [3]float64{0.01, 0.02, 0.03}},
		{"much slower", [3]float64{0.19, 0.2, 0.21}},
		{"faster", [3]float64{-0.1, -0.12, -0.08}},
		{"near the margin, noisily", [3]float64{0.0, 0.05, 0.1}},
	} {
		var xa, xb []float64
		for i, d := range tc.d {
			b := 1000 + 300*float64(i)
			xa, xb = append(xa, b*math.Exp(d)), append(xb, b)
		}
		mean := (tc.d[0] + tc.d[1] + tc.d[2]) / 3
		ss := 0.0
		for _, d := range tc.d {
			ss += (d - mean) * (d - mean)
		}
		se := tq * math.Sqrt(ss/2) / math.Sqrt(3)
		want := Undecided
		switch {
		case mean+se <= margin:
			want = NoWorse
		case mean-se > margin:
			want = Worse
		}
		if got := rule.Compare(seeded(1, xa...), seeded(2, xb...)); got != want {
			t.Errorf("%s: Compare = %v, want %v (mean %.4f ± %.4f against %.4f)", tc.name, got, want, mean, se, margin)
		}
	}
	// The cases reach every finding.
	a, b := seeded(1, 1015, 1320, 1640), seeded(2, 1000, 1300, 1600)
	if rule.Compare(a, b) != NoWorse || rule.Compare(seeded(1, 1200, 1600, 1900), b) != Worse || rule.Compare(seeded(1, 1000, 1370, 1770), b) != Undecided {
		t.Error("the three findings are not all reached")
	}
}

// The first case: cap 3 answers 39% slower than cap 5 with
// overlapping intervals; the rule no longer takes it. Cap 4 is within 1%
// of cap 5 on every seed, so it is taken.
func TestRuleNoLongerTakesASlowerCapForOverlappingIntervals(t *testing.T) {
	base := []float64{4200, 8600, 5200, 7600, 8000, 4600, 7900, 5800, 8300, 4150}
	scale := func(f float64, noise ...float64) []float64 {
		out := make([]float64, len(base))
		for i, x := range base {
			out[i] = x * f * (1 + noise[i%len(noise)])
		}
		return out
	}
	pts := []results.SweepPoint{
		seeded(3, scale(1.39, -0.1, 0.08, -0.05, 0.1, 0.02)...),
		seeded(4, scale(1.01, 0, 0.002, -0.002)...),
		seeded(5, base...),
	}
	if !(pts[0].P95LoMs <= pts[2].P95HiMs) {
		t.Fatalf("the intervals must overlap for the case to be the issue's: %+v", pts)
	}
	rule := Rule{MaxShare: DefaultMaxRateLimitedShare}
	if c, b, _ := rule.Choose(pts); c != 4 || b != 5 {
		t.Errorf("chosen %d, best %d; want 4 (no worse than 5 on every seed), 5", c, b)
	}
}

// The objective decides what "better" is: the cheapest cap under a cost
// objective, the one answering the most turns under completion.
func TestRuleObjective(t *testing.T) {
	pts := []results.SweepPoint{
		{Cap: 2, P95Ms: 9000, AnsweredShare: 0.99, CostPerAnsweredTaskUSD: 0.01},
		{Cap: 4, P95Ms: 5000, AnsweredShare: 0.96, CostPerAnsweredTaskUSD: 0.02},
		{Cap: 8, P95Ms: 4000, AnsweredShare: 0.97, CostPerAnsweredTaskUSD: 0.05},
	}
	for _, tc := range []struct {
		o    scenarios.Objective
		want int
	}{{"", 8}, {scenarios.ObjectiveCost, 2}, {scenarios.ObjectiveCompletion, 2}} {
		if c, _, _ := (Rule{MaxShare: 0.001, Objective: tc.o}).Choose(pts); c != tc.want {
			t.Errorf("objective %q: chosen %d, want %d", tc.o, c, tc.want)
		}
	}
}
