// Package judge decides whether a figure changed between two runs measured
// over seeds, for `simbench compare`: the one place its statistics live.
//
// Two cases, as benchstat's reasoning applied to a deterministic
// simulator:
//
//   - The same seeds on both sides (Paired): the simulator gives the same
//     figure for the same seed bit for bit, so the seeds pair up and any
//     difference beyond floating-point noise (Epsilon, relative) is caused
//     by what changed between the runs. It counts, whatever its size; its
//     direction is that of the mean difference. The effect's interval is
//     the 95% Student's t interval of the per-seed differences.
//   - Different seeds: the seeds' spread is noise, so a change counts only
//     when Welch's two-sample t-test (benchmath.AssumeNormal; per-seed
//     figures are means and percentiles over thousands of turns, near
//     normal) rejects "no change" at Alpha, family-wise over every figure
//     judged together (Holm's step-down, so comparing 50 figures at once
//     does not report a few chance differences as changes). A change that
//     is not significant is "within noise" only when the test had Power
//     (80%) to detect a change of MinEffect (5%) of the old mean, given
//     the seeds' spread; otherwise it is undecided, with the seeds a side
//     that would give it that power (SeedsNeeded). The effect's interval
//     is Welch's 95% interval of the difference of the means.
package judge

import (
	"fmt"
	"math"
	"slices"

	"golang.org/x/perf/benchmath"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/simbench/simbench/results"
)

// Defaults of Options.
const (
	// DefaultAlpha is the family-wise significance level: the chance that
	// two runs of the same configuration on different seeds show any
	// figure as changed is at most 5%.
	DefaultAlpha = 0.05
	// DefaultMinEffect is the smallest change, as a fraction of the old
	// mean, a comparison of different seeds must be able to detect before
	// it calls a figure within noise: 5%.
	DefaultMinEffect = 0.05
	// DefaultPower is the chance of detecting a change of MinEffect that
	// "within noise" requires: 80%.
	DefaultPower = 0.8
	// Epsilon is the relative difference below which two figures of the
	// same seed are the same (floating-point noise: sums taken in another
	// order, a rounding to the microsecond).
	Epsilon = 1e-9
	// MaxSeeds is the most seeds a side SeedsNeeded reports; a figure that
	// would need more gets MaxSeeds + 1 ("more than 10,000").
	MaxSeeds = 10000
)

// Options tune the comparison of different seeds; the zero value uses the
// defaults. Paired comparisons need none.
type Options struct {
	// Alpha is the family-wise significance level, MinEffect the change to
	// detect as a fraction of the old mean, and Power the chance of
	// detecting it, each in (0, 1) (0: DefaultAlpha, DefaultMinEffect,
	// DefaultPower).
	Alpha, MinEffect, Power float64
}

func (o Options) withDefaults() Options {
	if o.Alpha == 0 {
		o.Alpha = DefaultAlpha
	}
	if o.MinEffect == 0 {
		o.MinEffect = DefaultMinEffect
	}
	if o.Power == 0 {
		o.Power = DefaultPower
	}
	return o
}

// Outcome is what a comparison concluded about one figure.
type Outcome int

const (
	// Same: no difference (paired: none beyond floating-point noise;
	// different seeds: every seed of both sides gave the same value).
	Same Outcome = iota
	// Up: the figure rose, and the change counts.
	Up
	// Down: the figure fell, and the change counts.
	Down
	// Noise: not significant, and the test could have detected a change
	// of MinEffect.
	Noise
	// Undecided: not significant, and too few seeds to tell a change of
	// MinEffect from noise (Judgement.SeedsNeeded says how many would).
	Undecided
)

