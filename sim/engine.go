package sim

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/simbench/simbench/fakeapi"
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
	sc *scenarios.Scenario
	st *scenarios.Strategy
	// agents is the agent loop: sessions, turns and subagents.
	agents *agentLoop
	// classes gathers each session class's figures (nil without classes).
	classes *classStats
	ops     []agentOp // scratch: the agent loop's ops being carried out
	now     time.Duration
	end     time.Duration // no turn starts at or after end
	// stop is when the run ends: the scenario's duration, so that work
	// still running then is unfinished, reported as such and kept out of
	// the figures. (Engine tests move it later to drain every turn.)
	stop time.Duration

	// procs are the agent processes, each with its own scheduler (one
	// unless the workload sets processes); p is the one the event being
	// handled belongs to.
	procs  []proc
	p      int
	multi  bool // more than one process: keep per-process figures
	models []*fakeapi.Model
	// net and netRng draw each service's one-way network delays, from a
	// stream of the service's own.
	net    []netDelay
	netRng []*rand.Rand
	events eventQueue
	seq    uint64
	acts   []sched.Action
	slab   []attempt
	// outReq holds, by slab entry, what the service needs of an attempt on
	// its way out; apart from the slab so that the slab holds no pointers.
	outReq  []outgoing
	free    []int32      // free slab entries
	cancels []*agentTurn // turns with a pending cancel event, by event ref
	freeC   []int32
	// store is the shared quota's store (QuotaShared only); credits the
	// processes' requests for credit on their way, by evCredit ref.
	store   *quotaStore
	credits []pendingCredit
	freeQ   []int32

	transport bool // cancellation reaches the transport
	m         *collector
	// cutOff is set when the run stopped at its end with work left.
	cutOff bool
	// err is why the run stopped early, when it did for a reason of its own.
	err error
	// processed counts the events processed.
	processed int64
	// onArrive, when set (tests), sees every decision a service makes.
	onArrive func(now time.Duration, d *fakeapi.Decision)
	// trace, when set, writes one record per attempt.
	trace *engineTrace
	// readers read each service's answers, by service index.
	readers []*answerReader
	// limits, when set, records the strategy's adaptive limits as they step.
	limits *limitRecorder
}

// scheduleCancel schedules a cancel of tr at time at, unless at is past the
// drain limit, where the run ends before it.
func (e *engine) scheduleCancel(at time.Duration, tr *agentTurn) {
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
	tr.held++
	e.schedule(event{at: at, kind: evCancel, ref: i, proc: uint16(tr.proc)})
}

func newEngine(sc *scenarios.Scenario, st *scenarios.Strategy) (*engine, error) {
	return newTracedEngine(sc, st, nil)
}

// newTracedEngine is newEngine writing one trace record per attempt to tw
// when tw is not nil.
func newTracedEngine(sc *scenarios.Scenario, st *scenarios.Strategy, tw *trace.Writer) (*engine, error) {
	if n := sc.Workload.Sessions; n > math.MaxInt32 {
		// Session events name their session in an int32.
		return nil, fmt.Errorf("%d sessions is more than the engine's %d: %w", n, math.MaxInt32, ErrTooLarge)
	}
	cfg, err := ProcessSchedConfig(sc, st)
	if err != nil {
		return nil, err
	}
	var et *engineTrace
	if tw != nil {
		et = newEngineTrace(tw)
	}
	// Process 0's limits are the ones traced (every process of a fleet
	// runs the same strategy).
	limits := newLimitRecorder(sc, &cfg)
	e := &engine{
		sc: sc, st: st, end: sc.Duration, stop: sc.Duration,
		transport: st.CancelAt != scenarios.CancelAtReader, trace: et, limits: limits,
	}
	if err := e.newProcesses(cfg); err != nil {
		return nil, err
	}
	e.agents = newAgentLoop(sc, st, sc.Workload.Shares(), maxTurnCalls(DefaultMaxMemory))
	e.classes = newClassStats(sc)
	names := make([]string, len(sc.Services))
	for i := range sc.Services {
		svc := &sc.Services[i]
		mc := ScenarioModelConfig(sc, svc)
		// The service's stream depends on the seed and the service only: every
		// strategy meets the same latencies and faults in the same order of arrivals.
		m, err := fakeapi.NewModel(mc, stream(sc.Seed, "service/"+svc.Name))
		if err != nil {
			return nil, fmt.Errorf("service %q: %w", svc.Name, err)
		}
		e.models = append(e.models, m)
		e.net = append(e.net, newNetDelay(svc.NetworkDelay))
		e.netRng = append(e.netRng, stream(sc.Seed, "network/"+svc.Name))
		names[i] = svc.Name
		e.readers = append(e.readers, newAnswerReader(m.Config()))
	}
	e.m = newCollector(names, sc.Duration)
	for _, w := range EventWindows(sc) {
		e.m.windows = append(e.m.windows, windowAcc{w: w})
	}
	return e, nil
}

