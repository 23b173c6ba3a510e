package sched

import (
	"container/heap"
	"slices"
	"time"
)

// vdriver drives a Core in virtual time for tests: each started attempt asks
// exec for its latency and outcome; a latency below zero means the attempt
// hangs until it is cancelled.
type vdriver struct {
	t    tb
	core *Core
	now  time.Duration
	exec func(call *Call, n int, now time.Duration) (time.Duration, Outcome)
	// at, when set, is used instead of exec and learns the deployment
	// each attempt goes to (Action.Deployment).
	at func(deployment string, call *Call, n int, now time.Duration) (time.Duration, Outcome)

	pending completionHeap
	live    map[AttemptID]*Call
	liveSvc map[AttemptID]string // the deployment of each attempt in flight
	// outcomes holds the outcome each attempt was given, by attempt id.
	outcomes map[AttemptID]Outcome
	liveIdx  map[AttemptID]int // the Index each attempt in flight was started with
	wake     time.Duration
	hasWake  bool
	seq      uint64
	buf      []Action

	starts    []startRec
	cancels   []AttemptID
	results   map[string]Result // by call id (ids unique across a test's turns)
	turns     []*TurnResult
	inFlight  int
	peak      int
	running   map[string]int // per resource: writes running
	overlaps  int
	endOf     map[string]time.Duration // call id → time its last attempt ended
	startedOf map[string]time.Duration // call id → first start

	// tagValues makes every success without a value carry its attempt's
	// id, and late delivers the outcomes of cancelled attempts too (the
	// Core must ignore them), so a test can tell which attempt a result
	// came from.
	tagValues, late bool
	// svcNow and svcPeak count the attempts in flight per service, hedges
	// included; calls holds the calls started, by id.
	svcNow, svcPeak map[string]int
	calls           map[string]Call
}

type startRec struct {
	at      time.Duration
	id      string
	service string
	n       int
	attempt AttemptID
	tokens  int64
	hedge   bool
}

type completion struct {
	at      time.Duration
	seq     uint64
	attempt AttemptID
	o       Outcome
}

type completionHeap []completion

