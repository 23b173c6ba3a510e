package sched

import (
	"container/heap"
	"fmt"
	"time"

	"github.com/simbench/simbench/sched/satmath"
)

// pump admits queued calls while slots are free: among the services whose
// head could start (a free service slot, no pause), the call submitted
// earliest goes first, so admission is FIFO across turns and nobody barges.
func (c *Core) pump() {
	if c.coolingUntil > c.now {
		c.leaveCooling()
	}
	for c.queued > 0 && (c.cfg.MaxInFlight == 0 || c.inFlight < c.cfg.MaxInFlight) {
		var best *serviceState
		var bestCall *callState
		for _, s := range c.svcList {
			if s.maxIn > 0 && s.inFlight >= s.maxIn {
				continue
			}
			if s.pausedUntil > c.now || s.coolUntil > c.now {
				continue
			}
			if s.prio == nil && s.empty() {
				// Nothing to peek at (popQueue and peekQueue reset a
				// drained queue): skipping the two calls saved 80
				// instructions of a one-call turn's 3,100 in the Core
				// before c.queued did it for one service; with several,
				// most queues are empty at a time.
				continue
			}
			h := c.peek(s)
			if h != nil && s.usesCredit() && !c.covered(s, h) {
				continue
			}
			if h != nil && s.prio != nil && !c.fitsNow(s, h) {
				continue
			}
			if h != nil && (bestCall == nil || h.seq < bestCall.seq) {
				best, bestCall = s, h
			}
		}
		if best == nil {
			return
		}
		c.pop(best)
		c.admit(bestCall)
	}
}

// compactAt is the number of popped entries at the head of a service's queue
// above which the queue is moved down once they are half of it.
const compactAt = 64

// peek returns the service's next call to admit: its earliest queued call,
// or with priority classes the earliest of the class whose turn it is
// (peekClass). Finished calls are dropped on the way.
func (c *Core) peek(s *serviceState) *callState {
	if s.prio != nil {
		return c.peekClass(s)
	}
	return c.peekQueue(&s.callQueue)
}

// pop removes the call peek returned.
func (c *Core) pop(s *serviceState) {
	if s.prio != nil {
		c.popClass(s)
		return
	}
	c.popQueue(&s.callQueue)
}

// peekQueue returns the queue's earliest call, dropping finished ones.
func (c *Core) peekQueue(s *callQueue) *callState {
	for s.head < len(s.fifo) && s.fifo[s.head].done {
		c.queued--
		c.unref(s.fifo[s.head].turn)
		s.fifo[s.head] = nil
		s.head++
	}
	if s.head > 0 && s.head == len(s.fifo) {
		s.drained()
	} else if s.head >= compactAt && 2*s.head >= len(s.fifo) {
		// Keep the queue's memory in proportion to what is queued now: a
		// queue that never drains would otherwise keep every call it ever
		// held. Moving the live half costs at most one copy per call popped.
		n := copy(s.fifo, s.fifo[s.head:])
		clear(s.fifo[n:])
		s.fifo = s.fifo[:n]
		s.head = 0
		if cap(s.fifo) > 4*compactAt && 4*n < cap(s.fifo) {
			s.fifo = append([]*callState(nil), s.fifo...)
		}
	}
	for len(s.retries) > 0 && s.retries[0].done {
		c.queued--
		c.unref(heap.Pop(&s.retries).(*callState).turn)
	}
	var h *callState
	if s.head < len(s.fifo) {
		h = s.fifo[s.head]
	}
	if len(s.retries) > 0 && (h == nil || s.retries[0].seq < h.seq) {
		h = s.retries[0]
	}
	return h
}

// popQueue removes the call peekQueue returned.
func (c *Core) popQueue(s *callQueue) {
	c.queued--
	if len(s.retries) > 0 && (s.head == len(s.fifo) || s.retries[0].seq < s.fifo[s.head].seq) {
		c.unref(heap.Pop(&s.retries).(*callState).turn)
		return
	}
	c.unref(s.fifo[s.head].turn)
	s.fifo[s.head] = nil
	s.head++
	if s.head == len(s.fifo) {
		s.drained()
	}
}

