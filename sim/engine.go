package sim

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/simbench/simbench/fakeapi"
	"github.com/simbench/simbench/internal/agent"
	"github.com/simbench/simbench/internal/collect"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/trace"
)

// engine runs one strategy of one scenario in virtual time: an event heap
// drives the agent loop (agentLoop), the sched core (the production
// decision code) and one fakeapi model per service, whose decisions it
// reads as httptool reads the server's answers (answerReader). It reads
// no clock and starts no goroutines; all randomness comes from streams
// derived from the scenario seed.
type engine struct {
	// runParts is what the reference driver shares: the setup, the
	// agent loop, the processes' schedulers, the models and collectors.
	runParts
	ops []agent.AgentOp // scratch: the agent loop's ops being carried out
	now time.Duration

	// p is the process the event being handled belongs to.
	p      int
	events eventQueue
	seq    uint64
	acts   []sched.Action
	slab   []attempt
	// outReq holds, by slab entry, what the service needs of an attempt on
	// its way out; apart from the slab so that the slab holds no pointers.
	outReq  []outgoing
	free    []int32            // free slab entries
	cancels []*agent.AgentTurn // turns with a pending cancel event, by event ref
	freeC   []int32
	// credits are the processes' requests for credit from the shared
	// quota on their way, by evCredit ref.
	credits []pendingCredit
	freeQ   []int32

	// Err is why the run stopped early, when it did for a reason of its own.
	Err error
	// processed counts the events processed.
	processed int64
	// stopWhen, when set (Options.StopWhen), is asked every stopEvery
	// events whether the run may end there.
	stopWhen func(Watch) bool
	// onArrive, when set (tests), sees every decision a service makes.
	onArrive func(now time.Duration, d *fakeapi.Decision)
	// trace, when set, writes one record per attempt.
	trace *engineTrace
}

// scheduleCancel schedules a cancel of tr at time at, unless at is past the
// drain limit, where the run ends before it.
func (e *engine) scheduleCancel(at time.Duration, tr *agent.AgentTurn) {
	if at > e.stop {
		return
	}
	var i int32
	if n := len(e.freeC); n > 0 {
		i = e.freeC[n-1]
		e.freeC = e.freeC[:n-1]
		e.cancels[i] = tr
	} else {
		e.cancels = append(e.cancels, tr)
		i = int32(len(e.cancels) - 1)
	}
	tr.Held++
	e.schedule(Event{At: at, Kind: EvCancel, Ref: i, proc: uint16(tr.Proc)})
}

// NewEngine returns the virtual-time engine of strategy st of sc, untraced.
func NewEngine(sc *scenarios.Scenario, st *scenarios.Strategy) (*engine, error) {
	return newTracedEngine(sc, st, nil)
}

// newTracedEngine is newEngine writing one trace record per attempt to tw
// when tw is not nil.
func newTracedEngine(sc *scenarios.Scenario, st *scenarios.Strategy, tw *trace.Writer) (*engine, error) {
	if n := sc.Workload.Sessions; n > math.MaxInt32 {
		// Session events name their session in an int32.
		return nil, fmt.Errorf("%d sessions is more than the engine's %d: %w", n, math.MaxInt32, ErrTooLarge)
	}
	e := &engine{}
	var hook func(p int) func(sched.Event)
	if tw != nil {
		e.trace = newEngineTrace(tw)
		hook = func(p int) func(sched.Event) { return e.trace.hookFor(uint16(p)) }
	}
	if err := e.init(sc, st, hook); err != nil {
		return nil, err
	}
	return e, nil
}

func (e *engine) schedule(ev Event) {
	e.seq++
	ev.Seq = e.seq
	e.events.push(ev)
}

// progressEvery is how many events pass between progress reports and
// cancellation checks.
const progressEvery = 1 << 14

// stopEvery is how many events pass between the questions to
// Options.StopWhen: a count of events, not of time, so that the same run
// stops at the same event.
const stopEvery = 1 << 10

// Watch is what a run has counted by virtual time Now, for
// Options.StopWhen: the turns ended since the start (Turns, within the
// run's duration) and those of them that failed (FailedTurns). Events
// still due at Now may not have been handled.
type Watch struct {
	Now                time.Duration
	Turns, FailedTurns int64
}

