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
	"github.com/simbench/simbench/sched/satmath"
	"github.com/simbench/simbench/trace"
)

// engine runs one strategy of one scenario in virtual time: an event heap
// drives the sched core (the production decision code) and one fakeapi model
// per service. It reads no clock and starts no goroutines; all randomness
// comes from streams derived from the scenario seed.
type engine struct {
	sc  *scenarios.Scenario
	st  *scenarios.Strategy
	wl  *workload
	now time.Duration
	end time.Duration // no turn starts at or after end
	// stop bounds the drain after end: a strategy that cannot finish its
	// turns is cut off here and its unfinished turns are reported.
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
	events eventHeap
	seq    uint64
	acts   []sched.Action
	slab   []attempt
	// outReq holds, by slab entry, what the service needs of an attempt on
	// its way out; apart from the slab so that the slab holds no pointers.
	outReq   []outgoing
	free     []int32    // free slab entries
	cancels  []*turnRun // turns with a pending cancel event, by event ref
	freeC    []int32
	serial   uint64 // numbers calls, to tell clients apart at the services
	turnNo   uint64
	arrivals *rand.Rand
	live     int // turn runs not yet finished
	// sessionProc is the process of each closed-model session, and
	// procDraws the stream open-model arrivals draw their process from
	// (multi-process runs only).
	sessionProc []uint16
	procDraws   *rand.Rand
	shares      []float64
	// quota is the shared quota's model (QuotaShared only).
	quota *sharedQuota
	gated []gatedAttempt // attempts waiting for the shared quota, by attempt.gate-1
	freeG []int32

	transport bool // cancellation reaches the transport
	serialize bool
	m         *collector
	// cutOff is set when the run stopped at the drain limit with work left.
	cutOff bool
	// maxTurnCalls bounds the calls (and subagents) one turn may draw: a
	// turn past it would need more memory than the run's budget, so the run
	// stops with err wrapping ErrTooLarge instead.
	maxTurnCalls int
	// err is why the run stopped early, when it did for a reason of its own.
	err error
	// processed counts the events processed.
	processed int64
	// onArrive, when set (tests), sees every decision a service makes.
	onArrive func(now time.Duration, d *fakeapi.Decision)
	// trace, when set, writes one record per attempt.
	trace *engineTrace
	// quotaStyle is, per service, the header style whose remaining counts
	// responses carry ("" when its headers carry none).
	quotaStyle []fakeapi.HeaderStyle
	// limits, when set, records the strategy's adaptive limits as they step.
	limits *limitRecorder
}

// attempt is one request between a client and a fake service: on its way
// out, at the service, or its answer on its way back; what the client
// needs of the service's decision.
type attempt struct {
	id         sched.AttemptID
	svc        int32
	phase      uint8      // phaseOut, phaseServer or phaseBack
	req        fakeapi.ID // the service's id of an admitted request, else 0
	kind       fakeapi.Kind
	hasRetry   bool
	dead       bool // the client stopped waiting; its events only settle the service's side
	reader     bool // cancelled at the reader only: the request goes on to the server, which works on
	status     int32
	retryAfter time.Duration
	tokens     int64
	quota      sched.ServerQuota // what the response's rate-limit headers carry
	proc       uint16            // the process that sent it
	gate       int32             // waiting for the shared quota: its entry in gated, plus 1; else 0
	back       time.Duration     // the network delay of the answer on its way back
}

// Where an attempt is: the phases of attempt.phase.
const (
	phaseOut    uint8 = iota // sent, not yet at the service (network delay)
	phaseServer              // at the service: admitted and not yet answered
	phaseBack                // answered: the answer is on its way back
)

// newAttempt takes a slab entry.
func (e *engine) newAttempt() int32 {
	if n := len(e.free); n > 0 {
		i := e.free[n-1]
		e.free = e.free[:n-1]
		return i
	}
	e.slab = append(e.slab, attempt{})
	e.outReq = append(e.outReq, outgoing{})
	return int32(len(e.slab) - 1)
}

func (e *engine) freeAttempt(i int32) {
	e.slab[i] = attempt{}
	e.free = append(e.free, i)
}

// scheduleCancel schedules a cancel of tr at time at, unless at is past the
// drain limit, where the run ends before it.
func (e *engine) scheduleCancel(at time.Duration, tr *turnRun) {
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
	e.schedule(event{at: at, kind: evCancel, ref: i, proc: uint16(tr.proc)})
}

