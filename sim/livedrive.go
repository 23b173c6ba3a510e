package sim

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/simbench/simbench/sched"
)

// liveShell is the state of the goroutine that drives a live run's agent
// loop: the loop's timed ops waiting for their real time (in a heap, as
// the engine keeps its events), the parts running on the Runners, and the
// channel their results come back on. Only the driving goroutine touches
// it, except parts (a WaitGroup) and landed.
type liveShell struct {
	timers  eventHeap
	seq     uint64
	cancels []*agentTurn // turns with a pending cancel, by event ref
	freeC   []int32
	ops     []agentOp
	// now is the time the agent loop was last called with: what its ops
	// are done at.
	now time.Duration
	// running cancels each part running on a Runner.
	running map[*agentPart]context.CancelFunc
	landed  chan landedPart
	stopped chan struct{} // closed when the driving goroutine stops reading landed
	parts   sync.WaitGroup
}

// landedPart is a part's results as its Runner returned them (nil: the
// Runner refused the turn).
type landedPart struct {
	part    *agentPart
	results []sched.Result
	// one is, for a part with a progressive join, one result as it was
	// decided (streamed), ahead of the whole part's results.
	one *sched.Result
}

// drive runs the agent loop in real time until it is done or ctx ends: it
// sleeps until the loop's next timed op, hands its parts to the Runners,
// and feeds their results back. It returns the error that stopped the
// loop (a turn over the call cap), if any.
func (l *liveRun) drive(ctx context.Context) error {
	sh := &l.shell
	sh.running = map[*agentPart]context.CancelFunc{}
	sh.landed = make(chan landedPart)
	sh.stopped = make(chan struct{})
	defer close(sh.stopped)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	l.agents.begin()
	for {
		if err := l.carry(ctx); err != nil {
			return err
		}
		if l.agents.done() && len(sh.running) == 0 {
			// Every turn ended and every part landed: a progressive
			// join's late calls, which no turn waits for, included.
			return nil
		}
		var due <-chan time.Time
		if len(sh.timers) > 0 {
			d := time.Until(l.realAt(sh.timers[0].at))
			if d <= 0 {
				l.fire()
				continue
			}
			timer.Reset(d)
			due = timer.C
		}
		select {
		case <-due:
			l.fire()
		case lp := <-sh.landed:
			l.land(lp)
		case <-ctx.Done():
			return nil
		}
		timer.Stop()
	}
}

// fire calls the agent loop for its earliest timed op, at the op's own
// time: a turn's latency counts from when it was due, so a late timer
// cannot hide the delay.
func (l *liveRun) fire() {
	sh := &l.shell
	ev := sh.timers.pop()
	sh.now = ev.at
	switch ev.kind {
	case evSession, evArrival:
		l.noteLate(time.Since(l.realAt(ev.at)))
		if ev.kind == evSession {
			l.agents.wake(ev.at, int(ev.ref))
		} else {
			l.agents.arrive(ev.at)
		}
	case evCancel:
		t := sh.cancels[ev.ref]
		sh.cancels[ev.ref] = nil
		sh.freeC = append(sh.freeC, ev.ref)
		l.agents.cancel(ev.at, t)
	}
}

// schedule puts a timed op in the heap.
func (l *liveRun) schedule(ev event) {
	sh := &l.shell
	sh.seq++
	ev.seq = sh.seq
	sh.timers.push(ev)
}

// carry does what the agent loop asked for, in order, and whatever that
// makes it ask for in turn.
func (l *liveRun) carry(ctx context.Context) error {
	sh := &l.shell
	for {
		sh.ops = l.agents.take(sh.ops[:0])
		if len(sh.ops) == 0 {
			break
		}
		for i := range sh.ops {
			l.do(ctx, &sh.ops[i])
		}
		sh.ops = reuseOps(sh.ops)
	}
	if err := l.agents.err; err != nil {
		return fmt.Errorf("strategy %q at %v: %w", l.st.Name, sh.now, err)
	}
	return nil
}

