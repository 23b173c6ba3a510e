package fakeapi

import (
	"time"

	"github.com/simbench/simbench/sched/satmath"
	"github.com/simbench/simbench/spec"
)

// background accrues the background requests of tenant t that arrive at
// or before now (see spec.Background), each at its own time, then lets
// those still waiting take what has freed by now, ahead of the arrival at
// now.
func (m *Model) background(t *tenant, now time.Duration) {
	if skip := satmath.Sub(now, spec.BackgroundHorizon); t.bgNext < skip {
		t.bgNext += (skip - t.bgNext) / m.bgGap * m.bgGap
	}
	for ; t.bgNext <= now; t.bgNext += m.bgGap {
		t.bgWaiting += m.bgBurst
		if over := t.bgWaiting - m.bgMaxWaiting; over > 0 {
			m.c.bgLimited += over // the oldest give up
			t.bgWaiting = m.bgMaxWaiting
		}
		m.bgDrain(t, t.bgNext)
	}
	m.bgDrain(t, now)
}

// bgDrain admits waiting background requests of t at time at while its
// shared limits have room for them; one that can never fit gives up.
func (m *Model) bgDrain(t *tenant, at time.Duration) {
	if t.bgWaiting == 0 {
		return
	}
	var u units
	u.set(0, 0, m.cfg.Background.Tokens)
	if t.tooLarge(&u, sharedRates) != LimitNone {
		m.c.bgLimited += t.bgWaiting // can never fit
		t.bgWaiting = 0
		return
	}
	for t.bgWaiting > 0 {
		if w, _, _ := t.wait(at, &u, sharedRates); w > 0 {
			return
		}
		t.take(at, &u, sharedRates)
		t.bgWaiting--
		m.c.bgAdmitted++
	}
}
