package sched

import (
	"container/heap"
	"fmt"
)

// finish decides a call's one result at once, then lets everything waiting
// on it move: its slots, its turn's fan-out room, the next write to its
// resource, its dependents, and in all-or-nothing mode its siblings.
//
// Moving on can finish other calls (a failed call's dependents, a cancelled
// turn's siblings), which can finish more. Rather than recursing once per
// call — a chain of a million dependents would overflow the stack — the
// outermost finish keeps a worklist: a nested finish decides its call's
// result and appends it, and the outermost one lets the calls on the list
// move in the order they were decided. So when finish returns to a caller
// outside it, every consequence has been handled.
func (c *Core) finish(cs *callState, class Class, value any, err error) {
	if cs.done {
		return
	}
	c.decide(cs, class, value, err)
	if c.inFinish {
		c.settling = append(c.settling, settled{cs, err})
		return
	}
	c.inFinish = true
	c.moveOn(cs, err)
	if len(c.settling) > 0 {
		for i := 0; i < len(c.settling); i++ {
			f := c.settling[i]
			c.settling[i] = settled{}
			c.moveOn(f.cs, f.err)
		}
		c.settling = c.settling[:0]
	}
	c.inFinish = false
}

// settled is a call whose result is decided and whose consequences are not
// yet handled.
type settled struct {
	cs  *callState
	err error
}

// decide records a call's result and emits it.
func (c *Core) decide(cs *callState, class Class, value any, err error) {
	cs.done = true
	cs.gen++
	t := cs.turn
	if cs.hedged {
		c.dropHedge(cs)
	}
	state := Completed
	switch cs.phase {
	case phaseRunning:
		if class == ClassCancelled {
			// The attempt is abandoned in flight: cancel it at the transport.
			state = CancelledInFlight
			if h := cs.svc.hedge; h != nil && !cs.fromHedge {
				h.observe(c.now-cs.runSince, true) // its latency is above the time it ran (hedgeService)
			}
			c.out = append(c.out, Action{Kind: ActCancel, Attempt: cs.attempt, TurnID: t.id, Tag: t.tag, Call: cs.call, Index: int(cs.idx)})
			if c.cfg.Hook != nil {
				c.emitf(func() Event {
					return Event{Kind: EventCancelled, Turn: t.id, Tag: t.tag, CallID: cs.call.ID, Service: cs.svc.name, Attempt: cs.attempt, N: int(cs.attempts), Reason: err.Error()}
				})
			}
			c.endAttempt(cs)
		}
	case phaseAdmitted:
		// The reservation was never used: give the tokens back.
		c.unreserve(cs)
		state = NotStarted
		if cs.started {
			state = Completed
		}
	default:
		if !cs.started {
			state = NotStarted
		}
	}
	if !cs.started {
		c.waiting--
		cs.queued += c.now - cs.waitSince
	} else if cs.phase != phaseRunning {
		cs.queued += c.now - cs.waitSince
	}
	c.releaseSlot(cs)
	r := &t.results[cs.idx]
	r.Value, r.Err, r.Class, r.State = value, err, class, state
	r.Attempts, r.Queued, r.Running = int(cs.attempts), cs.queued, cs.running
	r.Finished, r.HedgeWon = c.now, cs.fromHedge && class == ClassSuccess // Status and Hedges are set as attempts end and hedges start
	if cs.routed {
		r.Deployment, r.Fallbacks = cs.svc.name, int16(cs.fallbacks)
	}
	if c.cfg.Hook != nil {
		c.emitf(func() Event {
			return Event{Kind: EventResult, Turn: t.id, Tag: t.tag, CallID: cs.call.ID, Service: cs.svc.name, N: int(cs.attempts), Class: class, Err: err}
		})
	}
	c.out = append(c.out, Action{Kind: ActResult, TurnID: t.id, Tag: t.tag, Result: r})
}

// moveOn lets everything waiting on a decided call move; err is its error.
func (c *Core) moveOn(cs *callState, err error) {
	t := cs.turn
	if cs.active {
		cs.active = false
		t.active--
		for t.fanHead < len(t.fanWait) && (t.fanOut == 0 || t.active < t.fanOut) {
			next := t.fanWait[t.fanHead]
			t.fanWait[t.fanHead] = nil
			t.fanHead++
			c.tryReady(next)
		}
	}
	if q := cs.write; q != nil {
		c.popWrite(q, cs)
	}
	var dependents []*callState
	if dd := t.deps; dd != nil {
		dependents = dd.list[dd.start[cs.idx]:dd.start[cs.idx+1]]
	}
	for _, d := range dependents {
		if err == nil {
			d.depsLeft--
			c.tryReady(d)
		} else if !d.done {
			c.finish(d, ClassCancelled, nil, fmt.Errorf("call %q depends on %q, which failed: %w", d.call.ID, cs.call.ID, ErrDependencyFailed))
		}
	}
	if err != nil && t.join == JoinAllOrNothing {
		c.cancelTurn(t, fmt.Errorf("call %q failed and the turn is all-or-nothing: %w", cs.call.ID, ErrCancelled))
	}
	t.left--
	if t.left == 0 {
		c.turnDone(t)
	}
}

// popWrite accounts for a finished write and, when it held the resource,
// lets the next ready write take it. A finished write that never held it is
// dropped when it comes up. The queue is forgotten only when no write to
// the resource is left unfinished, so a write still waiting for its
// dependencies cannot find a second queue for the same resource.
func (c *Core) popWrite(q *writeQueue, cs *callState) {
	q.pending--
	if q.holder == cs {
		q.holder = nil
		for len(q.waiting) > 0 {
			next := heap.Pop(&q.waiting).(*callState)
			c.unref(next.turn)
			next.writeWait = false
			if !next.done {
				q.holder = next
				c.tryReady(next)
				break
			}
		}
	}
	if q.pending == 0 {
		delete(c.writes, q.key)
	}
}

// turnDone hands the turn's results to the driver and forgets the turn.
func (c *Core) turnDone(t *turnState) {
	t.done = true
	if t.refs == 0 {
		c.retired = append(c.retired, t)
	}
	c.turns.Remove(t.id)
	res := t.res
	if res == nil {
		res = c.outs.turnResult()
	}
	// Field by field into the fresh, zeroed storage: a TurnResult built
	// whole is copied, and while a collection marks the copy runs the GC's
	// bulk barrier (runtime.wbMove), some 800 instructions.
	res.Turn, res.Tag, res.Results, res.Submitted, res.Finished = t.id, t.tag, t.results, t.submitted, c.now
	c.out = append(c.out, Action{Kind: ActTurnDone, TurnID: t.id, Tag: t.tag, Turn: res})
}