// turnRun is one agent turn: an optional model call, then the tool calls,
// then (multi-agent) the subagents; it ends when its last part ends.
type turnRun struct {
	proc      int
	session   int    // -1 in the open model
	no        uint64 // the turn's number in the run, from 1
	start     time.Duration
	pcg       rand.PCG // the turn's own stream, kept here to save an allocation
	rng       *rand.Rand
	active    []sched.TurnID
	parts     int // sched turns submitted and not yet done
	cancelled bool
	failed    bool
}

// part tags a sched turn with the agent turn it belongs to.
type part struct {
	tr    *turnRun
	kind  uint8 // partLLM, partTools, partSub
	sub   *subagent
	turns sched.TurnID
	at    time.Duration // when it was submitted
}

const (
	partLLM uint8 = iota
	partTools
	partSubLLM
	partSubTools
)

// subagent is one subagent of a multi-agent turn.
type subagent struct {
	iteration int
	spent     int64
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
		sc: sc, st: st, wl: newWorkload(sc), end: sc.Duration, stop: satmath.Add(sc.Duration, max(sc.Duration/2, time.Minute)),
		transport: st.CancelAt != scenarios.CancelAtReader, serialize: st.SerializeWrites,
		arrivals: stream(sc.Seed, "arrivals"), maxTurnCalls: maxTurnCalls(DefaultMaxMemory), trace: et, limits: limits,
	}
	if err := e.newProcesses(cfg); err != nil {
		return nil, err
	}
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
		var style fakeapi.HeaderStyle
		if h := m.Config().Headers; h == fakeapi.HeadersOpenAI || h == fakeapi.HeadersAnthropic {
			style = h
		}
		e.quotaStyle = append(e.quotaStyle, style)
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

// run simulates until every turn is done or the drain limit passes. It
// returns false when ctx ended the run early (the results are partial).
func (e *engine) run(ctx context.Context, progress func(virtual time.Duration)) bool {
	w := &e.sc.Workload
	if w.Sessions > 0 {
		for s := range w.Sessions {
			e.schedule(event{at: w.SessionStart(s), kind: evSession, ref: int32(s), proc: e.sessionProcess(s)})
		}
	} else {
		e.schedule(event{at: 0, kind: evArrival})
	}
	for n := 0; len(e.events) > 0 && e.err == nil; n++ {
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
			if e.now < e.end {
				if e.multi {
					e.p = e.arrivalProcess()
				}
				e.startTurn(-1)
				// Arrivals at or after the end start nothing: not scheduling
				// them keeps a gap too long for a Duration from counting
				// as work cut off.
				if next := satmath.Add(e.now, e.wl.interarrival(e.arrivals)); next < e.end {
					e.schedule(event{at: next, kind: evArrival})
				}
			}
		case evSession:
			if s := int(ev.ref); e.now < e.end && (w.Turns == 0 || e.m.sessionTurns(s) < w.Turns) {
				e.startTurn(s)
			}
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
			e.cancelTurn(tr)
		case evGate:
			e.gate(ev.ref)
		}
		e.carry()
	}
	if progress != nil {
		progress(e.end)
	}
	e.m.unfinished = int64(e.live)
	for i := range e.procs {
		e.procs[i].stats.unfinished = int64(e.procs[i].live)
	}
	return true
}

// startTurn begins an agent turn now.
func (e *engine) startTurn(session int) {
	e.turnNo++
	tr := &turnRun{proc: e.p, session: session, no: e.turnNo, start: e.now}
	if session >= 0 {
		n := e.m.beginSessionTurn(session)
		tr.pcg.Seed(e.sc.Seed^0x5e55, uint64(session)<<32|uint64(n))
	} else {
		tr.pcg.Seed(e.sc.Seed^0xa771, e.turnNo)
	}
	tr.rng = rand.New(&tr.pcg)
	e.live++
	e.procs[e.p].live++
	e.m.turnBegun(e.now)
	c := &e.sc.Workload.Cancel
	if c.Probability > 0 && tr.rng.Float64() < c.Probability {
		e.scheduleCancel(satmath.Add(e.now, e.wl.cancelAt.duration(tr.rng)), tr)
	}
	if c.ParentTimeout > 0 {
		e.scheduleCancel(satmath.Add(e.now, c.ParentTimeout), tr)
	}
	if e.wl.llm != nil {
		e.submit(tr, &part{tr: tr, kind: partLLM}, sched.Turn{Calls: e.wl.llmCall(tr.rng, e.wl.llm, &e.serial)})
		return
	}
	e.toolPhase(tr)
}

