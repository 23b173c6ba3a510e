package live

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/simbench/simbench/internal/agent"
	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/sim"
)

// liveShell is the state of the goroutine that drives a live run's agent
// loop: the loop's timed ops waiting for their real time (in a heap, as
// the engine keeps its events), the parts running on the Runners, and the
// channel their results come back on. Only the driving goroutine touches
// it, except parts (a WaitGroup) and landed.
type liveShell struct {
	timers  sim.EventHeap
	seq     uint64
	cancels []*agent.AgentTurn // turns with a pending cancel, by event ref
	freeC   []int32
	ops     []agent.AgentOp
	// now is the time the agent loop was last called with: what its ops
	// are done at.
	now time.Duration
	// running cancels each part running on a Runner.
	running map[*agent.AgentPart]context.CancelFunc
	landed  chan landedPart
	stopped chan struct{} // closed when the driving goroutine stops reading landed
	parts   sync.WaitGroup
	// load bounds the calls in flight and counts those not sent.
	load loadGauge
}

// landedPart is a part's results as its Runner returned them (nil: the
// Runner refused the turn).
type landedPart struct {
	part    *agent.AgentPart
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
	sh.running = map[*agent.AgentPart]context.CancelFunc{}
	sh.landed = make(chan landedPart)
	sh.stopped = make(chan struct{})
	defer close(sh.stopped)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	sh.load.began = time.Now()
	l.agents.Begin()
	for {
		if err := l.carry(ctx); err != nil {
			return err
		}
		if sh.load.giveUp(time.Now(), l.vnow()) {
			// Hopelessly behind: what is sent cannot catch up.
			return nil
		}
		if l.agents.Done() && len(sh.running) == 0 {
			// Every turn ended and every part landed: a progressive
			// join's late calls, which no turn waits for, included.
			return nil
		}
		var due <-chan time.Time
		if len(sh.timers) > 0 {
			d := time.Until(l.realAt(sh.timers[0].At))
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
	ev := sh.timers.Pop()
	sh.now = ev.At
	switch ev.Kind {
	case sim.EvSession, sim.EvArrival:
		sh.load.late = time.Since(l.realAt(ev.At))
		l.noteLate(sh.load.late)
		if ev.Kind == sim.EvSession {
			l.agents.Wake(ev.At, int(ev.Ref))
		} else {
			l.agents.Arrive(ev.At)
		}
	case sim.EvCancel:
		t := sh.cancels[ev.Ref]
		sh.cancels[ev.Ref] = nil
		sh.freeC = append(sh.freeC, ev.Ref)
		l.agents.Cancel(ev.At, t)
	}
}

// schedule puts a timed op in the heap.
func (l *liveRun) schedule(ev sim.Event) {
	sh := &l.shell
	sh.seq++
	ev.Seq = sh.seq
	sh.timers.Push(ev)
}

// carry does what the agent loop asked for, in order, and whatever that
// makes it ask for in turn.
func (l *liveRun) carry(ctx context.Context) error {
	sh := &l.shell
	for {
		sh.ops = l.agents.Take(sh.ops[:0])
		if len(sh.ops) == 0 {
			break
		}
		for i := range sh.ops {
			l.do(ctx, &sh.ops[i])
		}
		sh.ops = agent.ReuseOps(sh.ops)
	}
	if err := l.agents.Err; err != nil {
		return fmt.Errorf("strategy %q at %v: %w", l.st.Name, sh.now, err)
	}
	return nil
}

// do carries out one of the agent loop's ops.
func (l *liveRun) do(ctx context.Context, op *agent.AgentOp) {
	sh := &l.shell
	switch op.Kind {
	case agent.OpBegin:
		l.mu.Lock()
		l.m.TurnBegun(l.vnow())
		l.procs[op.Turn.Proc].begun++
		if op.Turn.Session < 0 {
			l.arrived++
		}
		l.mu.Unlock()
	case agent.OpSubmit:
		l.submit(ctx, op.Part)
	case agent.OpCancel:
		if cancel := sh.running[op.Part]; cancel != nil {
			cancel()
		}
	case agent.OpCancelAt:
		var i int32
		if n := len(sh.freeC); n > 0 {
			i = sh.freeC[n-1]
			sh.freeC = sh.freeC[:n-1]
			sh.cancels[i] = op.Turn
		} else {
			sh.cancels = append(sh.cancels, op.Turn)
			i = int32(len(sh.cancels) - 1)
		}
		l.schedule(sim.Event{At: op.At, Kind: sim.EvCancel, Ref: i})
	case agent.OpWake:
		l.schedule(sim.Event{At: op.At, Kind: sim.EvSession, Ref: int32(op.Session)})
	case agent.OpArrive:
		l.schedule(sim.Event{At: op.At, Kind: sim.EvArrival})
	case agent.OpEnd:
		t := op.Turn
		l.mu.Lock()
		now := l.vnow()
		lat := max(now-t.Start, 0)
		l.m.Turn(now, lat, op.Failed, t.Good)
		if t.Abandoned {
			l.m.ModelFailedTurn(now)
		}
		if now <= l.m.Window {
			l.procs[t.Proc].ended++
			if op.Failed {
				l.procs[t.Proc].failed++
			} else {
				l.procs[t.Proc].answered.Add(lat)
			}
		}
		l.mu.Unlock()
	case agent.OpSessionDone:
		// Nothing to do: the session handed out no wake.
	}
}

// submit runs a part on its process's Runner, on a goroutine of its own
// that hands the results back to the driving goroutine. A part of no calls
// is finished at once.
func (l *liveRun) submit(ctx context.Context, p *agent.AgentPart) {
	sh := &l.shell
	if len(p.Calls) == 0 {
		l.agents.Finished(sh.now, p, nil)
		return
	}
	if !sh.load.admit(len(p.Calls)) {
		// Not sent: the run holds as many calls as its budget allows.
		// The turn fails, as a turn the scheduler refuses does.
		l.agents.Refused(sh.now, p)
		return
	}
	var tag any
	if l.trace != nil {
		tag = l.trace.Begin(&liveTurn{Session: int64(p.Turn.Session + 1), No: int64(p.Turn.No)}, p.Calls, l.vnow().Seconds())
	}
	if p.Counted {
		l.mu.Lock()
		l.m.Enter(l.vnow(), len(p.Calls))
		l.mu.Unlock()
	}
	pctx, cancel := context.WithCancel(ctx)
	sh.running[p] = cancel
	runner := l.runners[p.Turn.Proc]
	sh.parts.Add(1)
	go func() {
		defer sh.parts.Done()
		defer l.recoverPanic()
		var results []sched.Result
		if p.Join > 0 {
			results = l.stream(pctx, runner, p, tag)
		} else {
			results, _ = runner.Run(pctx, p.SchedTurn(tag))
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
func (l *liveRun) stream(ctx context.Context, runner *sched.Runner, p *agent.AgentPart, tag any) []sched.Result {
	sh := &l.shell
	ch, err := runner.Stream(ctx, p.SchedTurn(tag))
	if err != nil {
		return nil
	}
	results := make([]sched.Result, len(p.Calls))
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
		l.agents.Answered(sh.now, p, lp.one)
		return
	}
	sh.running[p]()
	delete(sh.running, p)
	sh.load.done(len(p.Calls))
	if l.trace != nil {
		l.trace.End(p.Calls)
	}
	l.mu.Lock()
	now := l.vnow()
	sh.now = now
	if lp.results == nil {
		l.m.Refused++
		if p.Counted {
			l.m.LeaveN(now, len(p.Calls))
		}
		l.mu.Unlock()
		l.agents.Refused(now, p)
		return
	}
	for i := range lp.results {
		r := &lp.results[i]
		r.Queued = time.Duration(float64(r.Queued) / l.f)
		r.Running = time.Duration(float64(r.Running) / l.f)
		r.Finished = now
		l.m.Result(r, p.Counted)
		if p.Counted && now <= l.m.Window {
			t := &l.procs[p.Turn.Proc]
			t.calls++ // as the collector counts calls: those decided within the window
			if r.Class == sched.ClassSuccess {
				t.good++
			}
		}
	}
	l.mu.Unlock()
	l.agents.Finished(now, p, lp.results)
}

func (l *liveRun) noteLate(d time.Duration) {
	l.mu.Lock()
	l.late.Add(d)
	l.mu.Unlock()
}
