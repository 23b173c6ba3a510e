package calibrate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// DefaultKSMax is the Kolmogorov–Smirnov distance above which a lognormal
// fit is judged poor and the sample is written as an empirical
// distribution instead. 0.05 means the fitted CDF is at most 5 percentage
// points off the data's anywhere: percentiles the simulator draws stay
// within a few percent of the recorded ones.
const DefaultKSMax = 0.05

// DefaultReservoir is the most values kept per distribution for the
// Kolmogorov–Smirnov distance and empirical files (a uniform reservoir
// sample of all values); the lognormal parameters use every value.
const DefaultReservoir = 100_000

// lilliefors is the 5% critical value of the Kolmogorov–Smirnov distance
// to a normal (here: lognormal) distribution whose parameters were
// estimated from the same n values, times √n (Lilliefors' test, large n).
// A smaller sample judged against DefaultKSMax alone would be called poor
// for its noise: the threshold is the larger of the two.
const lilliefors = 0.886

// empiricalPoints is the most values an empirical file holds: the sample's
// quantiles at evenly spaced probabilities, which resample like the sample.
const empiricalPoints = 2000

// sample accumulates one distribution's values in bounded memory: running
// moments of all values and of their logarithms (Welford's method), and a
// reservoir sample of at most cap values.
type sample struct {
	n         int64
	mean, m2  float64 // of the values
	lmean, l2 float64 // of the logs of the values above 0
	ln        int64   // values above 0
	min, max  float64
	keep      []float64
	sortedTo  int64 // n when keepSorted was made; -1 before
	sortedV   []float64
	cap       int
	rng       *rand.Rand
}

func newSample(capacity int, rng *rand.Rand) *sample {
	return &sample{cap: capacity, rng: rng, min: math.Inf(1), max: math.Inf(-1)}
}

func (s *sample) add(x float64) {
	s.n++
	d := x - s.mean
	s.mean += d / float64(s.n)
	s.m2 += d * (x - s.mean)
	s.min, s.max = min(s.min, x), max(s.max, x)
	if x > 0 {
		s.ln++
		lx := math.Log(x)
		d := lx - s.lmean
		s.lmean += d / float64(s.ln)
		s.l2 += d * (lx - s.lmean)
	}
	if len(s.keep) < s.cap {
		s.keep = append(s.keep, x)
	} else if j := s.rng.Int64N(s.n); j < int64(s.cap) {
		s.keep[j] = x
	}
}

// stddev is the population standard deviation of the values.
func (s *sample) stddev() float64 {
	if s.n == 0 {
		return 0
	}
	return math.Sqrt(s.m2 / float64(s.n))
}

// LognormalFit is a lognormal distribution fitted to a sample by maximum
// likelihood, with how well it fits.
type LognormalFit struct {
	// N is the number of values fitted (those above 0).
	N int64
	// Zeros counts the values of 0, which a lognormal cannot hold and the
	// fit leaves out.
	Zeros int64
	// Mu and Sigma are the maximum-likelihood estimates: the mean and the
	// population standard deviation of the natural logs of the values
	// (in ln seconds for latencies).
	Mu, Sigma float64
	// KS is the Kolmogorov–Smirnov distance between the sample (or its
	// reservoir) and the fitted distribution: the largest gap between the
	// two CDFs, from 0 to 1.
	KS float64
	// KSMax is the threshold KS was judged against: the larger of the
	// one asked for and the 5% critical value of Lilliefors' test for this
	// many values (0.886/√n), so that sampling noise alone never makes a
	// fit poor.
	KSMax float64
	// Poor says the fit is poor: KS above KSMax, or too few values (fewer
	// than 2, or Sigma of 0).
	Poor bool
	// Reason says why the fit is poor, or that it is good, in words.
	Reason string
}

// Dist returns the fitted distribution.
func (f LognormalFit) Dist() distuv.LogNormal { return distuv.LogNormal{Mu: f.Mu, Sigma: f.Sigma} }

// FitLognormal fits a lognormal distribution to values by maximum
// likelihood and measures the Kolmogorov–Smirnov distance to it; ksMax
// (0: DefaultKSMax), raised to Lilliefors' 5% critical value for small
// samples, decides whether the fit is poor. Values of 0 or below
// are counted in Zeros and left out.
func FitLognormal(values []float64, ksMax float64) LognormalFit {
	s := newSample(len(values), nil)
	for _, v := range values {
		s.add(v)
	}
	return s.lognormal(ksMax)
}

func (s *sample) lognormal(ksMax float64) LognormalFit {
	if ksMax <= 0 {
		ksMax = DefaultKSMax
	}
	f := LognormalFit{N: s.ln, Zeros: s.n - s.ln, KSMax: ksMax}
	if s.ln < 2 {
		f.Poor, f.Reason = true, "fewer than 2 values above 0"
		return f
	}
	f.Mu, f.Sigma = s.lmean, math.Sqrt(s.l2/float64(s.ln))
	// A spread below a millionth of the values is float rounding (times
	// subtracted at 3×10^7 s): the lognormal's p50 and p95 would print
	// the same, which a scenario refuses.
	if f.Sigma < 1e-6 {
		f.Poor, f.Reason = true, "every value is the same"
		return f
	}
	sorted := s.sorted()
	f.KS = ksDistance(sorted, f.Dist())
	f.KSMax = max(ksMax, lilliefors/math.Sqrt(float64(len(sorted))))
	switch {
	case f.KS > f.KSMax:
		f.Poor, f.Reason = true, fmt.Sprintf("KS distance %.4f > %.4f, the larger of the threshold %.2f and Lilliefors' 5%% critical value for %d values", f.KS, f.KSMax, ksMax, len(sorted))
	case f.Zeros > 0 && float64(f.Zeros) > ksMax*float64(s.n):
		f.Poor, f.Reason = true, fmt.Sprintf("%d of %d values are 0, which a lognormal cannot draw", f.Zeros, s.n)
	default:
		f.Reason = fmt.Sprintf("KS distance %.4f ≤ %.4f", f.KS, f.KSMax)
	}
	return f
}

// sorted returns the reservoir in increasing order, sorted once per
// change.
func (s *sample) sorted() []float64 {
	if s.sortedV == nil || s.sortedTo != s.n {
		s.sortedV = append(s.sortedV[:0], s.keep...)
		slices.Sort(s.sortedV)
		s.sortedTo = s.n
	}
	return s.sortedV
}

// ksDistance is the one-sample Kolmogorov–Smirnov statistic of sorted
// values against the distribution d: the largest distance between d's CDF
// and the sample's empirical CDF, checked on both sides of every step.
func ksDistance(sorted []float64, d distuv.LogNormal) float64 {
	n := float64(len(sorted))
	var ks float64
	for i, x := range sorted {
		c := d.CDF(x)
		ks = max(ks, c-float64(i)/n, float64(i+1)/n-c)
	}
	return ks
}

// quantiles returns up to points values of the sample at evenly spaced
// probabilities (i + 0.5) / points: a compact stand-in for the sample
// that resamples like it.
func (s *sample) quantiles(points int) []float64 {
	sorted := s.sorted()
	if len(sorted) <= points {
		return sorted
	}
	out := make([]float64, points)
	for i := range out {
		out[i] = stat.Quantile((float64(i)+0.5)/float64(points), stat.Empirical, sorted, nil)
	}
	return out
}

// quantile returns the sample's p-quantile (from its reservoir).
func (s *sample) quantile(p float64) float64 {
	if len(s.keep) == 0 {
		return 0
	}
	return stat.Quantile(p, stat.Empirical, s.sorted(), nil)
}
