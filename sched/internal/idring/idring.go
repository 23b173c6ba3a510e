// Package idring holds Ring, the scheduler core's table of unfinished
// turns and attempts by id: a pure data structure, kept apart from the
// core so that its rules are read and tested alone.
package idring

// Ring maps ids handed out in sequence (turn ids, attempt ids) to the
// unfinished things they name (the core's turn and call states). Most of those finish
// soon after later ones begin, so a ring indexed by id modulo its size finds
// them without hashing (a map's insert and delete were a tenth of the Core's
// time for attempts, a twentieth of a one-call turn's for turns).
//
// Growth rule: an id whose slot holds a live entry doubles the ring while
// the ring has fewer than four slots per entry in it (counting the new one);
// otherwise the older entry moves to a map. So one entry that stays for hours
// while millions of others pass keeps the ring at its size.
//
// Each slot keeps its id beside the pointer, so V is a struct type (not a
// pointer type): the instantiations are stenciled per struct shape and no
// lookup calls through a generic dictionary.
type Ring[K ~uint64, V any] struct {
	ring []slot[K, V] // by id & mask; v == nil: empty
	mask K
	live int      // entries in the ring
	old  map[K]*V // entries moved out of the ring
}

type slot[K ~uint64, V any] struct {
	id K
	v  *V
}

const size = 64 // slots of a new ring; a power of two

// Put adds v under id, which must not be in the table.
func (x *Ring[K, V]) Put(id K, v *V) {
	if x.ring == nil {
		x.ring, x.mask = make([]slot[K, V], size), size-1
	}
	for {
		s := &x.ring[id&x.mask]
		if s.v == nil {
			*s = slot[K, V]{id, v}
			x.live++
			return
		}
		if len(x.ring) < 4*(x.live+1) {
			x.grow()
			continue
		}
		if x.old == nil {
			x.old = make(map[K]*V)
		}
		x.old[s.id] = s.v
		*s = slot[K, V]{id, v}
		return
	}
}

// Get returns the entry of id, if it is in the table.
func (x *Ring[K, V]) Get(id K) (*V, bool) {
	if x.ring != nil {
		if s := x.ring[id&x.mask]; s.v != nil && s.id == id {
			return s.v, true
		}
	}
	if len(x.old) > 0 {
		v, ok := x.old[id]
		return v, ok
	}
	return nil, false
}

// Remove drops id from the table, if it is there.
func (x *Ring[K, V]) Remove(id K) {
	if x.ring != nil {
		if s := &x.ring[id&x.mask]; s.v != nil && s.id == id {
			*s = slot[K, V]{}
			x.live--
			return
		}
	}
	delete(x.old, id)
}

// grow doubles the ring; entries that still collide go to the map.
func (x *Ring[K, V]) grow() {
	ring := make([]slot[K, V], 2*len(x.ring))
	mask := K(len(ring) - 1)
	x.live = 0
	for _, s := range x.ring {
		if s.v == nil {
			continue
		}
		d := &ring[s.id&mask]
		if d.v != nil {
			if x.old == nil {
				x.old = make(map[K]*V)
			}
			x.old[s.id] = s.v
			continue
		}
		*d = s
		x.live++
	}
	x.ring, x.mask = ring, mask
}

// Len returns the entries in the table.
func (x *Ring[K, V]) Len() int { return x.live + len(x.old) }
