package sim

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/simbench/simbench/fakeapi"
	"github.com/simbench/simbench/internal/satmath"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/trace"
)

// engine runs one strategy of one scenario in virtual time: an event heap
// drives the sched core (the production decision code) and one fakeapi model
// per service. It reads no clock and starts no goroutines; all randomness
// comes from streams derived from the scenario seed.
type engine struct {
	sc *scenarios.Scenario
	st *scenarios.Strategy
	// agents is the agent loop: sessions, turns and subagents.
	agents *agentLoop
	ops    []agentOp // scratch: the agent loop's ops being carried out
	now    time.Duration
	end    time.Duration // no turn starts at or after end
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
	outReq  []outgoing
	free    []int32      // free slab entries
	cancels []*agentTurn // turns with a pending cancel event, by event ref
	freeC   []int32
	// quota is the shared quota's model (QuotaShared only).
	quota *sharedQuota
	gated []gatedAttempt // attempts waiting for the shared quota, by attempt.gate-1
	freeG []int32

	transport bool // cancellation reaches the transport
	m         *collector
	// cutOff is set when the run stopped at the drain limit with work left.
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

// attempt is one request between a client and a fake service: on its way
// out, at the service, or its answer on its way back; what the client
// needs of the service's decision.
type attempt struct {
	id     sched.AttemptID
	svc    int32
	phase  uint8      // phaseOut, phaseServer or phaseBack
	req    fakeapi.ID // the service's id of an admitted request, else 0
	kind   fakeapi.Kind
	dead   bool          // the client stopped waiting; its events only settle the service's side
	reader bool          // cancelled at the reader only: the request goes on to the server, which works on
	proc   uint16        // the process that sent it
	gate   int32         // waiting for the shared quota: its entry in gated, plus 1; else 0
	back   time.Duration // the network delay of the answer on its way back
	answer answer        // what the client reads of the service's answer (not for a hang)
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
		sc: sc, st: st, end: sc.Duration, stop: drainLimit(sc.Duration),
		transport: st.CancelAt != scenarios.CancelAtReader, trace: et, limits: limits,
	}
	if err := e.newProcesses(cfg); err != nil {
		return nil, err
	}
	e.agents = newAgentLoop(sc, st, sc.Workload.Shares(), maxTurnCalls(DefaultMaxMemory))
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

// run simulates until every turn is done or the drain limit passes. It
// returns false when ctx ended the run early (the results are partial).
func (e *engine) run(ctx context.Context, progress func(virtual time.Duration)) bool {
	e.agents.begin()
	e.drive()
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
			e.agents.cancel(e.now, tr)
			e.drive()
		case evGate:
			e.gate(ev.ref)
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
				e.partDone(a.Tag.(*agentPart), a.Turn)
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
	at.req, at.kind = d.ID, d.Kind
	if d.Kind != fakeapi.KindHang {
		at.answer = e.readers[at.svc].read(&d, e.now, answerAt(&d, e.now, at.back))
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
		e.schedule(event{at: answerAt(&d, e.now, at.back), kind: evResponse, ref: i, proc: at.proc})
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
	o := at.answer.outcome()
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
