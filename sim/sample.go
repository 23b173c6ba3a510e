package sim

import (
	"math"
	"math/rand/v2"
	"time"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sched/satmath"
)

// z95 is the standard normal's 95th percentile.
var z95 = distuv.UnitNormal.Quantile(0.95)

// sampler draws from a scenario distribution; the caller passes the stream
// to draw from, so one turn's draws can all come from the turn's own stream.
// Drawing does not change the sampler, so goroutines may share one.
type sampler struct {
	d scenarios.Dist[float64]
	// one of these is used, per d.Kind
	uni  distuv.Uniform
	norm distuv.Normal
	logn distuv.LogNormal
	exp  distuv.Exponential
	par  distuv.Pareto
}

func newSampler[T time.Duration | float64](d scenarios.Dist[T]) *sampler {
	f := scenarios.Dist[float64]{
		Kind: d.Kind, Value: float64(d.Value), Min: float64(d.Min), Max: float64(d.Max),
		Mean: float64(d.Mean), Stddev: float64(d.Stddev), P50: float64(d.P50), P95: float64(d.P95), Alpha: d.Alpha,
	}
	for _, s := range d.Samples {
		f.Samples = append(f.Samples, float64(s))
	}
	s := &sampler{d: f}
	switch f.Kind {
	case scenarios.DistUniform:
		s.uni = distuv.Uniform{Min: f.Min, Max: f.Max}
	case scenarios.DistNormal:
		s.norm = distuv.Normal{Mu: f.Mean, Sigma: f.Stddev}
	case scenarios.DistLognormal:
		mu := math.Log(f.P50)
		s.logn = distuv.LogNormal{Mu: mu, Sigma: math.Log(f.P95/f.P50) / z95}
	case scenarios.DistExponential:
		s.exp = distuv.Exponential{Rate: 1 / f.Mean}
	case scenarios.DistPareto:
		s.par = distuv.Pareto{Xm: f.Min, Alpha: f.Alpha}
	}
	return s
}

// draw returns the next value (≥ 0) from rng, capped by Max where the family allows a cap.
func (s *sampler) draw(rng *rand.Rand) float64 {
	var v float64
	switch s.d.Kind {
	case "", scenarios.DistConstant:
		return s.d.Value
	case scenarios.DistUniform:
		if s.d.Min == s.d.Max {
			return s.d.Min
		}
		d := s.uni
		d.Src = rng
		v = d.Rand()
	case scenarios.DistNormal:
		d := s.norm
		d.Src = rng
		v = d.Rand()
	case scenarios.DistLognormal:
		d := s.logn
		d.Src = rng
		v = d.Rand()
	case scenarios.DistExponential:
		d := s.exp
		d.Src = rng
		v = d.Rand()
	case scenarios.DistPareto:
		d := s.par
		d.Src = rng
		v = d.Rand()
	case scenarios.DistEmpirical:
		if len(s.d.Samples) == 0 {
			return 0
		}
		return s.d.Samples[rng.IntN(len(s.d.Samples))]
	}
	if s.d.Kind != scenarios.DistUniform && s.d.Max > 0 && v > s.d.Max {
		v = s.d.Max
	}
	return max(v, 0)
}

// duration draws a duration, saturated at the longest Duration.
func (s *sampler) duration(rng *rand.Rand) time.Duration {
	return satmath.FromFloat[time.Duration](s.draw(rng))
}

// count draws a whole number ≥ 0, saturated at the largest int.
func (s *sampler) count(rng *rand.Rand) int { return satmath.Int(math.Round(s.draw(rng))) }

// mean returns the distribution's mean (used by recommendations), ignoring caps.
func (s *sampler) mean() float64 {
	d := s.d
	switch d.Kind {
	case scenarios.DistUniform:
		return (d.Min + d.Max) / 2
	case scenarios.DistNormal, scenarios.DistExponential:
		return d.Mean
	case scenarios.DistLognormal:
		return s.logn.Mean()
	case scenarios.DistPareto:
		return s.par.Mean()
	case scenarios.DistEmpirical:
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
