package sim

import (
	"container/heap"
	"context"
	"net/http"
	"time"

	"github.com/simbench/simbench/fakeapi"
	"github.com/simbench/simbench/internal/agent"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/sched/httptool"
	"github.com/simbench/simbench/sched/satmath"
)

// reference is the reference driver of a virtual run, kept as the oracle
// the fast engine (engine) must match: it drives the same parts (runParts:
// the sched core, the fakeapi models, the agent loop, the collectors) and
// is written for obviousness, not speed. Against the engine it has:
//
//   - a container/heap of events ordered by (time, sequence), each event
//     a closure holding what it acts on, with no front slot;
//   - attempts as values of their own, found by (process, attempt id) in
//     a map, never a slab entry given back and taken again;
//   - no reuse of anything: no turn is recycled (agentLoop.recycle), no
//     sched.TurnResult given back (Core.Recycle), no buffer of actions or
//     ops kept between calls;
//   - no fast path: every answer but a reset connection is built as the
//     server's status and headers and read by httptool (answerReader.slow);
//   - a replaced wake-up request leaves the heap at once rather than
//     coming out stale and being skipped;
//   - after each event, every process's scheduler is asked for its
//     decisions until none has any, not only the event's own process.
//
// It is slower than the engine; the differential tests
// (TestReferenceMatches) use it on small scenarios.
type reference struct {
	runParts
	now    time.Duration
	events refQueue
	seq    uint64
	// wakes holds each process's pending wake-up (nil: none).
	wakes []*refEvent
	// awaited holds the attempts a client still waits for.
	awaited map[refKey]*refAttempt
	err     error
}

// refKey names an attempt of one process.
type refKey struct {
	proc int
	id   sched.AttemptID
}

// refAttempt is one request between a client and a fake service.
type refAttempt struct {
	proc  int
	id    sched.AttemptID
	svc   int
	out   outgoing
	back  time.Duration // the network delay of the answer on its way back
	fid   fakeapi.ID    // the service's id of the request, once it arrived
	hang  bool          // the service never answers it
	phase uint8         // phaseOut, phaseServer or phaseBack
	// dead: the client stopped waiting; reader: it stopped at the reader
	// only, so the request goes on and the service works on it.
	dead, reader bool
	outcome      sched.Outcome // what the client reads of the answer
}

// refEvent is one pending event: do runs at at.
type refEvent struct {
	at    time.Duration
	seq   uint64
	index int // in the heap, for container/heap
	do    func()
}

// refQueue is a container/heap of events by (at, seq).
type refQueue []*refEvent

func (q refQueue) Len() int { return len(q) }
func (q refQueue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q refQueue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index, q[j].index = i, j
}
func (q *refQueue) Push(x any) {
	ev := x.(*refEvent)
	ev.index = len(*q)
	*q = append(*q, ev)
}
func (q *refQueue) Pop() any {
	old := *q
	ev := old[len(old)-1]
	*q = old[:len(old)-1]
	ev.index = -1
	return ev
}

func newReference(sc *scenarios.Scenario, st *scenarios.Strategy) (*reference, error) {
	r := &reference{awaited: map[refKey]*refAttempt{}}
	if err := r.init(sc, st, nil); err != nil {
		return nil, err
	}
	r.wakes = make([]*refEvent, len(r.procs))
	return r, nil
}

// RunReference simulates every strategy of the scenario, one after
// another, with the reference driver: the oracle the engine Run uses is
// held to (it must give the same results, byte for byte). It is slow, and
// it honours only opts' Strategies, Seed, Duration, MaxMemory (the calls
// one turn may draw; no estimate refuses a run) and Version. When ctx
// ends first, it returns what was measured with Partial set, and
// ctx.Err().
func RunReference(ctx context.Context, sc *scenarios.Scenario, opts Options) (*results.Results, error) {
	sc, err := opts.Apply(sc)
	if err != nil {
		return nil, err
	}
	res := newResults(sc, &opts)
	for i := range sc.Strategies {
		r, err := newReference(sc, &sc.Strategies[i])
		if err != nil {
			return nil, err
		}
		r.Agents.MaxTurnCalls = MaxTurnCalls(opts.Budget())
		done := r.run(ctx)
		if r.err != nil {
			return nil, r.err
		}
		res.Strategies[i] = r.result()
		if !done {
			res.Partial, res.Strategies[i].Partial = true, true
			return res, ctx.Err()
		}
	}
	return res, nil
}