// do carries out one of the agent loop's ops.
func (l *liveRun) do(ctx context.Context, op *agentOp) {
	sh := &l.shell
	switch op.kind {
	case opBegin:
		l.mu.Lock()
		l.m.turnBegun(l.vnow())
		l.procs[op.turn.proc].begun++
		if op.turn.session < 0 {
			l.arrived++
		}
		l.mu.Unlock()
	case opSubmit:
		l.submit(ctx, op.part)
	case opCancel:
		if cancel := sh.running[op.part]; cancel != nil {
			cancel()
		}
	case opCancelAt:
		var i int32
		if n := len(sh.freeC); n > 0 {
			i = sh.freeC[n-1]
			sh.freeC = sh.freeC[:n-1]
			sh.cancels[i] = op.turn
		} else {
			sh.cancels = append(sh.cancels, op.turn)
			i = int32(len(sh.cancels) - 1)
		}
		l.schedule(event{at: op.at, kind: evCancel, ref: i})
	case opWake:
		l.schedule(event{at: op.at, kind: evSession, ref: int32(op.session)})
	case opArrive:
		l.schedule(event{at: op.at, kind: evArrival})
	case opEnd:
		t := op.turn
		l.mu.Lock()
		now := l.vnow()
		lat := max(now-t.start, 0)
		l.m.turn(now, lat, op.failed, t.good)
		if t.abandoned {
			l.m.modelFailedTurn(now)
		}
		if now <= l.m.window {
			l.procs[t.proc].ended++
			if op.failed {
				l.procs[t.proc].failed++
			} else {
				l.procs[t.proc].answered.add(lat)
			}
		}
		l.mu.Unlock()
	case opSessionDone:
		// Nothing to do: the session handed out no wake.
	}
}

// submit runs a part on its process's Runner, on a goroutine of its own
// that hands the results back to the driving goroutine. A part of no calls
// is finished at once.
func (l *liveRun) submit(ctx context.Context, p *agentPart) {
	sh := &l.shell
	if len(p.calls) == 0 {
		l.agents.finished(sh.now, p, nil)
		return
	}
	var tag any
	if l.trace != nil {
		tag = l.trace.begin(&liveTurn{session: int64(p.turn.session + 1), no: int64(p.turn.no)}, p.calls, l.vnow().Seconds())
	}
	if p.counted {
		l.mu.Lock()
		l.m.enter(l.vnow(), len(p.calls))
		l.mu.Unlock()
	}
	pctx, cancel := context.WithCancel(ctx)
	sh.running[p] = cancel
	runner := l.runners[p.turn.proc]
	sh.parts.Add(1)
	go func() {
		defer sh.parts.Done()
		defer l.recoverPanic()
		var results []sched.Result
		if p.join > 0 {
			results = l.stream(pctx, runner, p, tag)
		} else {
			results, _ = runner.Run(pctx, p.schedTurn(tag))
		}
		select {
		case sh.landed <- landedPart{part: p, results: results}:
		case <-sh.stopped:
		}
	}()
}

// stream runs a part with a progressive join through the Runner's
// Stream, handing each result to the driving goroutine as it is decided,
// and returns them all in the order of the part's calls (nil: refused).
func (l *liveRun) stream(ctx context.Context, runner *sched.Runner, p *agentPart, tag any) []sched.Result {
	sh := &l.shell
	ch, err := runner.Stream(ctx, p.schedTurn(tag))
	if err != nil {
		return nil
	}
	results := make([]sched.Result, len(p.calls))
	for r := range ch {
		results[r.Index] = r
		select {
		case sh.landed <- landedPart{part: p, one: &r}:
		case <-sh.stopped:
		}
	}
	return results
}

// land records a part's results and hands them to the agent loop.
func (l *liveRun) land(lp landedPart) {
	sh := &l.shell
	p := lp.part
	if lp.one != nil {
		l.mu.Lock()
		sh.now = l.vnow()
		l.mu.Unlock()
		l.agents.answered(sh.now, p, lp.one)
		return
	}
	sh.running[p]()
	delete(sh.running, p)
	if l.trace != nil {
		l.trace.end(p.calls)
	}
	l.mu.Lock()
	now := l.vnow()
	sh.now = now
	if lp.results == nil {
		l.m.refused++
		if p.counted {
			l.m.leaveN(now, len(p.calls))
		}
		l.mu.Unlock()
		l.agents.refused(now, p)
		return
	}
	for i := range lp.results {
		r := &lp.results[i]
		r.Queued = time.Duration(float64(r.Queued) / l.f)
		r.Running = time.Duration(float64(r.Running) / l.f)
		r.Finished = now
		l.m.result(r, p.counted)
		if p.counted && now <= l.m.window {
			t := &l.procs[p.turn.proc]
			t.calls++ // as the collector counts calls: those decided within the window
			if r.Class == sched.ClassSuccess {
				t.good++
			}
		}
	}
	l.mu.Unlock()
	l.agents.finished(now, p, lp.results)
}

func (l *liveRun) noteLate(d time.Duration) {
	l.mu.Lock()
	l.late.add(d)
	l.mu.Unlock()
}
