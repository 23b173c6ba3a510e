package sim

import "github.com/simbench/simbench/sched"

// attemptIndex maps the attempts in flight to their slab entries. Attempt
// ids are handed out in sequence and live briefly, so an open-addressed ring
// keyed by id modulo its size finds them without hashing; a collision with
// a live attempt doubles the ring. An id and its entry share a slot, so a
// lookup touches one cache line.
type attemptIndex struct {
	slots []indexSlot
	mask  sched.AttemptID
	n     int
}

// indexSlot is one slot of an attemptIndex: an attempt id (0: empty) and
// its slab entry.
type indexSlot struct {
	id  sched.AttemptID
	ref int32
}

func newAttemptIndex() *attemptIndex {
	const size = 1024
	return &attemptIndex{slots: make([]indexSlot, size), mask: size - 1}
}

func (x *attemptIndex) put(id sched.AttemptID, ref int32) {
	for {
		s := &x.slots[id&x.mask]
		if s.id == 0 {
			*s = indexSlot{id: id, ref: ref}
			x.n++
			return
		}
		x.grow()
	}
}

// get returns the entry of id, if it is in flight.
func (x *attemptIndex) get(id sched.AttemptID) (int32, bool) {
	s := &x.slots[id&x.mask]
	if s.id != id {
		return 0, false
	}
	return s.ref, true
}

func (x *attemptIndex) remove(id sched.AttemptID) {
	if s := &x.slots[id&x.mask]; s.id == id {
		s.id = 0
		x.n--
	}
}

// grow doubles the ring until every live id has a slot of its own.
func (x *attemptIndex) grow() {
	size := len(x.slots)
	for {
		size *= 2
		slots := make([]indexSlot, size)
		mask := sched.AttemptID(size - 1)
		ok := true
		for _, s := range x.slots {
			if s.id == 0 {
				continue
			}
			t := &slots[s.id&mask]
			if t.id != 0 {
				ok = false
				break
			}
			*t = s
		}
		if ok {
			x.slots, x.mask = slots, mask
			return
		}
	}
}
