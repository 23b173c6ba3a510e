package sched

import "errors"

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
