package agent

import (
	"errors"
	"math"
	"math/rand/v2"
	"time"

	"github.com/simbench/simbench/internal/collect"
	"github.com/simbench/simbench/internal/setup"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/sched/satmath"
)

// AgentLoop is the agent side of a run, written once for virtual and live
// runs: closed-model sessions (a turn, think time, the next turn) or
// open-model arrivals, each turn's optional model call, its tool calls and
// its subagents' iterations with their token budgets, the stop rules (no
// turn starts at or after the scenario's duration, a session stops after
// workload.turns) and the cap on calls per turn.
//
// It is a sans-IO state machine: it reads no clock, starts no goroutines
// and does no I/O. Every method takes the time (the scenario's own, since
// the run began) and appends what the driver must do to a list of ops that
// take returns: begin a turn, submit a part of it to a process's scheduler
// now, cancel a part, call cancel, wake (a session thinks until then) or
// arrive at a given time, end a turn, a session is done.
// The driver answers each submitted part with finished (its results) or
// refused. Every draw comes from a stream derived from the seed: each
// turn's own (by session and turn number, or by arrival), the arrivals'
// and the processes', so that every strategy and both drivers face the
// same turns. The virtual engine drives it from its event heap, the live
// driver from real timers and sched.Runners. Not safe for concurrent use.
type AgentLoop struct {
	sc           *scenarios.Scenario
	wl           *Workload
	end          time.Duration              // no turn starts at or after end
	serialize    bool                       // the strategy serializes writes
	classRank    []int                      // each session class's sched.Call.Priority (nil: no priority table)
	MaxTurnCalls int                        // calls (and subagents) one turn may draw; past it, err wraps ErrTooLarge
	batch        int                        // the workload's turns one turn asks for (batch_turns)
	join         *scenarios.ProgressiveJoin // nil: a turn waits for all its tool calls
	Turns        int                        // turns per session: ⌈workload.turns ÷ batch⌉ (0: until the end)
	serial       uint64                     // numbers calls, to tell clients apart at the services
	TurnNo       uint64                     // turns begun in the run, the whole fleet's: the last turn's No
	arrivals     *rand.Rand
	SessionTurns []int    // turns begun, by session
	sessionProc  []uint16 // the process of each session (nil: all on process 0)
	procDraws    *rand.Rand
	Shares       []float64 // each process's share of the workload
	// Member is 1 + the one process this loop runs turns for, a fleet
	// member on a host of its own (0: every process). Its turns are the
	// ones a loop of the whole fleet gives that process: the others'
	// arrivals are drawn and skipped, their sessions never woken.
	Member  int
	live    []int     // turns begun and not ended, by process
	pending int       // wakes and arrivals handed out and not yet called
	Book    *taskBook // agent-level outcomes (nil: the scenario models none)
	Err     error     // the first error that stopped the run (nil: none)
	out     []AgentOp
	// SpareTurns are ended turns the driver gave back (recycle), for
	// startTurn to reuse: a run in steady state allocates no turns.
	SpareTurns []*AgentTurn
}

// agentOpKind is what an op asks of the driver.
type agentOpKind uint8

const (
	// OpBegin: turn began now; count it.
	OpBegin agentOpKind = iota
	// OpSubmit: submit part to its turn's process's scheduler now, and
	// answer with finished when its results are in, or refused.
	OpSubmit
	// OpCancel: cancel part's sched turn now.
	OpCancel
	// OpCancelAt: call cancel(turn) at at.
	OpCancelAt
	// OpWake: call wake(session) at at, on process proc (the session
	// thinks until then, or its ramp starts it then).
	OpWake
	// OpArrive: call arrive at at (the next open-model turn).
	OpArrive
	// OpEnd: turn ended now, failed (or cancelled) or not.
	OpEnd
	// OpSessionDone: session starts no more turns (the run passed its
	// duration, or the session had its workload.turns).
	OpSessionDone
)