func (e *engine) toolPhase(tr *turnRun) {
	calls, err := e.wl.callsUpTo(tr.rng, e.wl.groups, e.serialize, &e.serial, e.maxTurnCalls)
	if err != nil {
		e.fail(err)
		return
	}
	e.submit(tr, &part{tr: tr, kind: partTools}, sched.Turn{Calls: calls})
}

// fail stops the run with err (the first one wins).
func (e *engine) fail(err error) {
	if e.err == nil {
		e.err = fmt.Errorf("strategy %q at %v: %w", e.st.Name, e.now, err)
	}
}

// submit hands one part of a turn to the scheduler.
func (e *engine) submit(tr *turnRun, p *part, t sched.Turn) {
	t.Tag = p
	p.at = e.now
	id, err := e.procs[tr.proc].core.Submit(e.now, t)
	if err != nil {
		// A refused turn (queue full) fails as a whole.
		e.m.refused++
		tr.failed = true
		if tr.parts == 0 {
			e.finishTurn(tr)
		}
		return
	}
	p.turns = id
	tr.parts++
	if p.kind == partTools || p.kind == partSubTools {
		e.m.enter(e.now, len(t.Calls))
	}
	tr.active = append(tr.active, id)
}

// cancelTurn cancels every part of a turn still running.
func (e *engine) cancelTurn(tr *turnRun) {
	if tr.cancelled || tr.parts == 0 {
		return
	}
	tr.cancelled = true
	for _, id := range tr.active {
		e.procs[tr.proc].core.Cancel(e.now, id)
	}
}

// partDone moves a turn on when one of its sched turns finished.
func (e *engine) partDone(p *part, res *sched.TurnResult) {
	tr := p.tr
	tr.parts--
	for i, id := range tr.active {
		if id == p.turns {
			tr.active = append(tr.active[:i], tr.active[i+1:]...)
			break
		}
	}
	ok := true
	for i := range res.Results {
		e.m.result(&res.Results[i], p.kind == partLLM || p.kind == partSubLLM)
		if e.multi && p.kind != partLLM && p.kind != partSubLLM {
			e.procs[tr.proc].stats.result(&res.Results[i], e.m.window)
		}
		if res.Results[i].Err != nil {
			ok = false
		}
	}
	if !tr.cancelled {
		switch p.kind {
		case partLLM:
			if ok {
				e.toolPhase(tr)
			} else {
				tr.failed = true
			}
		case partTools:
			if !ok {
				tr.failed = true
			}
			if sg := e.wl.sub; sg != nil && ok {
				n := sg.count.count(tr.rng) // a draw of 0 runs no subagent
				if n > e.maxTurnCalls {
					e.fail(tooManyInTurn("subagents", int64(n), e.maxTurnCalls))
					break
				}
				for range n {
					e.iterate(tr, &subagent{})
				}
			}
		case partSubLLM:
			if ok { // a subagent whose model call failed ends there
				e.subTools(tr, p.sub)
			}
		case partSubTools:
			e.afterIteration(tr, p.sub)
		}
	}
	if tr.parts == 0 {
		e.finishTurn(tr)
	}
}

// iterate starts a subagent's next iteration. Iterations that make no call
// follow one another in a loop, not by recursion, so a subagent of many
// empty iterations cannot exhaust the stack.
func (e *engine) iterate(tr *turnRun, s *subagent) {
	sg := e.wl.sub
	for {
		s.iteration++
		if sg.llm != nil {
			e.submit(tr, &part{tr: tr, kind: partSubLLM, sub: s}, e.budgeted(sg, s, e.wl.llmCall(tr.rng, sg.llm, &e.serial)))
			return
		}
		if e.subCalls(tr, s) || e.subDone(tr, s) {
			return
		}
	}
}

// subTools submits a subagent iteration's tool calls after its model call,
// or moves on when it makes none.
func (e *engine) subTools(tr *turnRun, s *subagent) {
	if !e.subCalls(tr, s) {
		e.afterIteration(tr, s)
	}
}

