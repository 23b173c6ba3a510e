package sched

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/simbench/simbench/sched/internal/workers"
)

// Executor runs one attempt of a call. It must return when ctx is cancelled
// (the Runner cancels it for timeouts, turn cancellation and Close); passing
// ctx to an HTTP request is what makes cancellation reach the transport.
// ctx carries the values of the context given to Run or Stream. attempt
// counts from 1. A panic becomes the call's error result.
type Executor func(ctx context.Context, call *Call, attempt int) Outcome

// Runner drives a Core in real time and is what an agent runtime imports:
// build one with NewRunner, call Run (or Stream) once per model turn from as
// many goroutines as you like, and Close it when done. All turns share the
// Config's limits. Its methods are safe for concurrent use.
//
// The Core is owned by whichever goroutine holds the Runner's lock: the
// caller of Run, Stream, Stats or SetLimits, an attempt's goroutine
// reporting its outcome, or the one timer's. Each holds it only for the
// Core's decision and the hand-off of what was decided, never across an
// executor or a channel send that could block. Attempts run on worker
// goroutines, and a worker that finishes an attempt runs the next one the
// Core starts. The caller of Run runs its own turn's attempts while it
// waits, unless the turn could be decided while an attempt runs (a
// deadline, an attempt timeout, a hedge, an all-or-nothing join, a context
// that can be cancelled): then it waits for the decision alone, so that Run
// returns at the turn's deadline even when an executor ignores its
// context. Idle workers wait for the next attempt: as many as the most
// that ran at once lately (up to 1,024), at least the larger of
// Config.MaxInFlight and 16; those beyond the latter that stay idle for
// 5 to 10 seconds return, and Close ends the rest. So a busy Runner starts
// few goroutines, with or without a cap. Config.Hook runs under the lock (see Config.Hook).
type Runner struct {
	exec  Executor
	epoch time.Time
	quota Quota  // nil: local buckets only
	id    string // random, for the calls' idempotency keys (see AttemptOf)

	mu       sync.Mutex
	core     *Core
	closed   bool
	waiters  map[TurnID]*waiter
	attempts map[AttemptID]*attemptCtx
	timer    *time.Timer // the Core's next wake-up
	acts     []Action
	ended    []*waiter // streams done whose cancel is to be stopped
	// grants holds the quota's grants by the ticket the Core knows them by.
	grants map[uint64]Grant
	ticket uint64

	base context.Context // cancelled by Close: credit round trips
	stop context.CancelFunc
	work sync.WaitGroup // attempts, and credit round trips
	// workers run the attempts started; a worker that reports an outcome
	// runs the first attempt the Core starts in return.
	workers *workers.Pool[start]
}

// waiter is a caller waiting for one turn.
type waiter struct {
	id     TurnID
	ctx    context.Context // the caller's: values for the executors
	stream chan Result     // nil unless streaming
	done   sync.WaitGroup  // done when the turn is
	// ctxs holds the contexts of the turn's first attempts, one per call,
	// in one allocation; used counts those handed out.
	ctxs   []attemptCtx
	used   int
	result *TurnResult
	err    error // ctx.Err() when the caller's context cancelled the turn; ErrClosed
	// cancel stops the context.AfterFunc that cancels the turn; unset
	// for a context that is never cancelled.
	cancel    func() bool
	cancelRan sync.WaitGroup
}

// start is an attempt for a goroutine to run.
type start struct {
	ctx  *attemptCtx
	id   AttemptID
	call *Call
	n    int
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
		cfg = CreditConfig(cfg, o.quota)
	}
	core, err := New(cfg)
	if err != nil {
		return nil, err
	}
	r := &Runner{exec: exec, epoch: time.Now(), quota: o.quota, core: core, id: runnerID(),
		waiters: map[TurnID]*waiter{}, attempts: map[AttemptID]*attemptCtx{}, grants: map[uint64]Grant{}}
	r.base, r.stop = context.WithCancel(context.Background())
	r.workers = workers.New(&r.mu, cfg.MaxInFlight, func(s *start) bool { return r.runAttempt(s, 0) })
	r.timer = time.AfterFunc(time.Hour, r.tick)
	r.timer.Stop()
	return r, nil
}