// Run simulates until every turn is done or the run's end passes. It
// returns false when ctx ended the run early (the results are partial).
// A run that stopWhen ends (at a positive virtual time) is complete:
// its result's StoppedAtS says when it ended.
func (e *engine) Run(ctx context.Context, progress func(virtual time.Duration)) bool {
	e.Agents.Begin()
	e.drive()
	for n := 0; e.events.len() > 0 && e.Err == nil; n++ {
		if e.stopWhen != nil && n%stopEvery == 0 && e.now > 0 && e.stopWhen(Watch{Now: e.now, Turns: e.m.Turns, FailedTurns: e.m.FailedTurns}) {
			e.stoppedAt = e.now
			break
		}
		if n%progressEvery == 0 {
			if ctx.Err() != nil {
				return false
			}
			if progress != nil {
				progress(min(e.now, e.end))
			}
		}
		ev := e.events.pop()
		e.processed++
		if ev.Kind == evWake && ev.Seq != e.procs[ev.proc].wakeSeq {
			// A wake-up request a later one replaced: nothing, and not
			// work left when it falls after the run's end.
			continue
		}
		if ev.At > e.stop {
			e.cutOff = true
			break
		}
		e.now = ev.At
		e.p = int(ev.proc)
		switch ev.Kind {
		case evWake:
			e.procs[e.p].core.Advance(e.now)
		case EvArrival:
			e.Agents.Arrive(e.now)
			e.drive()
		case EvSession:
			e.Agents.Wake(e.now, int(ev.Ref))
			e.drive()
		case evArrive:
			e.arrived(ev.Ref)
		case evServed:
			e.served(ev.Ref)
		case evResponse:
			e.respond(ev.Ref)
		case EvCancel:
			tr := e.cancels[ev.Ref]
			e.cancels[ev.Ref] = nil
			e.freeC = append(e.freeC, ev.Ref)
			tr.Held--
			e.Agents.Cancel(e.now, tr)
			e.drive()
			e.Agents.Release(tr)
		case evCredit:
			e.credited(ev.Ref)
		}
		e.carry()
	}
	if progress != nil {
		progress(e.end)
	}
	e.countUnfinished()
	return true
}

// partOf returns the part an ActResult or ActTurnDone is about. A part
// that is now another sched turn's was reused while its own still ran:
// the results would count as another turn's, and partOf panics.
func (e *engine) partOf(a *sched.Action) *agent.AgentPart {
	p := a.Tag.(*agent.AgentPart)
	if p.Id != a.TurnID {
		panic(fmt.Sprintf("sim: sched turn %d answered at %v through a part reused by sched turn %d", a.TurnID, e.now, p.Id))
	}
	return p
}

// fail stops the run with err (the first one wins).
func (e *engine) fail(err error) {
	if e.Err == nil {
		e.Err = e.stopped(e.now, err)
	}
}

// carry does what the scheduler decided.
func (e *engine) carry() {
	pr := &e.procs[e.p]
	for {
		// The Core collects the next decisions in the buffer just carried
		// out, while these are carried out: nothing is copied.
		e.acts = pr.core.SwapActions(e.acts)
		if len(e.acts) == 0 {
			return
		}
		for i := range e.acts {
			a := &e.acts[i]
			switch a.Kind {
			case sched.ActStart:
				e.start(a)
			case sched.ActCancel:
				e.cancelAttempt(a)
			case sched.ActWake:
				e.schedule(Event{At: a.At, Kind: evWake, proc: uint16(e.p)})
				pr.wakeSeq = e.seq
			case sched.ActCredit:
				e.acquire(a.Credit)
			case sched.ActReturnCredit:
				pr.returnCredit(e.now, a.Credit)
			case sched.ActTurnDone:
				e.partDone(e.partOf(a), a.Turn)
			case sched.ActResult:
				if p := e.partOf(a); p.Join > 0 {
					e.Agents.Answered(e.now, p, a.Result)
					e.drive()
				}
			}
		}
	}
}

// hdrLatencies returns the engine's latency distributions as HdrHistograms.
func (e *engine) hdrLatencies() collect.HDRLatencies {
	return collect.HDRLatencies{
		Strategy: e.st.Name, Seed: e.sc.Seed,
		Turn: e.m.TurnLat.Hdr(e.m.Window), Call: e.m.CallLat.Hdr(e.m.Window),
	}
}