// AgentOp is one thing the driver must do.
type AgentOp struct {
	// Kind says what to do (OpBegin...); each field below names the ops
	// that use it.
	Kind    agentOpKind
	Failed  bool          // OpEnd: the turn failed or was cancelled
	At      time.Duration // OpCancelAt, OpWake, OpArrive: when, in run time
	Session int           // OpWake, OpSessionDone: the session's index
	Proc    int           // OpWake: the process the session runs on
	Turn    *AgentTurn    // OpBegin, OpCancelAt, OpEnd
	Part    *AgentPart    // OpSubmit, OpCancel
}

// NewAgentLoop returns the agent loop of strategy st on scenario sc, whose
// workload runs on len(shares) processes weighted by shares (normalised),
// with at most maxTurnCalls calls in a turn.
func NewAgentLoop(sc *scenarios.Scenario, st *scenarios.Strategy, shares []float64, maxTurnCalls int) *AgentLoop {
	a := &AgentLoop{
		sc: sc, wl: newWorkload(sc), end: sc.Duration, serialize: st.SerializeWrites, MaxTurnCalls: maxTurnCalls,
		arrivals: setup.Stream(sc.Seed, "arrivals"), Shares: shares, live: make([]int, len(shares)),
		classRank: collect.ClassRanks(sc, st),
		Book:      newTaskBook(sc), batch: st.Batch(), join: st.ProgressiveJoin,
	}
	a.Turns = (sc.Workload.Turns + a.batch - 1) / a.batch
	if n := sc.Workload.Sessions; n > 0 {
		a.SessionTurns = make([]int, n)
	}
	if len(shares) > 1 {
		w := sc.Workload
		w.Processes, w.ProcessShares = len(shares), shares
		if w.Sessions > 0 {
			sp := w.SessionProcesses()
			a.sessionProc = make([]uint16, len(sp))
			for s, p := range sp {
				a.sessionProc[s] = uint16(p)
			}
		} else {
			a.procDraws = setup.Stream(sc.Seed, "arrivals/process")
		}
	}
	return a
}

// Take returns the ops since the last take, and keeps buf, emptied, to
// collect the next ones in: no op is copied. The ops returned are the
// caller's until it hands them back to take (through reuseOps).
func (a *AgentLoop) Take(buf []AgentOp) []AgentOp {
	out := a.out
	a.out = buf[:0]
	return out
}

// ReuseOps empties a list of ops for reuse, or drops it when it is large
// (begin hands out one op per session), so that it holds no memory a run
// does not need all along. The ops it keeps are not cleared: the turns and
// parts they name (at most 64) stay reachable until the next ops overwrite
// them, which costs a run nothing it would miss, while clearing them cost
// a memory clear at every drive, with a write barrier per pointer while
// the collector marks.
func ReuseOps(ops []AgentOp) []AgentOp {
	if cap(ops) > 64 {
		return nil
	}
	return ops[:0]
}

// Done reports whether the loop will do nothing more: every session or
// the arrivals stopped and every turn ended.
func (a *AgentLoop) Done() bool {
	if a.pending > 0 {
		return false
	}
	for _, n := range a.live {
		if n > 0 {
			return false
		}
	}
	return true
}

// Unfinished returns the turns of process p begun and not ended.
func (a *AgentLoop) Unfinished(p int) int { return a.live[p] }

func (a *AgentLoop) emit(op AgentOp) { a.out = append(a.out, op) }

// fail keeps the first error that stops the run.
func (a *AgentLoop) fail(err error) {
	if a.Err == nil {
		a.Err = err
	}
}

// Begin starts the run at time 0: every session wakes at its ramp start,
// or the first arrival comes at 0.
func (a *AgentLoop) Begin() {
	w := &a.sc.Workload
	if w.Sessions <= 0 {
		a.pending++
		a.emit(AgentOp{Kind: OpArrive})
		return
	}
	for s := range w.Sessions {
		p := a.sessionProcess(s)
		if !a.runs(p) {
			continue
		}
		a.pending++
		a.emit(AgentOp{Kind: OpWake, At: w.SessionStart(s), Session: s, Proc: p})
	}
}

