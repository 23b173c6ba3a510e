package sched

// attemptTable maps the attempts in flight to their calls. Attempt ids are
// handed out in sequence and most live briefly, so a ring indexed by id
// modulo its size finds them without hashing (a map's insert and delete
// were a tenth of the Core's time). An id whose slot holds a live attempt
// either doubles the ring, while the ring is small for the attempts in
// flight, or moves that older attempt to a map, so one attempt that hangs
// while millions of others pass keeps the ring at its size.
type attemptTable struct {
	ring []*callState // by attempt id & mask; nil: empty
	mask AttemptID
	live int                      // attempts in the ring
	old  map[AttemptID]*callState // attempts moved out of the ring
}

const attemptRing = 64

func (x *attemptTable) put(id AttemptID, cs *callState) {
	if x.ring == nil {
		x.ring, x.mask = make([]*callState, attemptRing), attemptRing-1
	}
	for {
		i := id & x.mask
		prev := x.ring[i]
		if prev == nil {
			x.ring[i] = cs
			x.live++
			return
		}
		if len(x.ring) < 4*(x.live+1) {
			x.grow()
			continue
		}
		if x.old == nil {
			x.old = make(map[AttemptID]*callState)
		}
		x.old[prev.attempt] = prev
		x.ring[i] = cs
		return
	}
}

// get returns the call of attempt id, if it is in flight.
func (x *attemptTable) get(id AttemptID) (*callState, bool) {
	if x.ring != nil {
		if cs := x.ring[id&x.mask]; cs != nil && cs.attempt == id {
			return cs, true
		}
	}
	if len(x.old) > 0 {
		cs, ok := x.old[id]
		return cs, ok
	}
	return nil, false
}

func (x *attemptTable) remove(id AttemptID) {
	if x.ring != nil {
		if i := id & x.mask; x.ring[i] != nil && x.ring[i].attempt == id {
			x.ring[i] = nil
			x.live--
			return
		}
	}
	delete(x.old, id)
}

// grow doubles the ring; live attempts that still collide go to the map.
func (x *attemptTable) grow() {
	ring := make([]*callState, 2*len(x.ring))
	mask := AttemptID(len(ring) - 1)
	x.live = 0
	for _, cs := range x.ring {
		if cs == nil {
			continue
		}
		j := cs.attempt & mask
		if ring[j] != nil {
			if x.old == nil {
				x.old = make(map[AttemptID]*callState)
			}
			x.old[cs.attempt] = cs
			continue
		}
		ring[j] = cs
		x.live++
	}
	x.ring, x.mask = ring, mask
}

// len returns the attempts in flight.
func (x *attemptTable) len() int { return x.live + len(x.old) }