func (h completionHeap) Len() int { return len(h) }
func (h completionHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}
func (h completionHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *completionHeap) Push(x any)   { *h = append(*h, x.(completion)) }
func (h *completionHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// tb is what the driver needs of *testing.T and *rapid.T.
type tb interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

func newDriver(t tb, cfg Config, exec func(call *Call, n int, now time.Duration) (time.Duration, Outcome)) *vdriver {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if exec == nil {
		exec = func(*Call, int, time.Duration) (time.Duration, Outcome) {
			return 100 * time.Millisecond, Succeeded("ok")
		}
	}
	return &vdriver{t: t, core: c, exec: exec, live: map[AttemptID]*Call{}, liveSvc: map[AttemptID]string{}, outcomes: map[AttemptID]Outcome{}, liveIdx: map[AttemptID]int{}, results: map[string]Result{},
		running: map[string]int{}, svcNow: map[string]int{}, svcPeak: map[string]int{}, calls: map[string]Call{}, endOf: map[string]time.Duration{}, startedOf: map[string]time.Duration{}}
}

func (d *vdriver) submit(calls ...Call) TurnID {
	d.t.Helper()
	id, err := d.core.Submit(d.now, Turn{Calls: calls})
	if err != nil {
		d.t.Fatal(err)
	}
	d.drain()
	return id
}

func (d *vdriver) submitTurn(t Turn) TurnID {
	d.t.Helper()
	id, err := d.core.Submit(d.now, t)
	if err != nil {
		d.t.Fatal(err)
	}
	d.drain()
	return id
}

// queueEntries counts the entries of the Core's service queues, for the
// count pump reads (Core.queued).
func queueEntries(c *Core) int {
	n := 0
	for _, s := range c.svcList {
		for _, q := range s.queues() {
			n += len(q.fifo) - q.head + len(q.retries)
		}
	}
	return n
}

// drain checks the Core's count of queue entries and carries out its actions.
func (d *vdriver) drain() {
	if got, want := d.core.queued, queueEntries(d.core); got != want {
		d.t.Fatalf("Core.queued is %d, the queues hold %d entries", got, want)
	}
	d.buf = d.core.Actions(d.buf[:0])
	for _, a := range d.buf {
		switch a.Kind {
		case ActStart:
			var lat time.Duration
			var o Outcome
			if d.at != nil {
				lat, o = d.at(a.Deployment, a.Call, a.N, d.now)
			} else {
				lat, o = d.exec(a.Call, a.N, d.now)
			}
			// What the attempt costs its token bucket: its estimate, or
			// the usage it reports when that is less (a settle refunds
			// the rest, which later calls may use).
			cost := a.Call.Tokens
			if o.HasUsage && o.Tokens < cost {
				cost = max(o.Tokens, 0)
			}
			if d.tagValues && o.Class == ClassSuccess && o.Value == nil {
				o.Value = a.Attempt
			}
			d.outcomes[a.Attempt] = o
			d.starts = append(d.starts, startRec{d.now, a.Call.ID, a.Deployment, a.N, a.Attempt, cost, a.Hedge})
			if _, ok := d.startedOf[a.Call.ID]; !ok {
				d.startedOf[a.Call.ID] = d.now
			}
			d.live[a.Attempt], d.liveIdx[a.Attempt], d.liveSvc[a.Attempt] = a.Call, a.Index, a.Deployment
			d.calls[a.Call.ID] = *a.Call
			d.svcNow[a.Deployment]++
			d.svcPeak[a.Deployment] = max(d.svcPeak[a.Deployment], d.svcNow[a.Deployment])
			d.inFlight++
			d.peak = max(d.peak, d.inFlight)
			if a.Call.Write {
				key := a.Call.resource()
				d.running[key]++
				if d.running[key] > 1 {
					d.overlaps++
				}
			}
			if lat >= 0 { // below zero: the attempt hangs until cancelled
				d.seq++
				heap.Push(&d.pending, completion{at: d.now + lat, seq: d.seq, attempt: a.Attempt, o: o})
			}
		case ActCancel:
			// A cancel names the call and position its attempt started
			// with, so that a driver can find the attempt from the call.
			if call := d.live[a.Attempt]; call != nil && (a.Call != call || a.Index != d.liveIdx[a.Attempt]) {
				d.t.Fatalf("cancel of attempt %d names call %p at %d; it started as %p at %d", a.Attempt, a.Call, a.Index, call, d.liveIdx[a.Attempt])
			}
			d.cancels = append(d.cancels, a.Attempt)
			d.endAttempt(a.Attempt)
		case ActWake:
			d.wake, d.hasWake = a.At, true
		case ActResult:
			if _, dup := d.results[a.Result.ID]; dup {
				d.t.Fatalf("second result for call %q", a.Result.ID)
			}
			d.results[a.Result.ID] = *a.Result
		case ActTurnDone:
			// Every other turn's results are kept as a copy and their
			// storage given back (Core.Recycle), so that every test runs
			// on reused storage as well as on fresh.
			tr := a.Turn
			if len(d.turns)%2 == 1 {
				tr = &TurnResult{Turn: a.Turn.Turn, Tag: a.Turn.Tag, Results: slices.Clone(a.Turn.Results), Submitted: a.Turn.Submitted, Finished: a.Turn.Finished}
				d.core.Recycle(a.Turn)
			}
			d.turns = append(d.turns, tr)
		}
	}
}

// endAttempt marks an attempt over (completed or cancelled).
func (d *vdriver) endAttempt(a AttemptID) {
	call := d.live[a]
	if call == nil {
		return
	}
	d.svcNow[d.liveSvc[a]]--
	delete(d.live, a)
	delete(d.liveIdx, a)
	delete(d.liveSvc, a)
	d.inFlight--
	d.endOf[call.ID] = d.now
	if call.Write {
		d.running[call.resource()]--
	}
}

// run advances virtual time until nothing is pending, or until limit.
func (d *vdriver) run(limit time.Duration) {
	d.t.Helper()
	for steps := 0; ; steps++ {
		if steps > 10_000_000 {
			d.t.Fatal("driver did not settle")
		}
		for !d.late && len(d.pending) > 0 && d.live[d.pending[0].attempt] == nil {
			heap.Pop(&d.pending)
		}
		var next time.Duration
		kind := 0
		if len(d.pending) > 0 {
			next, kind = d.pending[0].at, 1
		}
		if d.hasWake && (kind == 0 || d.wake <= next) {
			next, kind = d.wake, 2
		}
		if kind == 0 || next > limit {
			return
		}
		d.now = max(d.now, next)
		if kind == 2 {
			d.hasWake = false
			d.core.Advance(d.now)
			d.drain()
			continue
		}
		p := heap.Pop(&d.pending).(completion)
		d.endAttempt(p.attempt)
		d.core.Complete(d.now, p.attempt, p.o)
		d.drain()
	}
}