// drained starts a queue whose fresh calls were all popped over at the
// front of its memory. Every popped entry is already nil, so nothing
// needs moving or clearing: the general compaction in peekQueue copied
// and cleared the queue, 80 instructions a call in the M/M/20 benchmark,
// where a one-call turn's queue drains at every admission.
func (s *callQueue) drained() {
	s.fifo = s.fifo[:0]
	s.head = 0
	if cap(s.fifo) > 4*compactAt {
		s.fifo = nil // as in peekQueue: a burst's memory is not kept
	}
}

// empty reports whether the queue holds no call, done or not.
func (s *callQueue) empty() bool { return s.head == len(s.fifo) && len(s.retries) == 0 }

// admit gives a queued call its slots, then reserves its bucket tokens.
func (c *Core) admit(cs *callState) {
	cs.holdsSlot = true
	c.inFlight++
	cs.svc.inFlight++
	c.reserve(cs)
}

// reserve debits the call's buckets and starts it now or at release time.
// The call holds its slots throughout, so starts follow the buckets exactly.
func (c *Core) reserve(cs *callState) {
	t := cs.turn
	var spent error
	switch {
	case t.exhausted != nil:
		spent = t.exhausted
	case t.attBudget > 0 && t.attUsed >= t.attBudget:
		spent = fmt.Errorf("the turn's attempt budget of %d is spent: %w", t.attBudget, ErrBudgetExhausted)
	case t.tokBudget > 0 && satmath.Add(t.tokUsed, cs.call.Tokens) > t.tokBudget:
		spent = fmt.Errorf("the turn has used %d of its %d-token budget and call %q needs %d: %w", t.tokUsed, t.tokBudget, cs.call.ID, cs.call.Tokens, ErrBudgetExhausted)
	}
	if spent != nil {
		// The budget ran out now or earlier (a retry of a call that was in
		// flight when it did): nothing more starts.
		c.exhaust(t, spent)
		c.finish(cs, ClassCancelled, nil, spent)
		return
	}
	s := cs.svc
	if err := c.neverFits(cs); err != nil {
		// The token capacity was lowered (SetLimits) since it was queued.
		c.finish(cs, ClassTooLarge, nil, err)
		return
	}
	at := c.earliest(cs)
	if cs.deadline > 0 && at > cs.deadline {
		c.finish(cs, ClassCancelled, nil, fmt.Errorf("call %q would wait %v for service %q but has %v left: %w", cs.call.ID, at-c.now, s.name, cs.deadline-c.now, ErrDeadline))
		return
	}
	c.book(cs, at)
	cs.reserved = cs.call.Tokens
	if s.usesCredit() {
		c.spendCredit(cs)
	}
	t.tokUsed = satmath.Add(t.tokUsed, cs.call.Tokens)
	t.attUsed++
	cs.phase = phaseAdmitted
	cs.gen++
	if c.cfg.Hook != nil {
		c.emitf(func() Event {
			return Event{Kind: EventAdmitted, Turn: t.id, Tag: t.tag, CallID: cs.call.ID, Service: s.name, N: int(cs.attempts) + 1, Delay: at - c.now}
		})
	}
	if at <= c.now {
		c.start(cs)
		return
	}
	c.addPending(s, c.lastReservation(cs)) // for settle and SetLimits
	c.setTimer(timer{at: at, kind: timerRelease, cs: cs, gen: cs.gen})
}