func (e *engine) schedule(ev event) {
	e.seq++
	ev.seq = e.seq
	e.events.push(ev)
}

// progressEvery is how many events pass between progress reports and
// cancellation checks.
const progressEvery = 1 << 14

// run simulates until every turn is done or the run's end passes. It
// returns false when ctx ended the run early (the results are partial).
func (e *engine) run(ctx context.Context, progress func(virtual time.Duration)) bool {
	e.agents.begin()
	e.drive()
	for n := 0; e.events.len() > 0 && e.err == nil; n++ {
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
		if ev.at > e.stop {
			e.cutOff = true
			break
		}
		e.now = ev.at
		e.p = int(ev.proc)
		switch ev.kind {
		case evWake:
			if pr := &e.procs[e.p]; ev.seq == pr.wakeSeq {
				pr.core.Advance(e.now)
			}
		case evArrival:
			e.agents.arrive(e.now)
			e.drive()
		case evSession:
			e.agents.wake(e.now, int(ev.ref))
			e.drive()
		case evArrive:
			e.arrived(ev.ref)
		case evServed:
			e.served(ev.ref)
		case evResponse:
			e.respond(ev.ref)
		case evCancel:
			tr := e.cancels[ev.ref]
			e.cancels[ev.ref] = nil
			e.freeC = append(e.freeC, ev.ref)
			tr.held--
			e.agents.cancel(e.now, tr)
			e.drive()
			e.agents.release(tr)
		case evCredit:
			e.credited(ev.ref)
		}
		e.carry()
	}
	if progress != nil {
		progress(e.end)
	}
	for i := range e.procs {
		n := int64(e.agents.unfinished(i))
		e.m.unfinished += n
		e.procs[i].stats.unfinished = n
	}
	return true
}

// partOf returns the part an ActResult or ActTurnDone is about. A part
// that is now another sched turn's was reused while its own still ran:
// the results would count as another turn's, and partOf panics.
func (e *engine) partOf(a *sched.Action) *agentPart {
	p := a.Tag.(*agentPart)
	if p.id != a.TurnID {
		panic(fmt.Sprintf("sim: sched turn %d answered at %v through a part reused by sched turn %d", a.TurnID, e.now, p.id))
	}
	return p
}

// fail stops the run with err (the first one wins).
func (e *engine) fail(err error) {
	if e.err == nil {
		e.err = fmt.Errorf("strategy %q at %v: %w", e.st.Name, e.now, err)
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
				e.schedule(event{at: a.At, kind: evWake, proc: uint16(e.p)})
				pr.wakeSeq = e.seq
			case sched.ActCredit:
				e.acquire(a.Credit)
			case sched.ActReturnCredit:
				e.returnCredit(a.Credit)
			case sched.ActTurnDone:
				e.partDone(e.partOf(a), a.Turn)
			case sched.ActResult:
				if p := e.partOf(a); p.join > 0 {
					e.agents.answered(e.now, p, a.Result)
					e.drive()
				}
			}
		}
	}
}
