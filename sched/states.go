package sched

import "math/bits"

// Per-turn call states are reused: a turn's states go back to a free list
// once the turn is done and nothing refers to them (turnState.refs), so a
// Core in steady state allocates no call states. The lists are kept by size
// class, a power of two of calls; a slice is made to the exact size the
// turn needs (so a run's memory is what its turns hold) and reused for a
// later turn of its class it is large enough for. What the lists keep is
// bounded: about 1024 call states per class. A one-call turn's state is
// part of its turnState (turnState.one) and is reused with it.

// maxStateClass bounds the size classes kept, in powers of two of calls.
const maxStateClass = 12

// keepPerClass is the most slices kept for class k.
func keepPerClass(k int) int { return max(2, 1024>>k) }

// newStates returns zeroed states for n calls.
func (c *Core) newStates(n int) []callState {
	if n == 0 {
		return nil
	}
	k := bits.Len(uint(n - 1))
	if k > maxStateClass {
		return make([]callState, n)
	}
	if l := &c.free[k]; len(*l) > 0 && cap((*l)[len(*l)-1]) >= n {
		s := (*l)[len(*l)-1]
		(*l)[len(*l)-1] = nil
		*l = (*l)[:len(*l)-1]
		return s[:n]
	}
	return make([]callState, n)
}

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
		if cap(s) == 0 || own {
			continue
		}
		k := bits.Len(uint(cap(s) - 1))
		if k > maxStateClass || len(c.free[k]) >= keepPerClass(k) {
			continue
		}
		clear(s[:cap(s)])
		c.free[k] = append(c.free[k], s[:0])
	}
	c.retired = c.retired[:0]
}