// release starts an admitted call whose reservation is repaid, unless a
// service pause began meanwhile.
func (c *Core) release(cs *callState) {
	if !c.warm(cs.svc) {
		// The deployment began to cool down since the call was admitted:
		// it queues again, for a warm deployment if its route has one.
		c.unreserve(cs)
		c.releaseSlot(cs)
		c.enqueue(cs)
		return
	}
	if p := cs.svc.pausedUntil; p > c.now {
		// Give the reservation back and reserve again when the pause ends,
		// so the calls held by a pause cannot leave together as a burst.
		c.unreserve(cs)
		cs.phase = phaseBackoff
		cs.gen++
		c.setTimer(timer{at: p, kind: timerBackoff, cs: cs, gen: cs.gen})
		return
	}
	c.start(cs)
}

// unreserve refunds an admitted call's unused reservation.
func (c *Core) unreserve(cs *callState) {
	s := cs.svc
	if s.req != nil {
		s.req.Refund(1, cs.reqMark)
	}
	if s.tok != nil {
		s.tok.Refund(float64(cs.reserved), cs.tokMark)
	}
	if s.usesCredit() {
		c.refundCredit(cs)
	}
	cs.turn.tokUsed = satmath.Sub(cs.turn.tokUsed, cs.reserved)
	cs.turn.attUsed--
	cs.reserved = 0
}

// start sends an attempt.
func (c *Core) start(cs *callState) {
	t := cs.turn
	c.lastAttempt++
	cs.attempt = c.lastAttempt
	cs.attempts++
	cs.phase = phaseRunning
	cs.gen++
	if !cs.started {
		cs.started = true
		if c.cfg.Retry.Budget > 0 {
			cs.firstStart = c.now // read only by retry against the budget
		}
		c.waiting--
	}
	cs.queued += c.now - cs.waitSince
	cs.runSince = c.now
	c.attempts.Put(cs.attempt, cs)
	if c.cfg.AttemptTimeout > 0 {
		c.setTimer(timer{at: satmath.Add(c.now, c.cfg.AttemptTimeout), kind: timerAttempt, cs: cs, gen: cs.gen})
	}
	if c.cfg.Hook != nil {
		c.emitf(func() Event {
			return Event{Kind: EventStarted, Turn: t.id, Tag: t.tag, CallID: cs.call.ID, Service: cs.svc.name, Attempt: cs.attempt, N: int(cs.attempts)}
		})
	}
	c.out = append(c.out, Action{Kind: ActStart, Attempt: cs.attempt, TurnID: t.id, Tag: t.tag, Call: cs.call, Deployment: cs.svc.name, N: int(cs.attempts), Index: int(cs.idx)})
	if cs.svc.hedge != nil {
		c.armHedge(cs)
	}
}

// releaseSlot gives back the call's global and service slots.
func (c *Core) releaseSlot(cs *callState) {
	if !cs.holdsSlot {
		return
	}
	cs.holdsSlot = false
	c.inFlight--
	cs.svc.inFlight--
}

// endAttempt accounts for the end of the attempt in flight.
func (c *Core) endAttempt(cs *callState) {
	c.attempts.Remove(cs.attempt)
	cs.running += c.now - cs.runSince
	cs.waitSince = c.now
	cs.phase = phaseEnded
	cs.gen++
}

// attemptTimedOut cancels a hung attempt at the transport and treats it as a
// transient failure, so it never holds a slot past its timeout.
func (c *Core) attemptTimedOut(cs *callState) {
	if h := cs.svc.hedge; h != nil && !cs.fromHedge {
		h.observe(c.now-cs.runSince, true) // its latency is above the timeout (hedgeService)
	}
	c.out = append(c.out, Action{Kind: ActCancel, Attempt: cs.attempt, TurnID: cs.turn.id, Tag: cs.turn.tag, Call: cs.call, Index: int(cs.idx)})
	if c.cfg.Hook != nil {
		c.emitf(func() Event {
			return Event{Kind: EventCancelled, Turn: cs.turn.id, Tag: cs.turn.tag, CallID: cs.call.ID, Service: cs.svc.name, Attempt: cs.attempt, N: int(cs.attempts), Reason: "attempt timeout"}
		})
	}
	c.complete(cs, Outcome{Class: ClassTransient, Err: &attemptTimeout{call: cs.call.ID, attempt: int(cs.attempts), after: c.cfg.AttemptTimeout}})
}

