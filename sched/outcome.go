package sched

import (
	"time"

	"github.com/simbench/simbench/sched/internal/vocab"
)

// Class is what happened to an attempt, as far as retrying is concerned.
type Class uint8

// Outcome classes. The zero value, ClassSuccess, is a successful attempt.
const (
	// ClassSuccess: the attempt produced a value.
	ClassSuccess Class = iota
	// ClassRateLimited: HTTP 429 or equivalent; retried after the server's delay.
	ClassRateLimited
	// ClassOverloaded: HTTP 529 or 503; retried with backoff.
	ClassOverloaded
	// ClassQuotaExhausted: the account's quota is spent; never retried.
	ClassQuotaExhausted
	// ClassTooLarge: the request can never be accepted (413, context too long); never retried.
	ClassTooLarge
	// ClassTransient: 5xx, connection reset or attempt timeout; retried.
	ClassTransient
	// ClassPermanent: any other 4xx or a tool error; never retried.
	ClassPermanent
	// ClassCancelled: the call was cancelled (turn cancel, deadline, sibling
	// failure) or never ran for a reason of the scheduler's (budget, fan-out
	// cap, failed dependency). Produced by the scheduler, not by executors.
	ClassCancelled
	// ClassConflict: HTTP 409, a write refused because another write to
	// the same resource got there first (optimistic concurrency). Nothing
	// was applied, so it is retried, writes that are not idempotent
	// included, after the retry policy's backoff: a server's Retry-After
	// is not honoured, since a conflict says nothing about the server's
	// capacity and only spreading the retries out breaks the contention.
	// Adaptive limits ignore it, for the same reason.
	ClassConflict
)

var classNames = vocab.Vocab[Class]{What: "class",
	Names: []string{"success", "rate_limited", "overloaded", "quota_exhausted", "too_large", "transient", "permanent", "cancelled", "conflict"}}

// String returns the class's snake_case name, as used in results files.
func (c Class) String() string { return classNames.Name(c) }

// Retryable reports whether an attempt of this class may be retried.
func (c Class) Retryable() bool {
	return c == ClassRateLimited || c == ClassOverloaded || c == ClassTransient || c == ClassConflict
}

// Outcome is what an executor reports for one attempt.
type Outcome struct {
	// Class is how the attempt ended (ClassSuccess, ClassRateLimited...),
	// what decides a retry (Class.Retryable).
	Class Class
	// Status is the HTTP status, or 0 when there was none.
	Status int
	// RetryAfter is the server's retry delay from the moment the response
	// arrived; HasRetryAfter says whether the server gave one. A delay is a
	// floor for the next attempt: jitter is added on top, never subtracted.
	RetryAfter    time.Duration
	HasRetryAfter bool
	// Tokens is the actual token usage when HasUsage is set; the reservation
	// made from Call.Tokens is settled against it (refund or extra debit).
	Tokens   int64
	HasUsage bool
	// Value is the tool's result on success.
	Value any
	// Err describes a failure; nil on success.
	Err error
	// Quota is what the response's rate-limit headers said is left of the
	// service's limits (x-ratelimit-remaining-* and anthropic-ratelimit-*),
	// for any status. A service with ServiceConfig.HeaderSync lowers its
	// buckets to it.
	Quota ServerQuota
}

// ServerQuota is what a server said is left of its request and token limits
// for the caller's key, counting every client that shares the key.
type ServerQuota struct {
	// Requests is the request limit (per minute, as providers publish it).
	Requests QuotaLeft
	// Tokens is the token limit; with several (Anthropic's tokens,
	// input-tokens and output-tokens) the one with the fewest left.
	Tokens QuotaLeft
}

// QuotaLeft is one limit's remaining count as a server reported it.
type QuotaLeft struct {
	// Known says the response reported this limit; the other fields are
	// zero otherwise.
	Known bool
	// Remaining is what the server had left when it decided on the
	// request, in requests or tokens, this request already counted.
	Remaining int64
	// Limit is the published limit Remaining is a part of (requests or
	// tokens per minute), 0 when not reported. Providers publish the level
	// of a bucket smaller than a minute's worth as a share of the limit, so
	// with Limit the scheduler reads Remaining ÷ Limit as the share of its
	// own bucket that is left.
	Limit int64
	// Reset is how long after the response the limit is back to full.
	Reset time.Duration
}

// Succeeded returns an Outcome of class success carrying v.
func Succeeded(v any) Outcome { return Outcome{Class: ClassSuccess, Value: v} }

// Failed returns an Outcome of class c carrying err.
func Failed(c Class, err error) Outcome { return Outcome{Class: c, Err: err} }