// subCalls submits a subagent iteration's tool calls and reports whether it
// made any (or the run failed).
func (e *engine) subCalls(tr *turnRun, s *subagent) bool {
	calls, err := e.wl.callsUpTo(tr.rng, e.wl.sub.groups, e.serialize, &e.serial, e.maxTurnCalls)
	if err != nil {
		e.fail(err)
		return true
	}
	if len(calls) == 0 {
		return false
	}
	e.submit(tr, &part{tr: tr, kind: partSubTools, sub: s}, e.budgeted(e.wl.sub, s, calls))
	return true
}

// budgeted turns a subagent's remaining token budget into the sched turn's
// budget and counts the iteration's estimated tokens as spent.
func (e *engine) budgeted(sg *subGen, s *subagent, calls []sched.Call) sched.Turn {
	t := sched.Turn{Calls: calls}
	if sg.budget > 0 {
		t.TokenBudget = max(1, sg.budget-s.spent)
	}
	for i := range calls {
		s.spent = satmath.Add(s.spent, calls[i].Tokens)
	}
	return t
}

// afterIteration ends a subagent or starts its next iteration.
func (e *engine) afterIteration(tr *turnRun, s *subagent) {
	if !e.subDone(tr, s) {
		e.iterate(tr, s)
	}
}

// subDone reports whether a subagent ends after its current iteration.
func (e *engine) subDone(tr *turnRun, s *subagent) bool {
	sg := e.wl.sub
	return s.iteration >= sg.maxIterations || (sg.budget > 0 && s.spent >= sg.budget) ||
		(sg.finish > 0 && tr.rng.Float64() < sg.finish)
}

// finishTurn records a finished agent turn and, in the closed model,
// schedules the session's next one after its think time.
func (e *engine) finishTurn(tr *turnRun) {
	e.live--
	e.procs[tr.proc].live--
	e.m.turn(e.now, e.now-tr.start, tr.failed || tr.cancelled)
	if e.multi {
		e.procs[tr.proc].stats.turn(e.now-tr.start, tr.failed || tr.cancelled)
	}
	if tr.session >= 0 {
		next := satmath.Add(e.now, e.wl.think.duration(tr.rng))
		if next == tr.start {
			// A turn that failed at once with no think time would start the
			// next at the same instant, forever: virtual time would never
			// move. An agent needs some time between turns.
			next += minTurnGap
		}
		if next < e.end { // later session events start nothing
			e.schedule(event{at: next, kind: evSession, ref: int32(tr.session), proc: uint16(tr.proc)})
		}
	}
}

// minTurnGap is the least time between a session's turns when a turn took
// no time and the session does not think.
const minTurnGap = time.Millisecond

// carry does what the scheduler decided.
func (e *engine) carry() {
	pr := &e.procs[e.p]
	for {
		e.acts = pr.core.Actions(e.acts[:0])
		if len(e.acts) == 0 {
			return
		}
		for i := range e.acts {
			a := &e.acts[i]
			switch a.Kind {
			case sched.ActStart:
				if pr.leases != nil {
					e.gateStart(a)
				} else {
					e.start(a)
				}
			case sched.ActCancel:
				e.cancelAttempt(a.Attempt)
			case sched.ActWake:
				e.schedule(event{at: a.At, kind: evWake, proc: uint16(e.p)})
				pr.wakeSeq = e.seq
			case sched.ActTurnDone:
				e.partDone(a.Tag.(*part), a.Turn)
			}
		}
	}
}

// outgoing is what a service needs of an attempt's request, kept while the
// attempt is on its way out.
type outgoing struct {
	client, resource string
	tokens, output   int64 // output is the part of tokens the model generates
	write            bool
}

// request is the request the service sees: tokens less output as input,
// output as output.
func (o *outgoing) request(key string) fakeapi.Request {
	return fakeapi.Request{Client: o.client, Key: key, Method: "POST", Tokens: o.tokens - o.output, OutputTokens: o.output, Write: o.write, Resource: o.resource}
}

// start sends an attempt to its service's model. With a network delay the
// service sees it that much later (evArrive); the client counts it in
// flight from now until it reads the answer.
func (e *engine) start(a *sched.Action) {
	e.send(a, e.newAttempt())
}