// runs says whether this loop runs process p's turns.
func (a *AgentLoop) runs(p int) bool { return a.Member == 0 || a.Member == p+1 }

// sessionProcess is the process that runs closed-model session s.
func (a *AgentLoop) sessionProcess(s int) int {
	if a.sessionProc == nil {
		return 0
	}
	return int(a.sessionProc[s])
}

// Wake starts session s's next turn at now (an OpWake falling due), unless
// the run is past its duration or the session has had its turns.
func (a *AgentLoop) Wake(now time.Duration, s int) {
	a.pending--
	if now < a.end && (a.Turns == 0 || a.SessionTurns[s] < a.Turns) {
		a.startTurn(now, s, a.sessionProcess(s))
		return
	}
	a.emit(AgentOp{Kind: OpSessionDone, Session: s})
}

// Arrive starts an open-model turn at now (an OpArrive falling due) on a
// process drawn by share, and hands out the next arrival.
func (a *AgentLoop) Arrive(now time.Duration) {
	a.pending--
	if now >= a.end {
		return
	}
	p := 0
	if a.procDraws != nil {
		p = pick(a.Shares, a.procDraws.Float64())
	}
	if a.runs(p) {
		a.startTurn(now, -1, p)
	} else {
		a.TurnNo++ // another member's turn: numbered as the whole fleet numbers it
	}
	// Arrivals at or after the end start nothing: not handing them out
	// keeps a gap too long for a Duration from counting as work cut off.
	if next := satmath.Add(now, a.wl.interarrival(a.arrivals)); next < a.end {
		a.pending++
		a.emit(AgentOp{Kind: OpArrive, At: next})
	}
}

// pick returns the process a draw u in [0, 1) falls to by shares.
func pick(shares []float64, u float64) int {
	for p, s := range shares {
		if u < s {
			return p
		}
		u -= s
	}
	return len(shares) - 1
}

// startTurn begins a turn of session (-1: the open model) on process p.
func (a *AgentLoop) startTurn(now time.Duration, session, p int) {
	a.TurnNo++
	var t *AgentTurn
	if n := len(a.SpareTurns); n > 0 {
		t = a.SpareTurns[n-1]
		a.SpareTurns[n-1] = nil
		a.SpareTurns = a.SpareTurns[:n-1]
		many := t.spare.Many // the storage of several calls is the next turn's
		t.TurnState = TurnState{Proc: p, Session: session, No: a.TurnNo, Start: now, sessionTurn: 1}
		t.spare.Many = many
	} else {
		t = &AgentTurn{TurnState: TurnState{Proc: p, Session: session, No: a.TurnNo, Start: now, sessionTurn: 1}}
	}
	if session >= 0 {
		a.SessionTurns[session]++
		t.sessionTurn = a.SessionTurns[session]
		t.pcg.Seed(a.sc.Seed^0x5e55, uint64(session)<<32|uint64(a.SessionTurns[session]))
	} else {
		t.pcg.Seed(a.sc.Seed^0xa771, a.TurnNo)
	}
	t.rand = *rand.New(&t.pcg)
	t.rng, t.active, t.spare.One = &t.rand, t.one[:0], &t.call
	a.live[p]++
	a.emit(AgentOp{Kind: OpBegin, Turn: t})
	if a.Book != nil {
		a.Book.turnBegun(t, t.sessionTurn)
	}
	c := &a.sc.Workload.Cancel
	if c.Probability > 0 && t.rng.Float64() < c.Probability {
		a.emit(AgentOp{Kind: OpCancelAt, At: satmath.Add(now, a.wl.cancelAt.Duration(t.rng)), Turn: t})
	}
	if c.ParentTimeout > 0 {
		a.emit(AgentOp{Kind: OpCancelAt, At: satmath.Add(now, c.ParentTimeout), Turn: t})
	}
	if a.wl.llm != nil {
		calls := a.wl.llmCall(t.rng, a.wl.llm, &a.serial, &t.spare)
		grow(calls, a.wl.llm, t.sessionTurn, a.batch)
		a.submit(now, t, partLLM, nil, calls, 0)
		return
	}
	a.toolPhase(now, t)
}

