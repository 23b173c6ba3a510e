package sched

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Sentinel errors matched with errors.Is on Result.Err and on errors returned
// by Submit. The errors themselves carry the numbers that explain them.
var (
	// ErrCancelled: the turn was cancelled or a sibling failed in all-or-nothing mode.
	ErrCancelled = errors.New("sched: cancelled")
	// ErrDeadline: the call's or the turn's deadline passed, or the expected wait exceeds it.
	ErrDeadline = errors.New("sched: deadline exceeded")
	// ErrBudgetExhausted: the turn's token or attempt budget is spent.
	ErrBudgetExhausted = errors.New("sched: budget exhausted")
	// ErrRetryBudget: a call's retry was refused because its service's
	// retry budget (ServiceConfig.RetryBudget) is empty; the message names
	// the service and the budget.
	ErrRetryBudget = errors.New("sched: retry budget exhausted")
	// ErrTruncated: the call was beyond the turn's fan-out cap in truncate mode.
	ErrTruncated = errors.New("sched: truncated by fan-out cap")
	// ErrDependencyFailed: a call named in After failed.
	ErrDependencyFailed = errors.New("sched: dependency failed")
	// ErrNeverFits: the call's cost exceeds a bucket's capacity.
	ErrNeverFits = errors.New("sched: call can never fit the bucket")
	// ErrRetryAfterTooLong: the server's delay exceeds Config.MaxRetryAfter and the policy is to fail.
	ErrRetryAfterTooLong = errors.New("sched: retry delay exceeds the maximum")
	// ErrRetriesExhausted: the last permitted attempt failed with a retryable class.
	ErrRetriesExhausted = errors.New("sched: retries exhausted")
	// ErrQueueFull: Submit was refused because the queue bound would be passed.
	ErrQueueFull = errors.New("sched: queue full")
	// ErrInvalidTurn: Submit was refused because the turn is malformed
	// (duplicate or empty ids, unknown dependencies, cycles, unknown services).
	ErrInvalidTurn = errors.New("sched: invalid turn")
	// ErrPanic: the executor panicked; the panic value is in the message.
	ErrPanic = errors.New("sched: executor panicked")
	// ErrClosed: the Runner was closed.
	ErrClosed = errors.New("sched: runner closed")
)

// NeverFitsError is the error of a call whose cost exceeds what can ever be
// admitted: a bucket's capacity, or its turn's token budget. errors.Is
// matches it with ErrNeverFits; errors.As gives the numbers.
type NeverFitsError struct {
	// Call is the call's id; Service its service.
	Call, Service string
	// Need is the call's cost in tokens; Capacity the most that can ever be
	// admitted at once (the bucket's capacity after headroom, or the turn's
	// budget when Budget is set).
	Need, Capacity int64
	// Budget says the turn's token budget, not a bucket, is what is too small.
	Budget bool
}

func (e *NeverFitsError) Error() string {
	if e.Budget {
		return fmt.Sprintf("call %q needs %d tokens but the turn's budget is %d: %v", e.Call, e.Need, e.Capacity, ErrNeverFits)
	}
	return fmt.Sprintf("call %q needs %d tokens but the bucket of service %q holds at most %d: %v", e.Call, e.Need, e.Service, e.Capacity, ErrNeverFits)
}

// Is reports whether target is ErrNeverFits.
func (e *NeverFitsError) Is(target error) bool { return target == ErrNeverFits }

// RetriesExhaustedError is the error of a call that gave up: its last
// permitted attempt failed with a retryable class, or the next retry would
// have passed the retry budget of time. errors.Is matches it with
// ErrRetriesExhausted and with the last attempt's error (Unwrap).
type RetriesExhaustedError struct {
	// Call is the call's id; Attempts the attempts it made.
	Call     string
	Attempts int
	// Delay and Budget are set when the retry policy's time budget ended
	// the call: the retry would have waited Delay and passed Budget.
	Delay, Budget time.Duration
	// Last is the last attempt's error.
	Last error
}

func (e *RetriesExhaustedError) Error() string {
	if e.Budget > 0 {
		return fmt.Sprintf("a retry after %v would pass call %q's retry budget of %v: %v: %v", e.Delay, e.Call, e.Budget, ErrRetriesExhausted, e.Last)
	}
	return fmt.Sprintf("%v after %d attempts: %v", ErrRetriesExhausted, e.Attempts, e.Last)
}

// Is reports whether target is ErrRetriesExhausted.
func (e *RetriesExhaustedError) Is(target error) bool { return target == ErrRetriesExhausted }

// Unwrap returns the last attempt's error.
func (e *RetriesExhaustedError) Unwrap() error { return e.Last }

// QueueFullError is Submit's refusal of a turn that would pass
// Config.MaxQueued. errors.Is matches it with ErrQueueFull.
type QueueFullError struct {
	// Waiting is the calls already waiting; Adding the turn's calls; Bound
	// is Config.MaxQueued.
	Waiting, Adding, Bound int
}

func (e *QueueFullError) Error() string {
	return fmt.Sprintf("%v: %d calls waiting, the turn adds %d, the bound is %d", ErrQueueFull, e.Waiting, e.Adding, e.Bound)
}

// Is reports whether target is ErrQueueFull.
func (e *QueueFullError) Is(target error) bool { return target == ErrQueueFull }

// InvalidTurnError is Submit's refusal of a malformed turn, listing every
// problem. errors.Is matches it with ErrInvalidTurn.
type InvalidTurnError struct {
	// Problems describes each problem, in the order of the calls.
	Problems []string
	// UnknownServices lists the services named by calls that
	// Config.Services does not hold, each once, in the order of the calls.
	UnknownServices []string
}

func (e *InvalidTurnError) Error() string {
	return fmt.Sprintf("%v: %s", ErrInvalidTurn, strings.Join(e.Problems, "; "))
}

// Is reports whether target is ErrInvalidTurn.
func (e *InvalidTurnError) Is(target error) bool { return target == ErrInvalidTurn }

// RetryAfterTooLongError is the error of a call whose server asked for a
// delay above Config.MaxRetryAfter when the policy is RetryAfterFail.
// errors.Is matches it with ErrRetryAfterTooLong.
type RetryAfterTooLongError struct {
	// Call is the failed call's Call.ID.
	Call string
	// RetryAfter is the server's delay; Max is Config.MaxRetryAfter.
	RetryAfter, Max time.Duration
}

func (e *RetryAfterTooLongError) Error() string {
	return fmt.Sprintf("server asked call %q to wait %v, above the maximum of %v: %v", e.Call, e.RetryAfter, e.Max, ErrRetryAfterTooLong)
}

// Is reports whether target is ErrRetryAfterTooLong.
func (e *RetryAfterTooLongError) Is(target error) bool { return target == ErrRetryAfterTooLong }

// AttemptError is the error of a failed attempt whose executor reported a
// class but no error of its own. It is built only when the call's result is
// decided (or for an observer's event), never for an attempt that is retried.
type AttemptError struct {
	// Call is the call's Call.ID; Attempt the failed attempt's number,
	// from 1; Class how it failed.
	Call    string
	Attempt int
	Class   Class
	// Status is the HTTP status, 0 when there was none.
	Status int
}

func (e *AttemptError) Error() string {
	return fmt.Sprintf("call %q: attempt %d: %s (status %d)", e.Call, e.Attempt, e.Class, e.Status)
}