// send sends an attempt to its service's model, in slab entry i.
func (e *engine) send(a *sched.Action, i int32) {
	meta := a.Call.Payload.(*callMeta)
	si := meta.svc
	req := outgoing{client: meta.client, tokens: a.Call.Tokens, output: max(0, min(meta.output, a.Call.Tokens)), write: meta.write}
	if meta.write {
		req.resource = a.Call.Resource
		if req.resource == "" {
			req.resource = a.Call.Service
		}
	}
	pr := &e.procs[e.p]
	at := &e.slab[i]
	gated := at.gate != 0
	*at = attempt{id: a.Attempt, svc: int32(si), proc: uint16(e.p)}
	if !gated {
		pr.attempts.put(a.Attempt, i)
	}
	var out time.Duration
	if nd := &e.net[si]; nd.on() {
		// Both ways are drawn as the attempt leaves, so the stream's order
		// follows the order of attempts alone.
		out, at.back = nd.draw(e.netRng[si]), nd.draw(e.netRng[si])
	}
	e.m.started(si, e.now, meta.tool < 0)
	if e.multi && meta.tool >= 0 {
		pr.stats.attempts++
	}
	if e.trace != nil {
		e.traceStart(i, a, meta)
	}
	if out > 0 {
		e.outReq[i] = req
		e.schedule(event{at: satmath.Add(e.now, out), kind: evArrive, ref: i, proc: at.proc})
		return
	}
	e.arrive(i, &req)
}

// arrived hands an attempt whose delay out has passed to its service.
func (e *engine) arrived(i int32) {
	req := e.outReq[i]
	e.outReq[i] = outgoing{}
	e.arrive(i, &req)
}

// arrive hands an attempt's request to its service's model, now.
func (e *engine) arrive(i int32, req *outgoing) {
	at := &e.slab[i]
	if at.dead && !at.reader {
		// Cancelled on its way out, at the transport: the connection
		// closed before the service saw the request.
		e.freeAttempt(i)
		return
	}
	m := e.models[at.svc]
	d := m.Arrive(e.now, req.request(e.sc.Services[at.svc].ClientKey()))
	if e.onArrive != nil {
		e.onArrive(e.now, &d)
	}
	at.req, at.kind, at.status = d.ID, d.Kind, int32(d.Status)
	at.hasRetry, at.retryAfter, at.tokens = d.HasRetryAfter, d.RetryAfter, d.Tokens
	if e.quotaStyle[at.svc] != "" {
		at.quota = headerQuota(&d, e.quotaStyle[at.svc])
	}
	switch {
	case d.Kind == fakeapi.KindHang:
		// No answer: the scheduler's timeout or a cancel ends it.
		at.phase = phaseServer
		if at.dead {
			// Abandoned at the reader on its way out: nobody will close
			// the connection of a request that never ends, so the run's
			// client lets it go here.
			m.Cancel(e.now, at.req)
			e.freeAttempt(i)
		}
	case d.Admitted():
		at.phase = phaseServer
		e.schedule(event{at: satmath.Add(e.now, d.Latency), kind: evServed, ref: i, proc: at.proc})
	default:
		at.phase = phaseBack
		if at.dead {
			e.freeAttempt(i)
			return
		}
		// A rejection is answered at once, or when a stall ends, and
		// reaches the client a network delay later.
		e.schedule(event{at: satmath.Add(satmath.Add(e.now, d.Latency), at.back), kind: evResponse, ref: i, proc: at.proc})
	}
}

// served ends an admitted attempt's work at its service and sends the
// answer back (or, after a reader-only cancel, lets the service finish
// work nobody will read).
func (e *engine) served(i int32) {
	at := &e.slab[i]
	m := e.models[at.svc]
	if at.dead {
		if at.reader {
			m.Finish(e.now, at.req, true)
		}
		e.freeAttempt(i)
		return
	}
	m.Finish(e.now, at.req, false)
	at.req = 0
	at.phase = phaseBack
	if at.back > 0 {
		e.schedule(event{at: satmath.Add(e.now, at.back), kind: evResponse, ref: i, proc: at.proc})
		return
	}
	e.respond(i)
}

