package sim

import (
	"math/rand/v2"
	"time"

	"github.com/simbench/simbench/internal/setup"
	"github.com/simbench/simbench/sched/satmath"
	"github.com/simbench/simbench/spec"
)

// NetDelay draws a service's one-way network delays (the scenario's
// network_delay): the time between the client deciding to send an attempt
// and the service seeing it, and between the service answering and the
// client reading the answer. The zero value draws 0.
type NetDelay struct {
	s     *setup.Sampler
	upper time.Duration // the largest draw the loader validated
}

// NewNetDelay returns the one-way network delays drawn from d (the zero
// NetDelay when d is always 0).
func NewNetDelay(d spec.Dist[time.Duration]) NetDelay {
	if d.Upper() <= 0 {
		return NetDelay{} // a constant 0 or no distribution: no delay
	}
	return NetDelay{s: setup.NewSampler(d), upper: satmath.FromFloat[time.Duration](d.Upper())}
}

// On reports whether the delay can be above 0.
func (n *NetDelay) On() bool { return n.s != nil }

// Draw returns one one-way delay from rng (0 without drawing when off).
func (n *NetDelay) Draw(rng *rand.Rand) time.Duration {
	if n.s == nil {
		return 0
	}
	return min(n.s.Duration(rng), n.upper)
}
