package fakeapi

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/stat/distuv"
)

// sampler draws latencies from one distribution with a seeded source.
type sampler struct {
	dist Dist
	c    float64 // constant, ns
	uni  distuv.Uniform
	norm distuv.Normal
	logn distuv.LogNormal
	exp  distuv.Exponential
	par  distuv.Pareto
	emp  []float64 // sorted, ns
	rng  *rand.Rand
	cap  float64 // ns; 0: none
}

// z95 is the 95th percentile of the standard normal distribution.
var z95 = distuv.UnitNormal.Quantile(0.95)

// LogNormalParams returns the μ and σ (of the log of nanoseconds) of the
// lognormal distribution whose median is p50 and 95th percentile p95.
func LogNormalParams(p50, p95 time.Duration) (mu, sigma float64) {
	mu = math.Log(float64(p50))
	return mu, (math.Log(float64(p95)) - mu) / z95
}

func newSampler(c LatencyConfig, rng *rand.Rand) sampler {
	s := sampler{dist: c.Dist, rng: rng, cap: float64(c.Cap)}
	switch c.Dist {
	case DistUniform:
		s.uni = distuv.Uniform{Min: float64(c.Min), Max: float64(c.Max), Src: rng}
	case DistNormal:
		s.norm = distuv.Normal{Mu: float64(c.Mean), Sigma: float64(c.StdDev), Src: rng}
	case DistLogNormal:
		mu, sigma := LogNormalParams(c.P50, c.P95)
		s.logn = distuv.LogNormal{Mu: mu, Sigma: sigma, Src: rng}
	case DistExponential:
		s.exp = distuv.Exponential{Rate: 1 / float64(c.Mean), Src: rng}
	case DistPareto:
		s.par = distuv.Pareto{Xm: float64(c.Scale), Alpha: c.Alpha, Src: rng}
	case DistEmpirical:
		s.emp = make([]float64, len(c.Samples))
		for i, v := range c.Samples {
			s.emp[i] = float64(v)
		}
		slices.Sort(s.emp)
	default:
		s.dist = DistConstant
		s.c = float64(c.Value)
	}
	return s
}

// draw returns one latency in nanoseconds, never negative.
func (s *sampler) draw() float64 {
	var v float64
	switch s.dist {
	case DistConstant:
		v = s.c
	case DistUniform:
		v = s.uni.Rand()
	case DistNormal:
		v = s.norm.Rand()
	case DistLogNormal:
		v = s.logn.Rand()
	case DistExponential:
		v = s.exp.Rand()
	case DistPareto:
		v = s.par.Rand()
	case DistEmpirical:
		v = interpolate(s.emp, s.rng.Float64())
	}
	if v < 0 || math.IsNaN(v) {
		v = 0
	}
	if s.cap > 0 && v > s.cap {
		v = s.cap
	}
	return v
}

// interpolate returns the p-quantile of sorted data with linear
// interpolation between order statistics (the "type 7" definition).
func interpolate(sorted []float64, p float64) float64 {
	switch len(sorted) {
	case 0:
		return 0
	case 1:
		return sorted[0]
	}
	pos := p * float64(len(sorted)-1)
	i := int(pos)
	if i >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	f := pos - float64(i)
	return sorted[i] + f*(sorted[i+1]-sorted[i])
}

// ReadSamples parses observed latencies, one per line: a Go duration
// ("120ms", "1.5s") or a bare number of milliseconds. Blank lines and lines
// starting with # are skipped. Errors name the line.
func ReadSamples(r io.Reader) ([]time.Duration, error) {
	var out []time.Duration
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		t := strings.TrimSpace(sc.Text())
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		var d time.Duration
		if ms, err := strconv.ParseFloat(t, 64); err == nil && !math.IsNaN(ms) && math.Abs(ms) < 1e12 {
			d = time.Duration(ms * float64(time.Millisecond))
		} else if d, err = time.ParseDuration(t); err != nil {
			return nil, fmt.Errorf("line %d: %q is neither a duration nor milliseconds", line, t)
		}
		if d < 0 {
			return nil, fmt.Errorf("line %d: latency %v is negative", line, d)
		}
		out = append(out, d)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no latencies")
	}
	return out, nil
}
