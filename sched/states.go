package sched

import "math/bits"

// Per-turn call states are reused: a turn's states go back to a free list
// once the turn is done and nothing refers to them (turnState.refs), so a
// Core in steady state allocates no call states. Sizes are rounded up to a
// power of two; turns above 1<<maxStateClass calls allocate their own.

// maxStateClass bounds the size classes kept, in powers of two of calls.
const maxStateClass = 12

// maxFreePerClass bounds the slices kept per size class.
const maxFreePerClass = 64

// newStates returns zeroed states for n calls.
func (c *Core) newStates(n int) []callState {
	if n == 0 {
		return nil
	}
	k := bits.Len(uint(n - 1))
	if k > maxStateClass {
		return make([]callState, n)
	}
	if l := &c.free[k]; len(*l) > 0 {
		s := (*l)[len(*l)-1]
		(*l)[len(*l)-1] = nil
		*l = (*l)[:len(*l)-1]
		return s[:n]
	}
	return make([]callState, n, 1<<k)
}

// unref drops one outside reference to t; a done turn left with none is
// retired.
func (c *Core) unref(t *turnState) {
	t.refs--
	if t.refs == 0 && t.done {
		c.retired = append(c.retired, t)
	}
}

// reclaim clears the states of the retired turns and keeps them for reuse.
func (c *Core) reclaim() {
	for i, t := range c.retired {
		c.retired[i] = nil
		s := t.states
		t.states = nil
		if cap(s) == 0 {
			continue
		}
		k := bits.Len(uint(cap(s) - 1))
		if k > maxStateClass || cap(s) != 1<<k || len(c.free[k]) >= maxFreePerClass {
			continue
		}
		clear(s[:cap(s)])
		c.free[k] = append(c.free[k], s[:0])
	}
	c.retired = c.retired[:0]
}