// toolPhase submits a turn's tool calls (none is a part too: it ends at
// once).
func (a *AgentLoop) toolPhase(now time.Duration, t *AgentTurn) {
	calls, err := a.wl.callsUpTo(t.rng, a.wl.groups, a.batch, a.serialize, &a.serial, a.MaxTurnCalls, &t.spare)
	if err != nil {
		a.fail(err)
		return
	}
	a.submit(now, t, partTools, nil, calls, 0)
	if a.join != nil && len(calls) > 0 {
		if k := a.join.Need(len(calls)); k < len(calls) && k <= math.MaxUint16 {
			t.active[len(t.active)-1].Join = uint16(k)
		}
	}
}

// submit hands a part of turn t to the driver.
func (a *AgentLoop) submit(now time.Duration, t *AgentTurn, kind uint8, s *subagent, calls []sched.Call, budget int64) {
	p := &t.first
	if p.Turn != nil {
		p = new(AgentPart)
	}
	*p = AgentPart{Turn: t, Kind: kind, sub: s, At: now, Calls: calls, Budget: budget, Counted: kind == partTools || kind == PartSubTools || a.wl.modelOnly}
	if a.classRank != nil && t.Session >= 0 {
		for i := range calls {
			calls[i].Priority = a.classRank[a.sc.Workload.ClassOf(t.Session)]
		}
	}
	t.Parts++
	t.active = append(t.active, p)
	for i := range calls {
		t.spent = satmath.Add(t.spent, calls[i].Tokens)
	}
	a.emit(AgentOp{Kind: OpSubmit, Part: p})
}

// detach takes a part off its turn.
func (a *AgentLoop) detach(p *AgentPart) {
	t := p.Turn
	t.Parts--
	if n := len(t.active); n > 0 && t.active[n-1] == p {
		// The last part (a turn's only one, mostly) leaves with no copy.
		t.active = t.active[:n-1]
		return
	}
	for i, q := range t.active {
		if q == p {
			t.active = append(t.active[:i], t.active[i+1:]...)
			break
		}
	}
}

// Refused takes a part the scheduler refused at now (a full queue): the
// turn fails.
func (a *AgentLoop) Refused(now time.Duration, p *AgentPart) {
	a.detach(p)
	p.Turn.failed = true
	if p.Turn.Parts == 0 {
		a.finishTurn(now, p.Turn)
	}
}

// Cancel cancels every part of turn t still running, at now (an
// OpCancelAt falling due); nothing more of it starts.
func (a *AgentLoop) Cancel(now time.Duration, t *AgentTurn) {
	if t.cancelled || t.Parts == 0 {
		return
	}
	t.cancelled = true
	for _, p := range t.active {
		a.emit(AgentOp{Kind: OpCancel, Part: p})
	}
}

// Finished moves a turn on when its part p finished at now with results.
func (a *AgentLoop) Finished(now time.Duration, p *AgentPart, results []sched.Result) {
	t := p.Turn
	if a.Book != nil {
		a.Book.billed(p, results)
	}
	if p.Joined {
		// The turn moved on at its join: late results are only billed,
		// and the turn may be reused once the last of them is in.
		t.Late--
		return
	}
	a.detach(p)
	ok := true
	for i := range results {
		if results[i].Err != nil {
			ok = false
		} else if p.Counted {
			t.Good++
		}
	}
	if !t.cancelled {
		switch p.Kind {
		case partLLM:
			switch {
			case !ok:
				t.failed = true
			case a.Book == nil || a.Book.modelTurn(t, a.sc.Seed):
				a.toolPhase(now, t)
			case t.tries < a.Book.retries:
				// The model got the step wrong: the agent makes the
				// model turn again, resending the same context.
				t.tries++
				a.Book.modelRetries++
				a.submit(now, t, partLLM, nil, a.wl.llmAgain(p.Calls, &a.serial, &t.spare), 0)
			default:
				t.failed, t.Abandoned = true, true
			}
		case partTools:
			a.afterTools(now, t, ok)
		case partSubLLM:
			if ok { // a subagent whose model call failed ends there
				a.subTools(now, t, p.sub)
			}
		case PartSubTools:
			a.afterIteration(now, t, p.sub)
		}
	}
	if t.Parts == 0 {
		a.finishTurn(now, t)
	}
}