// String names the outcome: "same", "up", "down", "noise", "undecided".
func (o Outcome) String() string {
	switch o {
	case Same:
		return "same"
	case Up:
		return "up"
	case Down:
		return "down"
	case Noise:
		return "noise"
	case Undecided:
		return "undecided"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// Sample is one figure's values on both sides, one per seed.
type Sample struct {
	// Old and New are the figure's values of the old and the new run, one
	// per seed, in the figure's own unit.
	Old, New []float64
	// Paired says both sides ran the same seeds, in the same order.
	Paired bool
}

// Judgement is the outcome for one Sample.
type Judgement struct {
	// Outcome is what the comparison concluded.
	Outcome Outcome
	// Delta is the mean of New minus the mean of Old; Lo and Hi bound its
	// 95% interval (paired: of the per-seed differences; different seeds:
	// Welch's), equal to Delta with one seed a side or no spread, NaN
	// when an infinite value (a turn never answered) leaves no interval.
	Delta, Lo, Hi float64
	// P is Welch's p-value before Holm's adjustment, NaN for a paired or
	// untested sample.
	P float64
	// SeedsNeeded is, for Undecided, the seeds a side with which the test
	// would detect a change of MinEffect with Power, given the spread
	// measured (MaxSeeds+1: more than MaxSeeds); 0 otherwise.
	SeedsNeeded int
}

// Judge judges every sample, Holm's adjustment taken over the unpaired
// ones together.
func Judge(samples []Sample, opt Options) []Judgement {
	opt = opt.withDefaults()
	out := make([]Judgement, len(samples))
	var tested []int // unpaired samples with a p-value
	for i, s := range samples {
		if s.Paired {
			out[i] = paired(s.Old, s.New)
			continue
		}
		out[i] = unpaired(s.Old, s.New)
		if !math.IsNaN(out[i].P) {
			tested = append(tested, i)
		}
	}
	m := len(tested)
	for i, s := range samples {
		if !s.Paired && out[i].Outcome == Undecided && !math.IsInf(out[i].Delta, 0) && !math.IsNaN(out[i].Delta) {
			// One seed on a side: the other side's spread, if it has one,
			// says how many seeds would do.
			out[i].SeedsNeeded = SeedsNeeded(s.Old, s.New, opt.MinEffect, opt.Alpha/float64(max(m, 1)), opt.Power)
		}
	}
	for i, ok := range holm(tested, out, opt.Alpha) {
		j := &out[tested[i]]
		switch {
		case ok:
			j.Outcome = direction(j.Delta)
		default:
			s := samples[tested[i]]
			n := SeedsNeeded(s.Old, s.New, opt.MinEffect, opt.Alpha/float64(m), opt.Power)
			if n <= min(len(s.Old), len(s.New)) {
				j.Outcome = Noise
			} else {
				j.Outcome, j.SeedsNeeded = Undecided, n
			}
		}
	}
	return out
}

// holm reports, for each of the tested samples (indices into js), whether
// Holm's step-down procedure rejects its null hypothesis at family-wise
// level alpha: sorted by p, the k-th smallest (from 0) is rejected while
// p ≤ alpha/(m−k), and none after the first that is not. (No library the
// project uses has it; it is these few lines.)
func holm(tested []int, js []Judgement, alpha float64) []bool {
	order := make([]int, len(tested))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmpFloat(js[tested[a]].P, js[tested[b]].P) })
	rejected := make([]bool, len(tested))
	m := len(tested)
	for k, i := range order {
		if js[tested[i]].P > alpha/float64(m-k) {
			break
		}
		rejected[i] = true
	}
	return rejected
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// direction is Up, Down or Same by the sign of d.
func direction(d float64) Outcome {
	switch {
	case d > 0:
		return Up
	case d < 0:
		return Down
	}
	return Same
}

// same reports whether a and b are equal within floating-point noise.
func same(a, b float64) bool {
	if a == b {
		return true
	}
	if math.IsInf(a, 0) || math.IsInf(b, 0) {
		return false
	}
	return math.Abs(a-b) <= Epsilon*max(math.Abs(a), math.Abs(b))
}

// paired judges the same seeds on both sides: any difference counts.
func paired(xs, ys []float64) Judgement {
	j := Judgement{P: math.NaN()}
	ds := make([]float64, len(xs))
	changed := false
	for i := range xs {
		switch {
		case same(xs[i], ys[i]):
			ds[i] = 0
		default:
			ds[i] = ys[i] - xs[i]
			changed = true
		}
	}
	if !changed {
		j.Lo, j.Hi = 0, 0
		return j
	}
	iv := results.IntervalOf(ds)
	j.Delta, j.Lo, j.Hi = iv.Mean, iv.Lo, iv.Hi
	if math.IsInf(iv.Mean, 0) || math.IsNaN(iv.Mean) {
		// A seed answered on one side only: the change is certain, its
		// size is not a number. Its direction is the infinite side's.
		j.Delta, j.Lo, j.Hi = infDelta(xs, ys), math.NaN(), math.NaN()
	}
	j.Outcome = direction(j.Delta)
	if j.Outcome == Same {
		// The seeds moved in both directions and cancel out exactly: a
		// change nonetheless; call it a rise so that a rise-is-worse figure
		// fails CI rather than passing it.
		j.Outcome = Up
	}
	return j
}

// infDelta is +Inf when some new value is infinite and no old one is, -Inf
// in the opposite case, NaN when both sides have one.
func infDelta(xs, ys []float64) float64 {
	inf := func(vs []float64) bool {
		return slices.ContainsFunc(vs, func(v float64) bool { return math.IsInf(v, 0) })
	}
	switch {
	case inf(ys) && !inf(xs):
		return math.Inf(1)
	case inf(xs) && !inf(ys):
		return math.Inf(-1)
	}
	return math.NaN()
}

// unpaired judges different seeds up to the test; Judge applies Holm's
// adjustment. P is NaN when the sample cannot be tested.
func unpaired(xs, ys []float64) Judgement {
	j := Judgement{P: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	if slices.ContainsFunc(slices.Concat(xs, ys), func(v float64) bool { return math.IsInf(v, 0) || math.IsNaN(v) }) {
		if slices.Equal(xs, ys) || (allEqual(xs) && allEqual(ys) && xs[0] == ys[0]) {
			return Judgement{Outcome: Same, P: math.NaN()}
		}
		// A seed never answered: no mean, no test.
		j.Outcome, j.Delta = Undecided, infDelta(xs, ys)
		return j
	}
	m1, m2 := stat.Mean(xs, nil), stat.Mean(ys, nil)
	j.Delta = m2 - m1
	if allEqual(xs) && allEqual(ys) {
		// No spread on either side: every seed agrees, so the sides'
		// difference is certain (or there is none).
		j.Lo, j.Hi = j.Delta, j.Delta
		if xs[0] == ys[0] {
			j.Delta, j.Lo, j.Hi = 0, 0, 0
			return j
		}
		if len(xs) >= 2 && len(ys) >= 2 {
			j.P = 0
			return j
		}
	}
	if len(xs) < 2 || len(ys) < 2 {
		j.Outcome = Undecided // Judge says how many seeds would do
		return j
	}
	j.Lo, j.Hi = welchInterval(xs, ys)
	thr := benchmath.DefaultThresholds
	c := benchmath.AssumeNormal.Compare(benchmath.NewSample(slices.Clone(xs), &thr), benchmath.NewSample(slices.Clone(ys), &thr))
	j.P = c.P
	return j
}

func allEqual(xs []float64) bool { return len(xs) > 0 && slices.Min(xs) == slices.Max(xs) }

// welchInterval is the 95% interval of mean(ys) − mean(xs), Welch's: the
// standard error from each side's own variance, the degrees of freedom by
// Welch–Satterthwaite.
func welchInterval(xs, ys []float64) (lo, hi float64) {
	v1, v2 := stat.Variance(xs, nil)/float64(len(xs)), stat.Variance(ys, nil)/float64(len(ys))
	d := stat.Mean(ys, nil) - stat.Mean(xs, nil)
	se := math.Sqrt(v1 + v2)
	if se == 0 {
		return d, d
	}
	df := (v1 + v2) * (v1 + v2) / (v1*v1/float64(len(xs)-1) + v2*v2/float64(len(ys)-1))
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(0.975)
	return d - t*se, d + t*se
}

// SeedsNeeded returns the fewest seeds a side (at least 2) with which a
// two-sided two-sample t-test at level alpha detects, with the given
// power, a change of minEffect × the old mean (the new one when the old is
// 0), the seeds' spread being the pooled standard deviation of xs and ys.
// The power of n a side is computed from the shifted central t
// distribution (noncentrality δ/(s·√(2/n)), 2n−2 degrees of freedom), a
// close approximation of the noncentral t. MaxSeeds+1 when even MaxSeeds
// would not do; 2 when neither side has two seeds to measure a spread.
func SeedsNeeded(xs, ys []float64, minEffect, alpha, power float64) int {
	var ss []float64
	if len(xs) >= 2 {
		ss = append(ss, stat.Variance(xs, nil))
	}
	if len(ys) >= 2 {
		ss = append(ss, stat.Variance(ys, nil))
	}
	if len(ss) == 0 {
		return 2
	}
	sd := math.Sqrt(stat.Mean(ss, nil))
	ref := math.Abs(stat.Mean(xs, nil))
	if ref == 0 {
		ref = math.Abs(stat.Mean(ys, nil))
	}
	delta := minEffect * ref
	if sd == 0 {
		return 2
	}
	if delta == 0 {
		return MaxSeeds + 1
	}
	enough := func(n int) bool { return powerOf(n, delta/sd, alpha) >= power }
	// Power rises with n: double to a bound that is enough, then bisect.
	lo, hi := 1, 2 // lo is not enough (or below 2), hi is to be tried
	for !enough(hi) {
		if hi >= MaxSeeds {
			return MaxSeeds + 1
		}
		lo, hi = hi, min(2*hi, MaxSeeds)
	}
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if enough(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// powerOf is the power of a two-sided two-sample t-test with n a side at
// level alpha against an effect of d standard deviations.
func powerOf(n int, d, alpha float64) float64 {
	df := float64(2*n - 2)
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}
	crit := t.Quantile(1 - alpha/2)
	ncp := d / math.Sqrt(2/float64(n))
	return 1 - t.CDF(crit-ncp) + t.CDF(-crit-ncp)
}