// Run submits a turn and waits for every result, returned in the order of
// turn.Calls. Cancelling ctx cancels the turn: queued calls get a
// not-started result, in-flight attempts are cancelled at the transport and
// their calls get a cancelled-in-flight result, each error matching both
// ErrCancelled and ctx.Err() (context.DeadlineExceeded when ctx's deadline
// passed); Run then returns every result together with ctx.Err(). Run
// returns when the turn is decided, at its deadlines and ctx's at the
// latest, without waiting for an executor that ignores its context (that
// one runs on, and Close waits for it). The error is also set when the turn
// is refused (ErrInvalidTurn, ErrQueueFull) or the Runner is closed, with
// nil results.
func (r *Runner) Run(ctx context.Context, turn Turn) ([]Result, error) {
	var s start
	w, took, err := r.submit(ctx, turn, &s)
	if err != nil {
		return nil, err
	}
	// The caller's goroutine would only wait: it runs attempts of its own
	// turn meanwhile, one at a time, and goroutines run the others.
	for took {
		took = r.runAttempt(&s, w.id)
	}
	w.done.Wait()
	w.stopCancel()
	return w.result.Results, w.err
}

// Stream submits a turn and returns a channel that yields each result as it
// is decided (in completion order, not the caller's) and is closed after the
// last one. Cancelling ctx cancels the turn; the channel still receives the
// cancelled calls' results before it closes. The channel has room for every
// result, so a caller that stops reading never blocks the Runner.
func (r *Runner) Stream(ctx context.Context, turn Turn) (<-chan Result, error) {
	w, _, err := r.submit(ctx, turn, nil)
	if err != nil {
		return nil, err
	}
	return w.stream, nil
}

// submit hands the turn to the Core and arranges for ctx to cancel it. A
// nil self makes a streamed turn; otherwise the first attempt of the turn
// started is written to *self for the caller to run (took), unless the
// caller must not run any (see below).
func (r *Runner) submit(ctx context.Context, turn Turn, self *start) (w *waiter, took bool, err error) {
	turn.Calls = append([]Call(nil), turn.Calls...) // the caller may reuse its slice
	w = &waiter{ctx: ctx, ctxs: make([]attemptCtx, len(turn.Calls))}
	w.done.Add(1)
	if self == nil {
		w.stream = make(chan Result, len(turn.Calls))
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, false, ErrClosed
	}
	id, err := r.core.Submit(r.now(), turn)
	if err != nil {
		r.mu.Unlock()
		return nil, false, err
	}
	w.id = id
	r.waiters[id] = w
	if ctx.Done() != nil {
		w.cancelRan.Add(1)
		w.cancel = context.AfterFunc(ctx, func() {
			defer w.cancelRan.Done()
			r.cancelTurn(w, ctx.Err())
		})
	}
	// The caller runs attempts of its own turn only when nothing can
	// decide the turn while one of them runs (see Core.mayAbandon): it
	// would wait in an executor that ignores its context past the turn's
	// decision. Otherwise workers run every attempt and the caller waits
	// for the decision alone.
	if self != nil && (ctx.Done() != nil || r.core.mayAbandon(id)) {
		self = nil
	}
	took = r.carry(self, id)
	r.stopEnded()
	r.mu.Unlock()
	return w, took, nil
}

// stopCancel makes sure the turn's cancelling function will not run, or
// waits until it has.
func (w *waiter) stopCancel() {
	if w.cancel == nil {
		return
	}
	if w.cancel() {
		w.cancelRan.Done()
		return
	}
	w.cancelRan.Wait()
}

// cancelTurn cancels w's turn for its caller's context, unless it is done.
func (r *Runner) cancelTurn(w *waiter, cause error) {
	r.mu.Lock()
	if r.closed || r.waiters[w.id] != w {
		r.mu.Unlock()
		return
	}
	w.err = cause
	r.core.cancelFor(r.now(), w.id, cause)
	r.handOff()
}