// run simulates until no event is left or the run's end passes. It
// returns false when ctx ended the run early.
func (r *reference) run(ctx context.Context) bool {
	r.Agents.Begin()
	r.drive()
	r.carry()
	for r.events.Len() > 0 && r.err == nil {
		if ctx.Err() != nil {
			return false
		}
		ev := heap.Pop(&r.events).(*refEvent)
		if ev.at > r.stop {
			r.cutOff = true
			break
		}
		r.now = ev.at
		ev.do()
		r.carry()
	}
	r.countUnfinished()
	return true
}

// schedule has do run at at.
func (r *reference) schedule(at time.Duration, do func()) *refEvent {
	r.seq++
	ev := &refEvent{at: at, seq: r.seq, do: do}
	heap.Push(&r.events, ev)
	return ev
}

func (r *reference) fail(err error) {
	if r.err == nil {
		r.err = r.stopped(r.now, err)
	}
}

// drive carries out what the agent loop asks for, until it asks nothing.
func (r *reference) drive() {
	for {
		ops := r.Agents.Take(nil)
		if len(ops) == 0 {
			break
		}
		for i := range ops {
			r.do(&ops[i])
		}
	}
	if err := r.Agents.Err; err != nil {
		r.fail(err)
	}
}

// do carries out one of the agent loop's ops, now.
func (r *reference) do(op *agent.AgentOp) {
	switch op.Kind {
	case agent.OpBegin:
		r.m.TurnBegun(r.now)
	case agent.OpSubmit:
		r.submit(r.now, op.Part)
	case agent.OpCancel:
		r.procs[op.Part.Turn.Proc].core.Cancel(r.now, op.Part.Id)
	case agent.OpCancelAt:
		// A cancel due after the run's end never happens: it is not work
		// left undone, so it is not scheduled.
		if t := op.Turn; op.At <= r.stop {
			r.schedule(op.At, func() {
				r.Agents.Cancel(r.now, t)
				r.drive()
			})
		}
	case agent.OpWake:
		s := op.Session
		r.schedule(op.At, func() {
			r.Agents.Wake(r.now, s)
			r.drive()
		})
	case agent.OpArrive:
		r.schedule(op.At, func() {
			r.Agents.Arrive(r.now)
			r.drive()
		})
	case agent.OpEnd:
		r.countTurn(r.now, op.Turn, op.Failed)
	case agent.OpSessionDone:
	}
}

// carry does what the schedulers decided, process by process, until none
// has decided anything more.
func (r *reference) carry() {
	for more := true; more; {
		more = false
		for p := range r.procs {
			for {
				acts := r.procs[p].core.Actions(nil)
				if len(acts) == 0 {
					break
				}
				more = true
				for i := range acts {
					r.act(p, &acts[i])
				}
			}
		}
	}
}

// act carries out one decision of process p's scheduler.
func (r *reference) act(p int, a *sched.Action) {
	pr := &r.procs[p]
	switch a.Kind {
	case sched.ActStart:
		r.start(p, a)
	case sched.ActCancel:
		r.cancelAttempt(p, a.Attempt)
	case sched.ActWake:
		// A wake-up request replaces the process's earlier one.
		if old := r.wakes[p]; old != nil {
			heap.Remove(&r.events, old.index)
		}
		var ev *refEvent
		ev = r.schedule(a.At, func() {
			if r.wakes[p] == ev {
				r.wakes[p] = nil
			}
			pr.core.Advance(r.now)
		})
		r.wakes[p] = ev
	case sched.ActCredit:
		at, pc := pr.reserveCredit(r.now, a.Credit)
		r.schedule(at, func() { pr.grantCredit(r.now, &pc) })
	case sched.ActReturnCredit:
		pr.returnCredit(r.now, a.Credit)
	case sched.ActTurnDone:
		part := a.Tag.(*agent.AgentPart)
		r.countResults(part, a.Turn.Results)
		r.Agents.Finished(r.now, part, a.Turn.Results)
		r.drive()
	case sched.ActResult:
		if part := a.Tag.(*agent.AgentPart); part.Join > 0 {
			r.Agents.Answered(r.now, part, a.Result)
			r.drive()
		}
	}
}

// start sends an attempt to its service. With a network delay the service
// sees it that much later; the client waits for it from now.
func (r *reference) start(p int, a *sched.Action) {
	meta := a.Call.Payload.(*agent.CallMeta)
	at := &refAttempt{proc: p, id: a.Attempt, svc: r.attemptService(a, meta), out: newOutgoing(a, meta)}
	var out time.Duration
	if nd := &r.net[at.svc]; nd.On() {
		// Both ways are drawn as the attempt leaves.
		out = nd.Draw(r.netRng[at.svc])
		at.back = nd.Draw(r.netRng[at.svc])
	}
	r.countStart(p, at.svc, meta, r.now)
	r.awaited[refKey{p, at.id}] = at
	if out > 0 {
		r.schedule(satmath.Add(r.now, out), func() { r.arrive(at) })
		return
	}
	r.arrive(at)
}

