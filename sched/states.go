package sched

// Per-turn call states are reused: a turn's states go back to a free list
// (slabs.Pool) once the turn is done and nothing refers to them
// (turnState.refs), so a Core in steady state allocates no call states. A
// one-call turn's state is part of its turnState (turnState.one) and is
// reused with it.

// newStates returns zeroed states for n calls.
func (c *Core) newStates(n int) []callState { return c.free.Get(n) }

// unref drops one outside reference to t; a done turn left with none is
// retired.
func (c *Core) unref(t *turnState) {
	t.refs--
	if t.refs == 0 && t.done {
		c.retired = append(c.retired, t)
	}
}

// maxSpareTurns bounds the turn states kept for reuse.
const maxSpareTurns = 256

// newTurnState returns a zeroed turn state, one reclaim kept if it can.
func (c *Core) newTurnState() *turnState {
	if n := len(c.spareTurns); n > 0 {
		t := c.spareTurns[n-1]
		c.spareTurns[n-1] = nil
		c.spareTurns = c.spareTurns[:n-1]
		return t
	}
	return new(turnState)
}

// reclaim clears the retired turns' states, and their call states, and
// keeps them for reuse. Nothing refers to a retired turn any more: the
// driver holds its TurnResult and Results, which are allocated apart.
func (c *Core) reclaim() {
	for i, t := range c.retired {
		c.retired[i] = nil
		s := t.states
		own := len(s) == 1 && &s[0] == &t.one[0]
		*t = turnState{}
		if len(c.spareTurns) < maxSpareTurns {
			c.spareTurns = append(c.spareTurns, t)
		}
		if !own {
			c.free.Put(s)
		}
	}
	c.retired = c.retired[:0]
}