// Close cancels every attempt in flight, ends every unfinished turn with
// ErrClosed results, and waits until every goroutine the Runner started has
// returned (executors included, so an executor must honour its context).
// Calling Close more than once is safe.
func (r *Runner) Close() error {
	r.mu.Lock()
	if !r.closed {
		now := r.now()
		closed := fmt.Errorf("runner closed: %w", ErrClosed)
		for id, w := range r.waiters {
			w.err = ErrClosed
			t, _ := r.core.turns.Get(id)
			r.core.cancelTurn(t, closed)
		}
		r.core.DropCredit(now)
		r.core.Advance(now)
		r.carry(nil, 0)
		r.stopEnded()
		r.closed = true
		r.timer.Stop()
		// The attempts no worker took are cancelled below: they end
		// without running.
		for range r.workers.Close() {
			r.work.Done()
		}
		for id, a := range r.attempts {
			a.Cancel()
			delete(r.attempts, id)
		}
	}
	r.mu.Unlock()
	r.stop()
	r.work.Wait()
	r.workers.Wait()
	return nil
}

func (r *Runner) now() time.Duration { return time.Since(r.epoch) }

// tick is the timer's: the Core's wake-up time has come.
func (r *Runner) tick() {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.core.Advance(r.now())
	r.handOff()
}

// handOff carries out the Core's decisions and releases the lock.
func (r *Runner) handOff() {
	r.carry(nil, 0)
	r.stopEnded()
	r.mu.Unlock()
}

// stopEnded stops the cancels of the streams that ended; the caller holds
// the lock. It does not wait for a cancel that already runs: that one needs
// the lock and finds the turn gone.
func (r *Runner) stopEnded() {
	for _, w := range r.ended {
		if w.cancel != nil && w.cancel() {
			w.cancelRan.Done()
		}
	}
	clear(r.ended)
	r.ended = r.ended[:0]
}

// carry does what the Core decided; the caller holds the lock. Each attempt
// to start gets a goroutine of its own, except the first (of turn mine,
// when it is not 0) when self is not nil: that one is written to *self for
// the calling goroutine to run, and carry reports whether it did so. Every
// attempt is counted in r.work.
func (r *Runner) carry(self *start, mine TurnID) (took bool) {
	r.acts = r.core.SwapActions(r.acts)
	for i := range r.acts {
		a := &r.acts[i]
		switch a.Kind {
		case ActStart:
			var ctx *attemptCtx
			if w := r.waiters[a.TurnID]; w != nil && a.N == 1 && !a.Hedge && w.used < len(w.ctxs) {
				ctx = &w.ctxs[w.used]
				w.used++
				ctx.parent = w.ctx
			} else if w != nil {
				ctx = &attemptCtx{parent: w.ctx}
			} else {
				ctx = &attemptCtx{parent: r.base}
			}
			ctx.runner, ctx.turn, ctx.index, ctx.n, ctx.hedge, ctx.deploy = r, a.TurnID, a.Index, a.N, a.Hedge, a.Deployment
			r.attempts[a.Attempt] = ctx
			r.work.Add(1)
			st := start{ctx: ctx, id: a.Attempt, call: a.Call, n: a.N}
			if self != nil && !took && (mine == 0 || a.TurnID == mine) {
				*self, took = st, true
			} else {
				r.workers.Dispatch(st)
			}
		case ActCancel:
			if ctx, ok := r.attempts[a.Attempt]; ok {
				ctx.Cancel()
				delete(r.attempts, a.Attempt)
			}
		case ActWake:
			r.timer.Reset(max(0, a.At-r.now()))
		case ActResult:
			if w := r.waiters[a.TurnID]; w != nil && w.stream != nil {
				w.stream <- *a.Result // buffered for every call: never blocks
			}
		case ActCredit:
			r.work.Add(1)
			go r.acquire(r.base, *a.Credit)
		case ActReturnCredit:
			r.returnCredit(a.Credit)
		case ActTurnDone:
			if w := r.waiters[a.TurnID]; w != nil {
				delete(r.waiters, a.TurnID)
				w.result = a.Turn
				if w.stream != nil {
					close(w.stream)
					// Nobody waits for a streamed turn: its cancel is
					// stopped once the lock is released.
					r.ended = append(r.ended, w)
				}
				w.done.Done()
			}
		}
		*a = Action{}
	}
	return took
}
