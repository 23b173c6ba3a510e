package setup

import (
	"math/rand/v2"
	"time"

	"github.com/simbench/simbench/spec"
)

// Sampler draws from a scenario distribution with the one sampler of the
// service vocabulary (spec.Sampler), which the fake services draw their
// latencies with too; the caller passes the stream to draw from, so one
// turn's draws can all come from the turn's own stream.
type Sampler struct{ s *spec.Sampler }

// NewSampler returns the sampler of the distribution d.
func NewSampler[T spec.Unit](d spec.Dist[T]) *Sampler { return &Sampler{spec.NewSampler(d)} }

// Draw returns the next value (≥ 0) from rng, capped by Max where the family allows a cap.
func (s *Sampler) Draw(rng *rand.Rand) float64 { return s.s.Draw(rng) }

// Duration draws a duration, saturated at the longest Duration.
func (s *Sampler) Duration(rng *rand.Rand) time.Duration { return s.s.Duration(rng) }

// Count draws a whole number ≥ 0, saturated at the largest int.
func (s *Sampler) Count(rng *rand.Rand) int { return s.s.Count(rng) }

// Mean returns the distribution's mean (used by recommendations), ignoring caps.
func (s *Sampler) Mean() float64 { return s.s.Mean() }
