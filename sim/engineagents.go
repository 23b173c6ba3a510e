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
		e.submit(e.now, op.part)
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
		e.countTurn(e.now, t, op.failed)
		t.ended = true
		e.agents.release(t)
	case opSessionDone:
		// Nothing to do: the session handed out no wake.
	}
}

// submit hands a part of a turn to its process's scheduler at now; a
// refused part (queue full) goes back to the agent loop.
func (r *runParts) submit(now time.Duration, p *agentPart) {
	id, err := r.procs[p.turn.proc].core.Submit(now, p.schedTurn(p))
	if err != nil {
		r.m.refused++
		r.agents.refused(now, p)
		return
	}
	p.id = id
	if p.counted {
		r.m.enter(now, len(p.calls))
	}
}

// partDone records a finished part's results and hands them to the agent
// loop.
func (e *engine) partDone(p *agentPart, res *sched.TurnResult) {
	e.countResults(p, res.Results)
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