// afterTools moves turn t on at now once its tool calls are in (all of
// them, or its progressive join's share), ok when none failed: its
// subagents start.
func (a *AgentLoop) afterTools(now time.Duration, t *AgentTurn, ok bool) {
	if !ok {
		t.failed = true
	}
	sg := a.wl.sub
	if sg == nil || !ok {
		return
	}
	n := sg.count.Count(t.rng) // a draw of 0 runs no subagent
	if n > a.MaxTurnCalls {
		a.fail(tooManyInTurn("subagents", int64(n), a.MaxTurnCalls))
		return
	}
	for range n {
		if !a.roomForSubagent(t) {
			a.Book.Skipped++
			continue
		}
		a.iterate(now, t, &subagent{})
	}
}

// Answered takes one result of a tools part with a progressive join, at
// now, as it is decided. At the join's count of successes the turn moves
// on (afterTools) and the part leaves it: its late calls run on (fold)
// or are cancelled (drop), and finished only bills them. A join its
// failures leave out of reach is no join: the part ends with its sched
// turn, failed.
func (a *AgentLoop) Answered(now time.Duration, p *AgentPart, r *sched.Result) {
	if p.Joined || r.Err != nil {
		return
	}
	p.answers++
	t := p.Turn
	if p.answers < p.Join || t.cancelled {
		return
	}
	p.Joined = true
	t.Late++
	t.Good += int(p.answers)
	a.detach(p)
	if a.join.Late == scenarios.JoinLateDrop {
		a.emit(AgentOp{Kind: OpCancel, Part: p})
	}
	a.afterTools(now, t, true)
	if t.Parts == 0 {
		a.finishTurn(now, t)
	}
}

// finishTurn ends turn t at now and, in the closed model, hands out its
// session's wake after its think time.
func (a *AgentLoop) finishTurn(now time.Duration, t *AgentTurn) {
	a.live[t.Proc]--
	failed := t.failed || t.cancelled
	a.emit(AgentOp{Kind: OpEnd, Turn: t, Failed: failed})
	if b := a.Book; b != nil {
		b.turnEnded(now, t, failed, t.Abandoned || t.sessionTurn == a.Turns)
		if t.Abandoned && b.perSession && t.Session >= 0 {
			// The task is abandoned: its session starts no more turns.
			a.emit(AgentOp{Kind: OpSessionDone, Session: t.Session})
			return
		}
	}
	if t.Session < 0 {
		return
	}
	next := satmath.Add(now, a.wl.think.Duration(t.rng))
	if next == t.Start {
		// A turn that failed at once with no think time would start the
		// next at the same instant, forever: time would never move. An
		// agent needs some time between turns.
		next += MinTurnGap
	}
	if next >= a.end { // later wakes start nothing
		a.emit(AgentOp{Kind: OpSessionDone, Session: t.Session})
		return
	}
	a.pending++
	a.emit(AgentOp{Kind: OpWake, At: next, Session: t.Session, Proc: t.Proc})
}

// MinTurnGap is the least time between a session's turns when a turn took
// no time and the session does not think.
const MinTurnGap = time.Millisecond

// ErrTooLarge is the error of a run that would need more memory than its
// budget (Options.MaxMemory): Run returns a *TooLargeError, which wraps it,
// before it allocates anything; a turn that draws more calls than fit the
// budget stops a run under way with an error wrapping it.
var ErrTooLarge = errors.New("sim: run too large for its memory budget")
