package spec

import (
	"math"
	"math/rand/v2"
	"time"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/simbench/simbench/internal/satmath"
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
//   - normal, lognormal, exponential, Pareto: gonum's distuv samplers;
//   - empirical: one of Samples, picked by IntN.
//
// Draws below 0 (or NaN) count as 0; Max > 0 caps every family but
// uniform. The zero Dist draws 0 and touches no stream.
type Sampler struct {
	d Dist[float64]
	// one of these is used, per d.Kind
	uni  distuv.Uniform
	norm distuv.Normal
	logn distuv.LogNormal
	exp  distuv.Exponential
	par  distuv.Pareto
}

// NewSampler returns a sampler of d; d should pass Problems.
func NewSampler[T Unit](d Dist[T]) *Sampler {
	f := d.Float()
	s := &Sampler{d: f}
	switch f.Kind {
	case DistUniform:
		s.uni = distuv.Uniform{Min: f.Min, Max: f.Max}
	case DistNormal:
		s.norm = distuv.Normal{Mu: f.Mean, Sigma: f.Stddev}
	case DistLognormal:
		mu := math.Log(f.P50)
		s.logn = distuv.LogNormal{Mu: mu, Sigma: (math.Log(f.P95) - mu) / z95}
	case DistExponential:
		s.exp = distuv.Exponential{Rate: 1 / f.Mean}
	case DistPareto:
		s.par = distuv.Pareto{Xm: f.Min, Alpha: f.Alpha}
	}
	return s
}

// Draw returns the next value (≥ 0) from rng, in the distribution's unit
// (nanoseconds for durations).
func (s *Sampler) Draw(rng *rand.Rand) float64 {
	var v float64
	switch s.d.Kind {
	case "", DistConstant:
		return s.d.Value
	case DistUniform:
		if s.d.Min == s.d.Max {
			return s.d.Min
		}
		d := s.uni
		d.Src = rng
		return max(d.Rand(), 0)
	case DistNormal:
		d := s.norm
		d.Src = rng
		v = d.Rand()
	case DistLognormal:
		d := s.logn
		d.Src = rng
		v = d.Rand()
	case DistExponential:
		d := s.exp
		d.Src = rng
		v = d.Rand()
	case DistPareto:
		d := s.par
		d.Src = rng
		v = d.Rand()
	case DistEmpirical:
		if len(s.d.Samples) == 0 {
			return 0
		}
		return s.d.Samples[rng.IntN(len(s.d.Samples))]
	}
	if s.d.Max > 0 && v > s.d.Max {
		v = s.d.Max
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
		return s.logn.Mean()
	case DistPareto:
		return s.par.Mean()
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