// respond delivers an attempt's answer to the client.
func (e *engine) respond(i int32) {
	at := e.slab[i]
	e.freeAttempt(i)
	if at.dead {
		return // the client stopped waiting on the way back
	}
	pr := &e.procs[at.proc]
	pr.attempts.remove(at.id)
	o := outcome(&at)
	e.m.ended(int(at.svc), e.now, o.Class == sched.ClassRateLimited)
	if e.multi && o.Class == sched.ClassRateLimited {
		pr.stats.rateLimited++
	}
	if e.trace != nil {
		e.traceEnd(i, at.proc, at.id, o)
	}
	pr.core.Complete(e.now, at.id, o)
}

// cancelAttempt stops waiting for an attempt. At the transport the service
// sees the connection close (or, on the way out, never sees the request);
// at the reader the request goes on and the service works on it (wasted
// work). An answer already on its way back is dropped.
func (e *engine) cancelAttempt(id sched.AttemptID) {
	pr := &e.procs[e.p]
	i, ok := pr.attempts.get(id)
	if !ok {
		return
	}
	pr.attempts.remove(id)
	at := &e.slab[i]
	if at.gate != 0 {
		// Still waiting for the shared quota: nothing reached the service.
		e.gated[at.gate-1].dead = true
		return
	}
	e.m.ended(int(at.svc), e.now, false)
	if e.trace != nil {
		e.traceEnd(i, at.proc, id, sched.Outcome{Class: sched.ClassCancelled})
	}
	at.dead = true
	switch {
	case at.phase == phaseOut:
		at.reader = !e.transport // its evArrive settles it
	case at.phase == phaseBack:
		// its evResponse frees it
	case at.kind == fakeapi.KindHang:
		// A hang has no event of its own: the connection closes, the slot frees.
		e.models[at.svc].Cancel(e.now, at.req)
		e.freeAttempt(i)
	case e.transport:
		e.models[at.svc].Cancel(e.now, at.req)
		at.req = 0 // its evServed frees it
	default:
		at.reader = true
	}
}

// outcome is what the client makes of a service's decision: the same
// classes the HTTP adapter gives real responses.
func outcome(a *attempt) sched.Outcome {
	o := outcomeClass(a)
	o.Quota = a.quota
	return o
}

// headerQuota is what a response's rate-limit headers of style tell the
// client of decision d: the remaining counts as sent, with the resets
// rounded as the headers round them (milliseconds for openai, whole
// seconds for anthropic), so that a virtual run sees what httptool reads
// from a live one. Anthropic reports the one token limit three times
// (tokens, input and output), which httptool reads as the same count.
func headerQuota(d *fakeapi.Decision, style fakeapi.HeaderStyle) sched.ServerQuota {
	unit := time.Millisecond
	if style == fakeapi.HeadersAnthropic {
		unit = time.Second
	}
	left := func(q fakeapi.Quota) sched.QuotaLeft {
		if q.Limit == 0 {
			return sched.QuotaLeft{}
		}
		return sched.QuotaLeft{Known: true, Remaining: max(q.Remaining, 0), Limit: q.Limit, Reset: fakeapi.RoundUp(q.Reset, unit)}
	}
	return sched.ServerQuota{Requests: left(d.Requests), Tokens: left(d.TokenQuota)}
}

// outcomeClass is the outcome of a decision without its quota.
func outcomeClass(a *attempt) sched.Outcome {
	switch a.kind {
	case fakeapi.KindOK:
		return sched.Outcome{Class: sched.ClassSuccess, Status: 200, Tokens: a.tokens, HasUsage: true}
	case fakeapi.KindRateLimited:
		return sched.Outcome{Class: sched.ClassRateLimited, Status: 429, RetryAfter: a.retryAfter, HasRetryAfter: a.hasRetry}
	case fakeapi.KindOverloaded:
		return sched.Outcome{Class: sched.ClassOverloaded, Status: int(a.status)}
	case fakeapi.KindServerError, fakeapi.KindReset:
		return sched.Outcome{Class: sched.ClassTransient, Status: int(a.status)}
	case fakeapi.KindTooLarge:
		return sched.Outcome{Class: sched.ClassTooLarge, Status: 413}
	case fakeapi.KindConflict:
		return sched.Outcome{Class: sched.ClassConflict, Status: 409}
	default:
		return sched.Outcome{Class: sched.ClassPermanent, Status: int(a.status)}
	}
}
