package sched

import "github.com/simbench/simbench/sched/internal/bucket"

import "time"

// reservation is an admitted call waiting for its release time, with what
// its service's buckets were before its takes, so that a refund that comes
// while it waits can move it earlier.
type reservation struct {
	cs       *callState
	gen      uint32 // cs.gen when it was made: stale once the call moves on
	req, tok bucket.Undo
}

// live reports whether the call still waits on this reservation.
func (r *reservation) live() bool {
	return !r.cs.done && r.cs.phase == phaseAdmitted && r.cs.gen == r.gen
}

// settle refunds n tokens that the attempt of cs reserved and did not use,
// and lets the calls of the service already admitted for a later start
// benefit: their reservations, as long as they are the buckets' latest
// changes, are taken back (newest first), the refund is applied, and they
// are made again in admission order at the earliest time the buckets now
// allow. Without this a refund would reach only calls admitted after it,
// and a fan-out of calls that all reported less than they reserved would
// still start at the pace of their estimates.
//
// A reservation that is not among the latest changes (a take for usage
// beyond an estimate, a header sync, a refund came after it) stays as it
// is: undoing it would undo those too.
func (c *Core) settle(cs *callState, n float64) {
	s := cs.svc
	k := c.unbook(s)
	s.tok.Refund(n, cs.tokMark)
	if k == len(s.pending) {
		return
	}
	c.rebookPending(s, k, k)
}

// unbook takes back from s's buckets, newest first, the reservations of
// s.pending as long as they are the buckets' latest changes, and returns
// how many, at the head of s.pending, stay booked. A call that started or
// ended since its booking changed the buckets after it, or used its take:
// nothing below it can move.
func (c *Core) unbook(s *serviceState) int {
	k := len(s.pending)
	for k > 0 {
		r := &s.pending[k-1]
		if !r.live() || (s.tok != nil && !s.tok.Latest(&r.tok)) || (s.req != nil && !s.req.Latest(&r.req)) {
			break
		}
		if s.tok != nil {
			s.tok.Undo(&r.tok)
		}
		if s.req != nil {
			s.req.Undo(&r.req)
		}
		k--
	}
	return k
}

// rebookPending books again, in admission order, the calls of
// s.pending[from:] (which unbook took back), and keeps the first keep
// entries of s.pending (keep <= from), forgetting the others.
func (c *Core) rebookPending(s *serviceState, from, keep int) {
	c.moved = append(c.moved[:0], s.pending[from:]...)
	for _, r := range s.pending[keep:] {
		c.unref(r.cs.turn)
	}
	clear(s.pending[keep:])
	s.pending = s.pending[:keep]
	for _, r := range c.moved {
		c.rebook(r.cs)
	}
	clear(c.moved)
}

// addPending records a booking made for a later start. Entries of calls
// that have started or ended are dropped when the slice is full, so it
// holds at most about twice the calls waiting for their release.
func (c *Core) addPending(s *serviceState, r reservation) {
	if len(s.pending) == cap(s.pending) {
		live := s.pending[:0]
		for _, p := range s.pending {
			if p.live() {
				live = append(live, p)
			} else {
				c.unref(p.cs.turn)
			}
		}
		clear(s.pending[len(live):])
		s.pending = live
	}
	r.cs.turn.refs++
	s.pending = append(s.pending, r)
}

// rebook makes an admitted call's reservation again, now: it starts at
// once or at its new release time.
func (c *Core) rebook(cs *callState) {
	s := cs.svc
	at := c.earliest(cs)
	c.book(cs, at)
	cs.gen++ // the old release timer is stale
	if at <= c.now {
		c.start(cs)
		return
	}
	c.addPending(s, c.lastReservation(cs))
	c.setTimer(timer{at: at, kind: timerRelease, cs: cs, gen: cs.gen})
}

// earliest returns the first time at or after now at which the call's
// service lets it start: after any pause and when both buckets hold its cost.
func (c *Core) earliest(cs *callState) time.Duration {
	s := cs.svc
	at := max(c.now, s.pausedUntil)
	if s.req != nil {
		at = max(at, s.req.Earliest(c.now, 1))
	}
	if s.tok != nil {
		at = max(at, s.tok.Earliest(c.now, float64(cs.call.Tokens)))
	}
	return at
}

// book takes the call's cost from its service's buckets for time at,
// keeping the marks for refunds and the state before, for settle.
func (c *Core) book(cs *callState, at time.Duration) {
	s := cs.svc
	if s.req != nil {
		cs.reqMark, s.booked.req = s.req.TakeUndoable(at, 1)
	}
	if s.tok != nil {
		cs.tokMark, s.booked.tok = s.tok.TakeUndoable(at, float64(cs.call.Tokens))
	}
}

// lastReservation returns the reservation book just made for cs.
func (c *Core) lastReservation(cs *callState) reservation {
	return reservation{cs: cs, gen: cs.gen, req: cs.svc.booked.req, tok: cs.svc.booked.tok}
}
