package sim

import "github.com/simbench/simbench/sched"

// attemptIndex maps the attempts in flight to their slab entries. Attempt
// ids are handed out in sequence and live briefly, so an open-addressed ring
// keyed by id modulo its size finds them without hashing; a collision with
// a live attempt doubles the ring.
type attemptIndex struct {
	ids  []sched.AttemptID // 0: empty
	refs []int32
	mask sched.AttemptID
	n    int
}

func newAttemptIndex() *attemptIndex {
	const size = 1024
	return &attemptIndex{ids: make([]sched.AttemptID, size), refs: make([]int32, size), mask: size - 1}
}

func (x *attemptIndex) put(id sched.AttemptID, ref int32) {
	for {
		i := id & x.mask
		if x.ids[i] == 0 {
			x.ids[i], x.refs[i] = id, ref
			x.n++
			return
		}
		x.grow()
	}
}

// get returns the entry of id, if it is in flight.
func (x *attemptIndex) get(id sched.AttemptID) (int32, bool) {
	i := id & x.mask
	if x.ids[i] != id {
		return 0, false
	}
	return x.refs[i], true
}

func (x *attemptIndex) remove(id sched.AttemptID) {
	if i := id & x.mask; x.ids[i] == id {
		x.ids[i] = 0
		x.n--
	}
}

// grow doubles the ring until every live id has a slot of its own.
func (x *attemptIndex) grow() {
	size := len(x.ids)
	for {
		size *= 2
		ids, refs := make([]sched.AttemptID, size), make([]int32, size)
		mask := sched.AttemptID(size - 1)
		ok := true
		for i, id := range x.ids {
			if id == 0 {
				continue
			}
			j := id & mask
			if ids[j] != 0 {
				ok = false
				break
			}
			ids[j], refs[j] = id, x.refs[i]
		}
		if ok {
			x.ids, x.refs, x.mask = ids, refs, mask
			return
		}
	}
}
