package sim

import (
	"time"

	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/sched/satmath"
)

// drainLimit is how long a live run of duration d goes on after d to let
// its requests settle: half the duration, at least a minute; engine tests
// drain to it too. What finishes after d counts as unfinished, as in a
// virtual run, which ends at d.
func drainLimit(d time.Duration) time.Duration {
	return satmath.Add(d, max(d/2, time.Minute))
}

// drive carries out what the agent loop asked for since the last call, in
// order, and whatever that makes it ask for in turn.
func (e *engine) drive() {
	for {
		e.ops = e.agents.take(e.ops[:0])
		if len(e.ops) == 0 {
			break
		}
		for i := range e.ops {
			e.do(&e.ops[i])
		}
		e.ops = reuseOps(e.ops)
	}
	if err := e.agents.err; err != nil {
		e.fail(err)
	}
}

// do carries out one of the agent loop's ops, now.
func (e *engine) do(op *agentOp) {
	switch op.kind {
	case opBegin:
		e.p = op.turn.proc // an arrival's process is the loop's draw
		e.m.turnBegun(e.now)
	case opSubmit:
		e.submit(op.part)
	case opCancel:
		e.procs[op.part.turn.proc].core.Cancel(e.now, op.part.id)
	case opCancelAt:
		e.scheduleCancel(op.at, op.turn)
	case opWake:
		e.schedule(event{at: op.at, kind: evSession, ref: int32(op.session), proc: uint16(op.proc)})
	case opArrive:
		e.schedule(event{at: op.at, kind: evArrival})
	case opEnd:
		t := op.turn
		e.m.turn(e.now, e.now-t.start, op.failed, t.good)
		if t.abandoned {
			e.m.modelFailedTurn(e.now)
		}
		if e.classes != nil {
			e.classes.turn(t.session, e.now, e.now-t.start, op.failed)
		}
		if e.multi && e.now <= e.m.window {
			e.procs[t.proc].stats.turn(e.now-t.start, op.failed)
		}
		t.ended = true
		e.agents.release(t)
	case opSessionDone:
		// Nothing to do: the session handed out no wake.
	}
}

// submit hands a part of a turn to its process's scheduler; a refused part
// (queue full) goes back to the agent loop.
func (e *engine) submit(p *agentPart) {
	id, err := e.procs[p.turn.proc].core.Submit(e.now, p.schedTurn(p))
	if err != nil {
		e.m.refused++
		e.agents.refused(e.now, p)
		return
	}
	p.id = id
	if p.counted {
		e.m.enter(e.now, len(p.calls))
	}
}

// partDone records a finished part's results and hands them to the agent
// loop.
func (e *engine) partDone(p *agentPart, res *sched.TurnResult) {
	for i := range res.Results {
		e.m.result(&res.Results[i], p.counted)
		if e.classes != nil && p.counted {
			e.classes.result(p.turn.session, &res.Results[i])
		}
		if e.multi && p.counted {
			e.procs[p.turn.proc].stats.result(&res.Results[i], e.m.window)
		}
	}
	t, late := p.turn, p.joined
	proc := t.proc // p may be reused once finished returns
	e.agents.finished(e.now, p, res.Results)
	if late {
		// The last late part of an ended turn frees it.
		e.agents.release(t)
	}
	// Nothing reads res any more: the next turns reuse its storage.
	e.procs[proc].core.Recycle(res)
	e.drive()
}
