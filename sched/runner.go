package sched

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"
)

// Executor runs one attempt of a call. It must return when ctx is cancelled
// (the Runner cancels it for timeouts, turn cancellation and Close); passing
// ctx to an HTTP request is what makes cancellation reach the transport.
// attempt counts from 1. A panic becomes the call's error result.
type Executor func(ctx context.Context, call *Call, attempt int) Outcome

// Runner drives a Core in real time: one goroutine owns the Core, each
// attempt runs in its own goroutine with its own context, and one timer
// covers the Core's next wake-up. Its methods are safe for concurrent use by
// many turns at once; they all share the Config's limits.
type Runner struct {
	exec  Executor
	epoch time.Time
	msgs  chan msg
	quit  chan struct{}
	loop  sync.WaitGroup // the owner goroutine
	work  sync.WaitGroup // attempt goroutines, and credit round trips
	once  sync.Once
	quota Quota // nil: local buckets only
	// grants holds the quota's grants by the ticket the Core knows them
	// by; owned by the owner goroutine.
	grants map[uint64]Grant
	ticket uint64
}

type msgKind uint8

const (
	msgSubmit msgKind = iota
	msgComplete
	msgCancel
	msgCredit
)

type msg struct {
	kind    msgKind
	turn    Turn
	w       *waiter
	attempt AttemptID
	outcome Outcome
	credit  *CreditAction // msgCredit: what was asked
	grant   Grant
	err     error
}

// waiter is a caller waiting for one turn.
type waiter struct {
	submitted chan error // Submit's verdict
	id        TurnID
	stream    chan Result // nil unless streaming
	done      chan *TurnResult
}

// NewRunner starts a Runner for cfg that runs attempts with exec. Call Close
// to stop it. A nil exec is refused with an error: it could run no call.
// Options: WithQuota shares limits with other processes.
func NewRunner(cfg Config, exec Executor, opts ...RunnerOption) (*Runner, error) {
	if exec == nil {
		return nil, errors.New("sched: NewRunner needs an executor, got nil")
	}
	var o runnerOptions
	for _, opt := range opts {
		opt(&o)
	}
	if o.quota != nil {
		cfg = creditConfig(cfg, o.quota)
	}
	core, err := New(cfg)
	if err != nil {
		return nil, err
	}
	r := &Runner{exec: exec, epoch: time.Now(), msgs: make(chan msg, 64), quit: make(chan struct{}), quota: o.quota, grants: map[uint64]Grant{}}
	r.loop.Add(1)
	go r.own(core)
	return r, nil
}

// Run submits a turn and waits for every result, returned in the order of
// turn.Calls. Cancelling ctx cancels the turn: queued calls get a
// not-started result, in-flight attempts are cancelled at the transport and
// their calls get a cancelled-in-flight result; Run then returns every result
// together with ctx.Err(). The error is also set when the turn is refused
// (ErrInvalidTurn, ErrQueueFull) or the Runner is closed, with nil results.
func (r *Runner) Run(ctx context.Context, turn Turn) ([]Result, error) {
	w, err := r.submit(turn, false)
	if err != nil {
		return nil, err
	}
	tr, err := r.wait(ctx, w)
	if tr == nil {
		return nil, err
	}
	return tr.Results, err
}

// Stream submits a turn and returns a channel that yields each result as it
// is decided (in completion order, not the caller's) and is closed after the
// last one. Cancelling ctx cancels the turn; the channel still receives the
// cancelled calls' results before it closes.
func (r *Runner) Stream(ctx context.Context, turn Turn) (<-chan Result, error) {
	w, err := r.submit(turn, true)
	if err != nil {
		return nil, err
	}
	out := make(chan Result, len(turn.Calls))
	go r.forward(ctx, w, out)
	return out, nil
}

// forward passes a streamed turn's results on as the owner decides them,
// and cancels the turn when ctx ends. out has room for every result, so a
// caller that stops reading never blocks the Runner.
func (r *Runner) forward(ctx context.Context, w *waiter, out chan<- Result) {
	defer close(out)
	cancelled := ctx.Done()
	for {
		select {
		case res, ok := <-w.stream:
			if !ok { // the owner closes the stream when the turn is done
				<-w.done
				return
			}
			out <- res
		case <-cancelled:
			cancelled = nil
			select {
			case r.msgs <- msg{kind: msgCancel, w: w}:
			case <-r.quit: // Close ends the turn itself
			}
		}
	}
}

func (r *Runner) submit(turn Turn, stream bool) (*waiter, error) {
	turn.Calls = append([]Call(nil), turn.Calls...) // the caller may reuse its slice
	w := &waiter{submitted: make(chan error, 1), done: make(chan *TurnResult, 1)}
	if stream {
		w.stream = make(chan Result, len(turn.Calls))
	}
	select {
	case <-r.quit:
		return nil, ErrClosed
	default:
	}
	select {
	case r.msgs <- msg{kind: msgSubmit, turn: turn, w: w}:
	case <-r.quit:
		return nil, ErrClosed
	}
	select {
	case err := <-w.submitted:
		if err != nil {
			return nil, err
		}
		return w, nil
	case <-r.quit:
		// The owner stopped before it read the message: the turn never ran.
		return nil, ErrClosed
	}
}

// wait blocks until the turn is done, cancelling it if ctx ends first.
func (r *Runner) wait(ctx context.Context, w *waiter) (*TurnResult, error) {
	select {
	case tr := <-w.done:
		return tr, nil
	case <-ctx.Done():
		select {
		case r.msgs <- msg{kind: msgCancel, w: w}:
		case <-r.quit:
		}
		return <-w.done, ctx.Err()
	case <-r.quit:
		return <-w.done, ErrClosed
	}
}

