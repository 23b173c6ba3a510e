package sim

import (
	"time"

	"github.com/simbench/simbench/fakeapi"
	"github.com/simbench/simbench/internal/agent"
	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/sched/satmath"
)

// attempt is one request between a client and a fake service: on its way
// out, at the service, or its answer on its way back; what the client
// needs of the service's decision.
type attempt struct {
	id     sched.AttemptID
	req    fakeapi.ID    // the service's id of an admitted request, else 0
	back   time.Duration // the network delay of the answer on its way back
	svc    int32
	proc   uint16 // the process that sent it
	phase  uint8  // phaseOut, phaseServer or phaseBack
	kind   fakeapi.Kind
	dead   bool   // the client stopped waiting; its events only settle the service's side
	reader bool   // cancelled at the reader only: the request goes on to the server, which works on
	answer answer // what the client reads of the service's answer (not for a hang)
	// _ pads an attempt to 128 bytes, two cache lines, in the slab
	// (page-aligned once it is large): at 112 bytes three in four
	// straddle three lines, and an attempt's send, end and answer each
	// read them long out of the cache.
	_ [16]byte
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

// outgoing is what a service needs of an attempt's request, kept while the
// attempt is on its way out.
type outgoing struct {
	client, resource string
	tokens, output   int64 // output is the part of tokens the model generates
	write            bool
}

// newOutgoing returns the request of attempt a (an ActStart) of the call
// meta describes.
func newOutgoing(a *sched.Action, meta *agent.CallMeta) outgoing {
	req := outgoing{client: meta.Client, tokens: a.Call.Tokens, output: max(0, min(meta.Output, a.Call.Tokens)), write: meta.Write}
	if meta.Write {
		req.resource = a.Call.Resource
		if req.resource == "" {
			req.resource = a.Call.Service
		}
	}
	return req
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
	meta := a.Call.Payload.(*agent.CallMeta)
	si := e.attemptService(a, meta)
	req := newOutgoing(a, meta)
	at := &e.slab[i]
	*at = attempt{id: a.Attempt, svc: int32(si), proc: uint16(e.p)}
	if a.Hedge {
		meta.Slab[1] = i
	} else {
		meta.Slab[0] = i
	}
	var out time.Duration
	if nd := &e.net[si]; nd.On() {
		// Both ways are drawn as the attempt leaves, so the stream's order
		// follows the order of attempts alone.
		out, at.back = nd.Draw(e.netRng[si]), nd.Draw(e.netRng[si])
	}
	e.countStart(e.p, si, meta, e.now)
	if e.trace != nil {
		e.traceStart(i, a, meta)
	}
	if out > 0 {
		e.outReq[i] = req
		e.schedule(Event{At: satmath.Add(e.now, out), Kind: evArrive, Ref: i, proc: at.proc})
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
	r := req.request(e.sc.Services[at.svc].ClientKey())
	var d fakeapi.Decision
	m.ArriveTo(e.now, &r, &d)
	if e.onArrive != nil {
		// A copy for the hook, so that d itself stays on the stack.
		seen := d
		e.onArrive(e.now, &seen)
	}
	at.req, at.kind = d.ID, d.Kind
	e.countDecision(r.Client, e.now, &d)
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
		e.schedule(Event{At: satmath.Add(e.now, d.Latency), Kind: evServed, Ref: i, proc: at.proc})
	default:
		at.phase = phaseBack
		if at.dead {
			e.freeAttempt(i)
			return
		}
		// A rejection is answered at once, or when a stall ends, and
		// reaches the client a network delay later.
		e.schedule(Event{At: answerAt(&d, e.now, at.back), Kind: evResponse, Ref: i, proc: at.proc})
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
		e.schedule(Event{At: satmath.Add(e.now, at.back), Kind: evResponse, Ref: i, proc: at.proc})
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
	o := at.answer.outcome()
	e.countAnswer(int(at.proc), int(at.svc), e.now, o.Class)
	if e.trace != nil {
		e.traceEnd(i, at.proc, at.id, o)
	}
	pr.core.Complete(e.now, at.id, o)
}

// inFlight returns the slab entry of attempt id of this process's call
// meta, if the client still waits for it: an entry that holds the attempt
// and is not dead. The call's meta remembers its latest attempt and hedge;
// an attempt neither names (a promoted hedge that was hedged in turn) is
// looked for in the whole slab.
func (e *engine) inFlight(meta *agent.CallMeta, id sched.AttemptID) (int32, bool) {
	awaited := func(i int32) bool {
		at := &e.slab[i]
		return at.id == id && int(at.proc) == e.p && !at.dead
	}
	for _, i := range meta.Slab {
		if awaited(i) {
			return i, true
		}
	}
	for i := range int32(len(e.slab)) {
		if awaited(i) {
			return i, true
		}
	}
	return 0, false
}

// cancelAttempt stops waiting for an attempt. At the transport the service
// sees the connection close (or, on the way out, never sees the request);
// at the reader the request goes on and the service works on it (wasted
// work). An answer already on its way back is dropped.
func (e *engine) cancelAttempt(a *sched.Action) {
	id := a.Attempt
	i, ok := e.inFlight(a.Call.Payload.(*agent.CallMeta), id)
	if !ok {
		return
	}
	at := &e.slab[i]
	e.m.Ended(int(at.svc), e.now, false)
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
