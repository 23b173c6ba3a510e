package spec

import (
	"math"
	"math/rand/v2"
	"time"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/simbench/simbench/sched/satmath"
)

// z95 is the standard normal's 95th percentile.
var z95 = distuv.UnitNormal.Quantile(0.95)

// Sampler draws from one distribution. The caller passes the stream to
// draw from, so that one source's draws all come from its own stream.
// Drawing does not change the Sampler, so goroutines may share one.
//
// How each family draws (one or more values from the stream per draw, in
// this order):
//
//   - constant, and a uniform whose Min equals its Max: Value (or Min),
//     drawing nothing;
//   - uniform: Min + (Max−Min)·u, one Float64;
//   - normal, lognormal, exponential, Pareto: gonum's distuv samplers'
//     formulas, on one NormFloat64 (normal, lognormal) or ExpFloat64;
//   - empirical: one of Samples, picked by IntN.
//
// Draws below 0 (or NaN) count as 0; Max > 0 caps every family but
// uniform. The zero Dist draws 0 and touches no stream.
type Sampler struct {
	d Dist[float64]
	// family is d.Kind as a number, so that a draw switches on a byte
	// rather than comparing strings.
	family family
	// mu and sigma are a lognormal's, of the log of the unit; rate is an
	// exponential's, 1/Mean.
	mu, sigma, rate float64
}

// family is a distribution family, as Draw tells them apart.
type family uint8

const (
	famOther family = iota // a kind Problems refuses: draws 0
	famConstant
	famUniform
	famEmpirical
	famNormal
	famLognormal
	famExponential
	famPareto
)

// familyOf returns the family of kind k.
func familyOf(k DistKind) family {
	switch k {
	case "", DistConstant:
		return famConstant
	case DistUniform:
		return famUniform
	case DistEmpirical:
		return famEmpirical
	case DistNormal:
		return famNormal
	case DistLognormal:
		return famLognormal
	case DistExponential:
		return famExponential
	case DistPareto:
		return famPareto
	}
	return famOther
}

// NewSampler returns a sampler of d; d should pass Problems.
func NewSampler[T Unit](d Dist[T]) *Sampler {
	s := &Sampler{d: d.Float()}
	s.family = familyOf(s.d.Kind)
	switch s.family {
	case famLognormal:
		s.mu = math.Log(s.d.P50)
		s.sigma = (math.Log(s.d.P95) - s.mu) / z95
	case famExponential:
		s.rate = 1 / s.d.Mean
	}
	return s
}

// Draw returns the next value (≥ 0) from rng, in the distribution's unit
// (nanoseconds for durations).
func (s *Sampler) Draw(rng *rand.Rand) float64 {
	d := &s.d
	var v float64
	switch s.family {
	case famConstant:
		return d.Value
	case famUniform:
		if d.Min == d.Max {
			return d.Min
		}
		return max(rng.Float64()*(d.Max-d.Min)+d.Min, 0)
	case famEmpirical:
		if len(d.Samples) == 0 {
			return 0
		}
		return d.Samples[rng.IntN(len(d.Samples))]
	// The draws below are gonum's distuv Rand methods written out on rng
	// itself: the same formulas on the same stream, so the same values,
	// without the Rand that distuv wraps around its Src at every draw
	// (two interface calls per number drawn).
	case famNormal:
		v = rng.NormFloat64()*d.Stddev + d.Mean
	case famLognormal:
		v = math.Exp(rng.NormFloat64()*s.sigma + s.mu)
	case famExponential:
		v = rng.ExpFloat64() / s.rate
	case famPareto:
		v = d.Min * math.Exp(rng.ExpFloat64()/d.Alpha)
	}
	if d.Max > 0 && v > d.Max {
		v = d.Max
	}
	if !(v > 0) { // negative or NaN
		return 0
	}
	return v
}

// Duration draws a duration, saturated at the longest Duration.
func (s *Sampler) Duration(rng *rand.Rand) time.Duration {
	return satmath.FromFloat[time.Duration](s.Draw(rng))
}

// Count draws a whole number ≥ 0, saturated at the largest int.
func (s *Sampler) Count(rng *rand.Rand) int { return satmath.Int(math.Round(s.Draw(rng))) }

// Mean returns the distribution's mean, ignoring caps.
func (s *Sampler) Mean() float64 {
	d := s.d
	switch d.Kind {
	case DistUniform:
		return (d.Min + d.Max) / 2
	case DistNormal, DistExponential:
		return d.Mean
	case DistLognormal:
		return distuv.LogNormal{Mu: s.mu, Sigma: s.sigma}.Mean()
	case DistPareto:
		return distuv.Pareto{Xm: d.Min, Alpha: d.Alpha}.Mean()
	case DistEmpirical:
		var sum float64
		for _, v := range d.Samples {
			sum += v
		}
		if len(d.Samples) == 0 {
			return 0
		}
		return sum / float64(len(d.Samples))
	default:
		return d.Value
	}
}
