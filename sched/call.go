package sched

import "time"

// Call is one tool call that a model emitted. The zero value is a read of no
// service with no limits applied beyond the global cap.
type Call struct {
	// ID identifies the call within its turn; every ID gets exactly one Result.
	ID string
	// Tool is the tool's name, for events and reports.
	Tool string
	// Service names the downstream service whose caps and buckets apply
	// (a key of Config.Services). Empty means no per-service limits.
	Service string
	// Tokens is the estimated token cost reserved from the service's
	// tokens-per-minute bucket before the call starts. The outcome's
	// Usage settles the difference.
	Tokens int64
	// Write marks a call that mutates Resource; writes to one resource run one
	// at a time in submission order, and are retried only when Idempotent.
	Write bool
	// Resource is the key writes are serialized on. Empty with Write set means
	// the call's Service (or Tool, without a service).
	Resource string
	// Idempotent allows a write to be retried.
	Idempotent bool
	// After lists IDs of calls in the same turn that must finish successfully
	// before this one starts.
	After []string
	// Timeout is the call's deadline relative to the turn's submission,
	// covering queueing, every attempt and every backoff. Zero means
	// Config.CallTimeout.
	Timeout time.Duration
	// Priority is the call's class under Config.Priorities, an index into
	// it: 0, the zero value, is the highest class. Without classes every
	// call has priority 0.
	Priority int
	// Payload is passed untouched to the executor (arguments, a request).
	Payload any
}

// resource returns the key a write is serialized on.
func (c *Call) resource() string {
	switch {
	case c.Resource != "":
		return c.Resource
	case c.Service != "":
		return c.Service
	default:
		return c.Tool
	}
}

// Turn is the set of calls a model emitted in one response, with the limits
// that apply to the turn as a whole. Zero fields take the Config defaults.
type Turn struct {
	// Calls are the turn's calls. The Core keeps the slice until the turn is
	// done and hands out pointers into it: do not modify it meanwhile (the
	// Runner copies it for its callers).
	Calls []Call
	// Timeout is the turn's deadline relative to submission (0: Config.TurnTimeout).
	Timeout time.Duration
	// TokenBudget caps the tokens the turn's attempts may reserve (0: Config.TurnTokenBudget).
	TokenBudget int64
	// AttemptBudget caps the attempts the turn may start (0: Config.TurnAttemptBudget).
	AttemptBudget int
	// Join selects partial results or all-or-nothing (0: Config.Join).
	Join JoinMode
	// Tag is an opaque value echoed in every event and result of the turn
	// (a session id, say).
	Tag any
}

// TurnID identifies a submitted turn within one Core.
type TurnID uint64

// AttemptID identifies one attempt of one call within one Core.
type AttemptID uint64
