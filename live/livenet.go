package live

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/simbench/simbench/internal/agent"
	"github.com/simbench/simbench/internal/setup"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/sim"
)

// liveNet draws one service's network delays for a live run, whose
// attempts run on many goroutines.
type liveNet struct {
	mu  sync.Mutex
	d   sim.NetDelay
	rng *rand.Rand
}

// newLiveNet returns the delay draws of sc's services (sc already scaled),
// each from the same stream the virtual engine uses.
func newLiveNet(sc *scenarios.Scenario) []liveNet {
	n := make([]liveNet, len(sc.Services))
	for i := range sc.Services {
		n[i].d = sim.NewNetDelay(sc.Services[i].NetworkDelay)
		n[i].rng = setup.Stream(sc.Seed, "network/"+sc.Services[i].Name)
	}
	return n
}

// draw returns an attempt's delays out and back, in real time.
func (n *liveNet) draw() (out, back time.Duration) {
	if !n.d.On() {
		return 0, 0
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.d.Draw(n.rng), n.d.Draw(n.rng)
}

// delayed adds the scenario's network delay to a live run's attempts, on
// top of the loopback's own: the request leaves after its delay out, the
// outcome is returned after its delay back. A live run plays the scenario
// as written, and network_delay is part of it (a service 80 ms away is 80
// ms away live too); the loopback and the HTTP stack add their real time,
// small at a time scale of 1, which the run cannot take away. A cancel on
// the way out sends nothing; on the way back it drops the answer, as the
// virtual engine does.
func (l *liveRun) delayed(exec sched.Executor) sched.Executor {
	return func(ctx context.Context, call *sched.Call, n int) sched.Outcome {
		out, back := l.net[call.Payload.(*agent.CallMeta).Svc].draw()
		if out > 0 && !sleepUntil(ctx, time.Now().Add(out)) {
			return sched.Outcome{Class: sched.ClassCancelled, Err: ctx.Err()}
		}
		o := exec(ctx, call, n)
		if back > 0 && !sleepUntil(ctx, time.Now().Add(back)) && o.Class != sched.ClassCancelled {
			return sched.Outcome{Class: sched.ClassCancelled, Err: ctx.Err()}
		}
		return o
	}
}

// sleepUntil waits until t or until ctx ends, and reports whether t came.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}