// attemptTimeout is the error of an attempt that ran past
// Config.AttemptTimeout, formatted only when someone reads it.
type attemptTimeout struct {
	call    string
	attempt int
	after   time.Duration
}

func (e *attemptTimeout) Error() string {
	return fmt.Sprintf("attempt %d of call %q timed out after %v", e.attempt, e.call, e.after)
}

// complete handles an attempt's outcome: settle tokens, then finish or retry.
func (c *Core) complete(cs *callState, o Outcome) {
	c.endAttempt(cs)
	t := cs.turn
	if o.HasUsage && cs.svc.tok != nil {
		diff := satmath.Sub(o.Tokens, cs.reserved)
		if diff > 0 {
			// With a synced token count the server's figure already
			// includes the extra tokens: taking them here too would count
			// them twice.
			if !cs.svc.cfg.HeaderSync || !o.Quota.Tokens.Known {
				cs.svc.tok.Take(c.now, float64(diff))
			}
		} else if diff < 0 {
			c.settle(cs, -float64(diff))
		}
		t.tokUsed = satmath.Add(t.tokUsed, diff)
	}
	if o.HasUsage && cs.svc.cfg.CreditTokens {
		// Usage beyond the estimate is debt the next grant pays; usage
		// below it goes back to the current grant.
		cs.svc.credit[CreditTokens].units -= float64(satmath.Sub(o.Tokens, cs.reserved))
	}
	t.results[cs.idx].Status = int(int32(o.Status)) // the last attempt's
	if c.cfg.Hook != nil {
		c.emitf(func() Event {
			return Event{Kind: EventFinished, Turn: t.id, Tag: t.tag, CallID: cs.call.ID, Service: cs.svc.name, Attempt: cs.attempt, N: int(cs.attempts), Class: o.Class}
		})
	}
	if cs.svc.lim != nil {
		c.adapt(cs, o.Class)
	}
	if cs.svc.cfg.HeaderSync {
		c.syncBuckets(cs, &o.Quota)
	}
	if cs.svc.route != nil {
		c.countStreak(cs, &o)
	}
	if cs.hedged && o.Class != ClassSuccess {
		// The hedge still runs: the call waits for it (see HedgePolicy).
		c.promoteHedge(cs)
		return
	}
	if o.Class == ClassSuccess {
		if b := cs.svc.budget; b != nil {
			b.Success(c.now)
		}
		if h := cs.svc.hedge; h != nil && !cs.fromHedge {
			h.observe(c.now-cs.runSince, false) // a hedge's latency is not a first attempt's
		}
		c.finish(cs, ClassSuccess, o.Value, nil)
		return
	}
	// A write that is not idempotent is never repeated, except after a
	// conflict: the server refused it, so nothing was applied.
	if !o.Class.Retryable() || (cs.call.Write && !cs.call.Idempotent && o.Class != ClassConflict) {
		c.finish(cs, o.Class, nil, attemptErr(cs, &o))
		return
	}
	if o.Class == ClassRateLimited && cs.routed && c.fallBack(cs, &o) {
		return
	}
	c.retry(cs, o)
}

// attemptErr returns the error of a failed attempt: the executor's, or an
// *AttemptError built now. It is called only where the error is kept (a
// result, an event), so a retried attempt formats nothing.
func attemptErr(cs *callState, o *Outcome) error {
	if o.Err != nil {
		return o.Err
	}
	return &AttemptError{Call: cs.call.ID, Attempt: int(cs.attempts), Class: o.Class, Status: o.Status}
}