// arrive hands an attempt's request to its service, now.
func (r *reference) arrive(at *refAttempt) {
	if at.dead && !at.reader {
		return // the connection closed before the service saw the request
	}
	m := r.models[at.svc]
	req := at.out.request(r.sc.Services[at.svc].ClientKey())
	var d fakeapi.Decision
	m.ArriveTo(r.now, &req, &d)
	r.countDecision(req.Client, r.now, &d)
	at.fid, at.hang = d.ID, d.Kind == fakeapi.KindHang
	answered := answerAt(&d, r.now, at.back)
	if !at.hang {
		at.outcome = r.read(at.svc, &d, r.now, answered)
	}
	switch {
	case at.hang:
		at.phase = phaseServer
		if at.dead {
			// Nobody will close the connection of a request abandoned at
			// the reader that never ends: let it go now.
			m.Cancel(r.now, at.fid)
		}
	case d.Admitted():
		at.phase = phaseServer
		r.schedule(satmath.Add(r.now, d.Latency), func() { r.served(at) })
	default:
		at.phase = phaseBack
		if !at.dead {
			r.schedule(answered, func() { r.respond(at) })
		}
	}
}

// read returns what a client makes of decision d of service svc, made at
// decided and reaching the client at arrived: the status and headers the
// server sends, read by httptool. A reset connection has no answer to
// read: a transient failure.
func (r *reference) read(svc int, d *fakeapi.Decision, decided, arrived time.Duration) sched.Outcome {
	rd := r.readers[svc]
	if d.HTTPStatus(rd.api) == 0 {
		return sched.Outcome{Class: httptool.StatusClass(0)}
	}
	// The answer is written as the real server writes it and read back by
	// httptool.Read, the live path: the engine's reading of the same
	// answer as values (answerReader.read) is held to it.
	h := http.Header{}
	status := d.Answer(rd.api, rd.style, virtualEpoch.Add(decided), h)
	var o sched.Outcome
	if hasBody(d) {
		o = httptool.ReadBody(status, h, d.RejectionBody(&rd.cfg, status), virtualEpoch.Add(arrived))
	} else {
		o = httptool.Read(status, h, virtualEpoch.Add(arrived))
	}
	a := answer{class: o.Class, status: int32(status), hasRetry: o.HasRetryAfter, retryAfter: o.RetryAfter}
	a.setQuota(o.Quota)
	if o.Class == sched.ClassSuccess {
		a.tokens, a.hasUsage = d.Tokens, true
	}
	return a.outcome()
}

// served ends an admitted attempt's work at its service, now, and sends
// its answer back.
func (r *reference) served(at *refAttempt) {
	m := r.models[at.svc]
	if at.dead {
		if at.reader {
			m.Finish(r.now, at.fid, true) // work nobody will read
		}
		return
	}
	m.Finish(r.now, at.fid, false)
	at.phase = phaseBack
	if at.back > 0 {
		r.schedule(satmath.Add(r.now, at.back), func() { r.respond(at) })
		return
	}
	r.respond(at)
}

// respond delivers an attempt's answer to its client, now.
func (r *reference) respond(at *refAttempt) {
	if at.dead {
		return
	}
	delete(r.awaited, refKey{at.proc, at.id})
	r.countAnswer(at.proc, at.svc, r.now, at.outcome.Class)
	r.procs[at.proc].core.Complete(r.now, at.id, at.outcome)
}

// cancelAttempt stops process p's waiting for attempt id. At the transport
// the service sees the connection close (or never sees the request); at
// the reader the request goes on and the service works on it.
func (r *reference) cancelAttempt(p int, id sched.AttemptID) {
	k := refKey{p, id}
	at, ok := r.awaited[k]
	if !ok {
		return
	}
	delete(r.awaited, k)
	r.m.Ended(at.svc, r.now, false)
	at.dead = true
	switch {
	case at.phase == phaseOut:
		at.reader = !r.transport
	case at.phase == phaseBack:
		// The answer on its way is dropped when it arrives.
	case at.hang || r.transport:
		r.models[at.svc].Cancel(r.now, at.fid)
	default:
		at.reader = true
	}
}
