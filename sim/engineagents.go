package sim

import (
	"time"

	"github.com/simbench/simbench/internal/agent"
	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/sched/satmath"
)

// DrainLimit is how long a live run of duration d goes on after d to let
// its requests settle: half the duration, at least a minute; engine tests
// drain to it too. What finishes after d counts as unfinished, as in a
// virtual run, which ends at d.
func DrainLimit(d time.Duration) time.Duration {
	return satmath.Add(d, max(d/2, time.Minute))
}

// drive carries out what the agent loop asked for since the last call, in
// order, and whatever that makes it ask for in turn.
func (e *engine) drive() {
	for {
		e.ops = e.Agents.Take(e.ops[:0])
		if len(e.ops) == 0 {
			break
		}
		for i := range e.ops {
			e.do(&e.ops[i])
		}
		e.ops = agent.ReuseOps(e.ops)
	}
	if err := e.Agents.Err; err != nil {
		e.fail(err)
	}
}

// do carries out one of the agent loop's ops, now.
func (e *engine) do(op *agent.AgentOp) {
	switch op.Kind {
	case agent.OpBegin:
		e.p = op.Turn.Proc // an arrival's process is the loop's draw
		e.m.TurnBegun(e.now)
	case agent.OpSubmit:
		e.submit(e.now, op.Part)
	case agent.OpCancel:
		e.procs[op.Part.Turn.Proc].core.Cancel(e.now, op.Part.Id)
	case agent.OpCancelAt:
		e.scheduleCancel(op.At, op.Turn)
	case agent.OpWake:
		e.schedule(Event{At: op.At, Kind: EvSession, Ref: int32(op.Session), proc: uint16(op.Proc)})
	case agent.OpArrive:
		e.schedule(Event{At: op.At, Kind: EvArrival})
	case agent.OpEnd:
		t := op.Turn
		e.countTurn(e.now, t, op.Failed)
		t.Ended = true
		e.Agents.Release(t)
	case agent.OpSessionDone:
		// Nothing to do: the session handed out no wake.
	}
}

// submit hands a part of a turn to its process's scheduler at now; a
// refused part (queue full) goes back to the agent loop.
func (r *runParts) submit(now time.Duration, p *agent.AgentPart) {
	id, err := r.procs[p.Turn.Proc].core.Submit(now, p.SchedTurn(p))
	if err != nil {
		r.m.Refused++
		r.Agents.Refused(now, p)
		return
	}
	p.Id = id
	if p.Counted {
		r.m.Enter(now, len(p.Calls))
	}
}

// partDone records a finished part's results and hands them to the agent
// loop.
func (e *engine) partDone(p *agent.AgentPart, res *sched.TurnResult) {
	e.countResults(p, res.Results)
	t, late := p.Turn, p.Joined
	proc := t.Proc // p may be reused once finished returns
	e.Agents.Finished(e.now, p, res.Results)
	if late {
		// The last late part of an ended turn frees it.
		e.Agents.Release(t)
	}
	// Nothing reads res any more: the next turns reuse its storage.
	e.procs[proc].core.Recycle(res)
	e.drive()
}
