package fakeapi

import (
	"math/rand/v2"

	"github.com/simbench/simbench/spec"
)

// sampler draws from one distribution (spec.Sampler) with the stream
// the model gave it.
type sampler struct {
	s   *spec.Sampler
	rng *rand.Rand
}

func newSampler[T spec.Unit](d spec.Dist[T], rng *rand.Rand) sampler {
	return sampler{s: spec.NewSampler(d), rng: rng}
}

// draw returns one value in the distribution's unit (nanoseconds for a
// latency), never negative.
func (s *sampler) draw() float64 { return s.s.Draw(s.rng) }
