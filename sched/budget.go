package sched

import (
	"fmt"
	"math"
	"time"

	"github.com/simbench/simbench/sched/internal/bucket"
)

// DefaultRetryBudgetMax is the most tokens a retry budget holds when
// RetryBudget.Max is 0: ten retries in reserve.
const DefaultRetryBudgetMax = 10

// RetryBudget lets a service's calls retry only as a fraction of its
// successful attempts plus a small floor, so that an outage does not turn
// every call into MaxAttempts attempts (a retry storm). It is the shape of
// gRPC's retry throttling and the AWS SDKs' retry quota: a bucket of tokens
// that starts full at Max; each successful attempt adds Ratio tokens and
// time adds MinPerSecond tokens per second, neither past Max; each retry
// takes one token. A call whose retry finds less than one token fails at
// once with an error wrapping ErrRetryBudget.
//
// Over a long outage a service then retries at most MinPerSecond times a
// second after the first Max retries; in steady state at most Ratio retries
// per successful attempt.
type RetryBudget struct {
	// Ratio is the tokens each successful attempt adds, in retries per
	// success (0.1: one retry per ten successes), at least 0.
	Ratio float64
	// MinPerSecond is the retries per second always allowed, whatever the
	// successes (0: none beyond the reserve and Ratio).
	MinPerSecond float64
	// Max is the most tokens held, in retries, and the starting level
	// (0: DefaultRetryBudgetMax).
	Max float64
}

func (b *RetryBudget) validate() error {
	if b.Ratio < 0 || b.MinPerSecond < 0 || b.Max < 0 || math.IsNaN(b.Ratio+b.MinPerSecond+b.Max) || math.IsInf(b.Ratio+b.MinPerSecond+b.Max, 0) {
		return fmt.Errorf("retry budget: ratio, min per second and max must be finite and not negative")
	}
	return nil
}

// newRetryBudget returns the retry budget cfg describes, full at now.
func newRetryBudget(cfg *RetryBudget, now time.Duration) *bucket.Retries {
	m := cfg.Max
	if m <= 0 {
		m = DefaultRetryBudgetMax
	}
	return bucket.NewRetries(cfg.Ratio, cfg.MinPerSecond, m, now)
}

// RetryBudgetLeft returns the retries the named service's retry budget
// allows now (its tokens, possibly fractional), and false when the service
// has no retry budget.
func (c *Core) RetryBudgetLeft(service string) (float64, bool) {
	s, ok := c.services[service]
	if !ok || s.budget == nil {
		return 0, false
	}
	return s.budget.Left(c.now), true
}

// spendRetry takes a retry token from the call's service budget, or fails
// the call with ErrRetryBudget and reports false.
func (c *Core) spendRetry(cs *callState, o *Outcome) bool {
	b := cs.svc.budget
	if b == nil || b.Spend(c.now) {
		return true
	}
	c.finish(cs, o.Class, nil, fmt.Errorf("service %q: retry budget empty (%.2f of %g tokens left; %g per success, %g/s floor), call %q not retried: %w: %w",
		cs.svc.name, b.Left(c.now), b.Max(), b.Ratio(), b.MinPerSecond(), cs.call.ID, ErrRetryBudget, attemptErr(cs, o)))
	return false
}
