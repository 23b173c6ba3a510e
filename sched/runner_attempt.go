package sched

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"fmt"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/simbench/simbench/sched/internal/lazyctx"
)

// attemptCtx is the context of one attempt: the values of the caller's
// context, and a cancellation of its own that the Runner triggers (attempt
// timeout, turn cancel, Close). It replaces a context.WithCancel per
// attempt, which cost a tenth of a no-op attempt's CPU in the Runner's
// profile: the done channel is made only when an executor asks for it, and
// nothing is registered with a parent.
type attemptCtx struct {
	parent           context.Context // values only
	lazyctx.Canceler                 // Done, Err and Cancel

	// What AttemptOf tells the executor.
	runner *Runner
	turn   TurnID
	index  int
	n      int
	hedge  bool
	deploy string
}

// Deadline returns no deadline: the Runner enforces timeouts by cancelling.
func (c *attemptCtx) Deadline() (time.Time, bool) { return time.Time{}, false }

// Value returns the caller's context's value for key.
func (c *attemptCtx) Value(key any) any {
	if key == (attemptKey{}) {
		return c
	}
	return c.parent.Value(key)
}

type attemptKey struct{}

// Attempt says which attempt of which call an executor runs.
type Attempt struct {
	// Key identifies the call across its attempts and across processes:
	// the same on every attempt of one call, different for every other
	// call (a random id of the Runner's, the turn and the call's position).
	// Send it as an Idempotency-Key header (httptool does) so that a
	// server can tell a retry from a new request and apply a retried
	// write once.
	Key string
	// N is the attempt number, from 1; a hedge has the number of the
	// attempt it hedges.
	N int
	// Hedge says the attempt is a hedge (Config.Hedge): a second copy of
	// attempt N, sent because N was slow to answer; the first of the two
	// to succeed is kept and the other cancelled.
	Hedge bool
	// Deployment is the service the attempt goes to: the call's Service,
	// or the deployment chosen when it names a route (Config.Routes).
	Deployment string
}

// AttemptOf returns the attempt an executor's context belongs to, and false
// for a context that no Runner made.
func AttemptOf(ctx context.Context) (Attempt, bool) {
	c, ok := ctx.Value(attemptKey{}).(*attemptCtx)
	if !ok {
		return Attempt{}, false
	}
	return Attempt{Key: c.runner.id + "-" + strconv.FormatUint(uint64(c.turn), 10) + "-" + strconv.Itoa(c.index), N: c.n, Hedge: c.hedge, Deployment: c.deploy}, true
}

// runnerID returns 16 random hex digits from crypto/rand.
func runnerID() string {
	var b [8]byte
	crand.Read(b[:]) // never fails
	return hex.EncodeToString(b[:])
}

func (c *attemptCtx) String() string { return "sched.attemptContext" }

// runAttempt runs attempt *s and reports its outcome; when the Core starts
// attempts in return, the first (of turn mine, unless 0) is written to *s
// for the caller to run next, and runAttempt reports true.
func (r *Runner) runAttempt(s *start, mine TurnID) bool {
	o := r.safeExec(s.ctx, s.call, s.n)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.work.Done() // a next attempt is counted anew
	if r.closed {
		return false
	}
	if _, ok := r.attempts[s.id]; ok {
		delete(r.attempts, s.id)
		r.core.Complete(r.now(), s.id, o)
	}
	took := r.carry(s, mine)
	r.stopEnded()
	return took
}

// safeExec runs the executor, turning a panic into an outcome. recover is
// called only when the executor did not return (it costs a stack walk).
func (r *Runner) safeExec(ctx context.Context, call *Call, n int) (o Outcome) {
	returned := false
	defer func() {
		if returned {
			return
		}
		if p := recover(); p != nil {
			o = Outcome{Class: ClassPermanent, Err: fmt.Errorf("%w: call %q attempt %d: %v\n%s", ErrPanic, call.ID, n, p, debug.Stack())}
		}
	}()
	o = r.exec(ctx, call, n)
	returned = true
	return o
}

// credit hands the Core a grant (or a refusal) the quota answered; the
// caller holds the lock.
func (r *Runner) credit(now time.Duration, c *CreditAction, g Grant, err error) {
	if err != nil {
		r.core.CreditRefused(now, c.Service, c.Kind, err)
		return
	}
	r.ticket++
	r.grants[r.ticket] = g
	r.core.Credit(now, c.Service, c.Kind, g.Units, g.Until.Sub(r.epoch), r.ticket)
}

// acquire asks the quota for credit and hands the answer to the Core. A
// grant the Core can no longer take (the Runner closed) goes back.
func (r *Runner) acquire(ctx context.Context, c CreditAction) {
	defer r.work.Done()
	g, err := r.quota.Acquire(ctx, c.Service, c.Kind, c.Units)
	if err != nil && ctx.Err() != nil {
		return // the Runner is closing: nobody waits for this credit
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		if err == nil {
			_ = r.quota.Return(context.Background(), g, g.Units)
		}
		return
	}
	r.credit(r.now(), &c, g, err)
	r.handOff()
}

// returnCredit gives a grant's unspent units (or its debt) back to the
// quota in the background; the caller holds the lock.
func (r *Runner) returnCredit(c *CreditAction) {
	g, ok := r.grants[c.Ticket]
	delete(r.grants, c.Ticket)
	if !ok {
		g = Grant{Service: c.Service, Kind: c.Kind}
	}
	if ok || c.Units < 0 {
		r.work.Add(1)
		go r.giveBack(g, c.Units)
	}
}

// giveBack returns a grant's unspent units (or charges its debt).
func (r *Runner) giveBack(g Grant, n float64) {
	defer r.work.Done()
	_ = r.quota.Return(context.Background(), g, n)
}