// Close cancels every attempt in flight, ends every unfinished turn with
// ErrClosed results, and waits until every goroutine the Runner started has
// returned (executors included, so an executor must honour its context).
// Calling Close more than once is safe.
func (r *Runner) Close() error {
	r.once.Do(func() { close(r.quit) })
	r.loop.Wait()
	r.work.Wait()
	return nil
}

func (r *Runner) now() time.Duration { return time.Since(r.epoch) }

// own is the goroutine that owns the Core.
func (r *Runner) own(core *Core) {
	defer r.loop.Done()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	cancels := make(map[AttemptID]context.CancelFunc)
	waiters := make(map[TurnID]*waiter)
	base, stopAll := context.WithCancel(context.Background())
	defer stopAll()
	var acts []Action

	for {
		select {
		case m := <-r.msgs:
			now := r.now()
			switch m.kind {
			case msgSubmit:
				id, err := core.Submit(now, m.turn)
				if err == nil {
					m.w.id = id
					waiters[id] = m.w
				}
				m.w.submitted <- err
			case msgComplete:
				if cancel, ok := cancels[m.attempt]; ok {
					cancel()
					delete(cancels, m.attempt)
				}
				core.Complete(now, m.attempt, m.outcome)
			case msgCancel:
				core.Cancel(now, m.w.id)
			case msgCredit:
				r.credit(core, now, m)
			}
		case <-timer.C:
			core.Advance(r.now())
		case <-r.quit:
			now := r.now()
			for id := range waiters {
				core.cancelTurn(core.turns[id], fmt.Errorf("runner closed: %w", ErrClosed))
			}
			core.DropCredit(now)
			core.Advance(now)
			r.carry(core.Actions(acts[:0]), cancels, waiters, base, timer)
			stopAll()
			return
		}
		acts = core.Actions(acts[:0])
		r.carry(acts, cancels, waiters, base, timer)
	}
}

// carry does what the Core decided.
func (r *Runner) carry(acts []Action, cancels map[AttemptID]context.CancelFunc, waiters map[TurnID]*waiter, base context.Context, timer *time.Timer) {
	for _, a := range acts {
		switch a.Kind {
		case ActStart:
			ctx, cancel := context.WithCancel(base)
			cancels[a.Attempt] = cancel
			r.work.Add(1)
			go r.attempt(ctx, a.Attempt, a.Call, a.N)
		case ActCancel:
			if cancel, ok := cancels[a.Attempt]; ok {
				cancel()
				delete(cancels, a.Attempt)
			}
		case ActWake:
			timer.Reset(max(0, a.At-r.now()))
		case ActResult:
			if w := waiters[a.TurnID]; w != nil && w.stream != nil {
				w.stream <- *a.Result // buffered for every call: never blocks
			}
		case ActCredit:
			r.work.Add(1)
			go r.acquire(base, *a.Credit)
		case ActReturnCredit:
			g, ok := r.grants[a.Credit.Ticket]
			delete(r.grants, a.Credit.Ticket)
			if !ok {
				g = Grant{Service: a.Credit.Service, Kind: a.Credit.Kind}
			}
			if ok || a.Credit.Units < 0 {
				r.work.Add(1)
				go r.giveBack(g, a.Credit.Units)
			}
		case ActTurnDone:
			if w := waiters[a.TurnID]; w != nil {
				delete(waiters, a.TurnID)
				if w.stream != nil {
					close(w.stream)
				}
				w.done <- a.Turn
			}
		}
	}
}

// attempt runs the executor and reports its outcome to the owner.
func (r *Runner) attempt(ctx context.Context, id AttemptID, call *Call, n int) {
	defer r.work.Done()
	o := r.safeExec(ctx, call, n)
	select {
	case r.msgs <- msg{kind: msgComplete, attempt: id, outcome: o}:
	case <-r.quit:
	}
}

func (r *Runner) safeExec(ctx context.Context, call *Call, n int) (o Outcome) {
	defer func() {
		if p := recover(); p != nil {
			o = Outcome{Class: ClassPermanent, Err: fmt.Errorf("%w: call %q attempt %d: %v\n%s", ErrPanic, call.ID, n, p, debug.Stack())}
		}
	}()
	return r.exec(ctx, call, n)
}

// credit hands the Core a grant (or a refusal) the quota answered.
func (r *Runner) credit(core *Core, now time.Duration, m msg) {
	c := m.credit
	if m.err != nil {
		core.CreditRefused(now, c.Service, c.Kind, m.err)
		return
	}
	r.ticket++
	r.grants[r.ticket] = m.grant
	core.Credit(now, c.Service, c.Kind, m.grant.Units, m.grant.Until.Sub(r.epoch), r.ticket)
}

// acquire asks the quota for credit and hands the answer to the owner. A
// grant the owner can no longer take (the Runner closed) goes back.
func (r *Runner) acquire(ctx context.Context, c CreditAction) {
	defer r.work.Done()
	g, err := r.quota.Acquire(ctx, c.Service, c.Kind, c.Units)
	if err != nil && ctx.Err() != nil {
		return // the Runner is closing: nobody waits for this credit
	}
	select {
	case r.msgs <- msg{kind: msgCredit, credit: &c, grant: g, err: err}:
	case <-r.quit:
		if err == nil {
			_ = r.quota.Return(context.Background(), g, g.Units)
		}
	}
}

// giveBack returns a grant's unspent units (or charges its debt).
func (r *Runner) giveBack(g Grant, n float64) {
	defer r.work.Done()
	_ = r.quota.Return(context.Background(), g, n)
}
