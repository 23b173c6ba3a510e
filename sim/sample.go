package sim

import (
	"math/rand/v2"
	"time"

	"github.com/simbench/simbench/spec"
)

// sampler draws from a scenario distribution with the one sampler of the
// service vocabulary (spec.Sampler), which the fake services draw their
// latencies with too; the caller passes the stream to draw from, so one
// turn's draws can all come from the turn's own stream.
type sampler struct{ s *spec.Sampler }

func NewSampler[T spec.Unit](d spec.Dist[T]) *sampler { return &sampler{spec.NewSampler(d)} }

// draw returns the next value (≥ 0) from rng, capped by Max where the family allows a cap.
func (s *sampler) draw(rng *rand.Rand) float64 { return s.s.Draw(rng) }

// duration draws a duration, saturated at the longest Duration.
func (s *sampler) duration(rng *rand.Rand) time.Duration { return s.s.Duration(rng) }

// count draws a whole number ≥ 0, saturated at the largest int.
func (s *sampler) count(rng *rand.Rand) int { return s.s.Count(rng) }

// Mean returns the distribution's mean (used by recommendations), ignoring caps.
func (s *sampler) Mean() float64 { return s.s.Mean() }
