package sched

// turnTable maps the unfinished turns to their states, as attemptTable maps
// attempts: turn ids are handed out in sequence and most turns finish soon
// after later ones begin, so a ring indexed by id modulo its size finds them
// without hashing (the map's insert and delete were a twentieth of a
// one-call turn's time). An id whose slot holds a live turn doubles the
// ring while it is small for the turns in it, or moves that older turn to a
// map, so a turn that runs for hours keeps the ring at its size.
type turnTable struct {
	ring []*turnState // by turn id & mask; nil: empty
	mask TurnID
	live int                   // turns in the ring
	old  map[TurnID]*turnState // turns moved out of the ring
}

const turnRing = 64

func (x *turnTable) put(ts *turnState) {
	if x.ring == nil {
		x.ring, x.mask = make([]*turnState, turnRing), turnRing-1
	}
	for {
		i := ts.id & x.mask
		prev := x.ring[i]
		if prev == nil {
			x.ring[i] = ts
			x.live++
			return
		}
		if len(x.ring) < 4*(x.live+1) {
			x.grow()
			continue
		}
		if x.old == nil {
			x.old = make(map[TurnID]*turnState)
		}
		x.old[prev.id] = prev
		x.ring[i] = ts
		return
	}
}

// get returns the state of turn id, if it is unfinished.
func (x *turnTable) get(id TurnID) (*turnState, bool) {
	if x.ring != nil {
		if ts := x.ring[id&x.mask]; ts != nil && ts.id == id {
			return ts, true
		}
	}
	if len(x.old) > 0 {
		ts, ok := x.old[id]
		return ts, ok
	}
	return nil, false
}

func (x *turnTable) remove(id TurnID) {
	if x.ring != nil {
		if i := id & x.mask; x.ring[i] != nil && x.ring[i].id == id {
			x.ring[i] = nil
			x.live--
			return
		}
	}
	delete(x.old, id)
}

// grow doubles the ring; live turns that still collide go to the map.
func (x *turnTable) grow() {
	ring := make([]*turnState, 2*len(x.ring))
	mask := TurnID(len(ring) - 1)
	x.live = 0
	for _, ts := range x.ring {
		if ts == nil {
			continue
		}
		j := ts.id & mask
		if ring[j] != nil {
			if x.old == nil {
				x.old = make(map[TurnID]*turnState)
			}
			x.old[ts.id] = ts
			continue
		}
		ring[j] = ts
		x.live++
	}
	x.ring, x.mask = ring, mask
}

// len returns the unfinished turns.
func (x *turnTable) len() int { return x.live + len(x.old) }