// retry schedules the next attempt, or fails the call when the policy says no.
func (c *Core) retry(cs *callState, o Outcome) {
	p := &c.cfg.Retry
	if o.Class == ClassConflict {
		// A conflict's delay is the backoff's (see ClassConflict).
		o.RetryAfter, o.HasRetryAfter = 0, false
	}
	if int(cs.attempts)-int(cs.hops) >= p.maxAttempts() {
		c.finish(cs, o.Class, nil, &RetriesExhaustedError{Call: cs.call.ID, Attempts: int(cs.attempts), Last: attemptErr(cs, &o)})
		return
	}
	if o.HasRetryAfter && o.RetryAfter > c.maxRetry {
		if c.cfg.OverMaxRetryAfter == RetryAfterFail {
			c.finish(cs, o.Class, nil, &RetryAfterTooLongError{Call: cs.call.ID, RetryAfter: o.RetryAfter, Max: c.maxRetry})
			return
		}
		o.RetryAfter = c.maxRetry
	}
	var draw float64
	if p.Backoff.Jittered() || (o.HasRetryAfter && p.RetryAfterJitter > 0) {
		draw = c.rng.Float64()
	}
	delay := p.RetryDelay(&o, int(cs.attempts), cs.prevDelay, draw)
	cs.prevDelay = delay
	// Saturating: a delay too long to represent means "never", not a time
	// that wrapped around to the past and so "at once".
	at := satmath.Add(c.now, delay)
	if p.Budget > 0 && satmath.Sub(at, cs.firstStart) > p.Budget {
		c.finish(cs, o.Class, nil, &RetriesExhaustedError{Call: cs.call.ID, Attempts: int(cs.attempts), Delay: delay, Budget: p.Budget, Last: attemptErr(cs, &o)})
		return
	}
	if cs.deadline > 0 && at > cs.deadline {
		c.finish(cs, o.Class, nil, fmt.Errorf("a retry after %v would pass call %q's deadline: %w", delay, cs.call.ID, ErrDeadline))
		return
	}
	if !c.spendRetry(cs, &o) {
		return
	}
	s := cs.svc
	server := o.HasRetryAfter && !p.IgnoreRetryAfter
	c.pauseOn(s, &o)
	if !c.cfg.KeepSlotDuringBackoff {
		c.releaseSlot(cs)
	}
	cs.phase = phaseBackoff
	cs.gen++
	if c.cfg.Hook != nil {
		c.emitf(func() Event {
			return Event{Kind: EventRetry, Turn: cs.turn.id, Tag: cs.turn.tag, CallID: cs.call.ID, Service: s.name, N: int(cs.attempts), Class: o.Class, Delay: delay, Reason: attemptErr(cs, &o).Error(), Server: server}
		})
	}
	c.setTimer(timer{at: at, kind: timerBackoff, cs: cs, gen: cs.gen})
}

// pauseOn pauses service s for the server's delay of a 429, with
// PauseOnRetryAfter, unless the retry policy ignores server delays.
func (c *Core) pauseOn(s *serviceState, o *Outcome) {
	if !o.HasRetryAfter || c.cfg.Retry.IgnoreRetryAfter || o.Class != ClassRateLimited || !s.cfg.PauseOnRetryAfter {
		return
	}
	if until := satmath.Add(c.now, o.RetryAfter); until > s.pausedUntil {
		s.pausedUntil = until
		c.setTimer(timer{at: until, kind: timerPause, svc: s})
		if c.cfg.Hook != nil {
			c.emit(Event{Kind: EventPaused, Service: s.name, Delay: o.RetryAfter})
		}
	}
}

// backoffDone sends a call back to be admitted after its backoff: straight to
// its bucket when it kept its slot, else to its service's queue in its
// original place.
func (c *Core) backoffDone(cs *callState) {
	if cs.holdsSlot && c.warm(cs.svc) && (!cs.svc.usesCredit() || c.covered(cs.svc, cs)) {
		c.reserve(cs)
		return
	}
	// A call waiting for shared credit holds no slot.
	c.releaseSlot(cs)
	c.enqueue(cs)
}
