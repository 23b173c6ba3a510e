// Package slabs holds Pool, the scheduler core's free lists of call-state
// slices, kept apart from the core so that its rules are read and tested
// alone.
package slabs

import "math/bits"

// Pool keeps slices given back for reuse by size class, a power of two of
// elements: a slice is made to the exact size asked for (so a run's memory
// is what its turns hold) and reused for a later request of its class it
// is large enough for. What it keeps is bounded: about 1024 elements per
// class. The zero value is empty and ready.
type Pool[T any] struct {
	free [maxClass + 1][][]T
}

// maxClass bounds the size classes kept, in powers of two of elements.
const maxClass = 12

// keep is the most slices kept for class k.
func keep(k int) int { return max(2, 1024>>k) }

// Get returns n zeroed elements.
func (p *Pool[T]) Get(n int) []T {
	if n == 0 {
		return nil
	}
	k := bits.Len(uint(n - 1))
	if k > maxClass {
		return make([]T, n)
	}
	if l := &p.free[k]; len(*l) > 0 && cap((*l)[len(*l)-1]) >= n {
		s := (*l)[len(*l)-1]
		(*l)[len(*l)-1] = nil
		*l = (*l)[:len(*l)-1]
		return s[:n]
	}
	return make([]T, n)
}

// Put keeps s, cleared, for a later Get, when its class is kept and has
// room; nothing else may refer to s any more.
func (p *Pool[T]) Put(s []T) {
	if cap(s) == 0 {
		return
	}
	k := bits.Len(uint(cap(s) - 1))
	if k > maxClass || len(p.free[k]) >= keep(k) {
		return
	}
	clear(s[:cap(s)])
	p.free[k] = append(p.free[k], s[:0])
}
