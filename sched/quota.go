package sched

import (
	"context"
	"time"
)

// Quota is a source of units of limits shared with other processes (one
// API key's requests and tokens per minute, say), for a Runner given
// WithQuota. Package sched/quota implements it over Redis. Implementations
// are safe for concurrent use.
type Quota interface {
	// Covers reports which of a service's limits the quota shares.
	Covers(service string) (requests, tokens bool)
	// Acquire returns a grant of at least n units of kind for service,
	// waiting until they are available or ctx ends. An error other than
	// ctx's refuses the credit: the service's waiting calls fail.
	Acquire(ctx context.Context, service string, kind CreditKind, n float64) (Grant, error)
	// Return ends grant g, giving its n unspent units back (0: all were
	// spent; negative n: charges -n more units, usage beyond what was
	// granted). The Runner calls it once per grant, and for a debt left
	// when it closes possibly once more with a zero Grant.Mark. Errors are
	// the implementation's to count; the Runner does not retry.
	Return(ctx context.Context, g Grant, n float64) error
}

// Grant is units of one shared limit, valid until Until.
type Grant struct {
	// Service is the name of the service the units are of; Kind whether
	// they are requests or tokens; Units how many (requests, or tokens);
	// Until when they expire, on the wall clock.
	Service string
	Kind    CreditKind
	Units   float64
	Until   time.Time
	// Mark is the implementation's handle on the reservation, for Return.
	Mark any
}

// RunnerOption adjusts a Runner.
type RunnerOption func(*runnerOptions)

type runnerOptions struct {
	quota Quota
}

// WithQuota makes the Runner admit the calls of each service q covers
// against units acquired from q (see ServiceConfig.CreditRequests): calls
// wait in their queue, holding no concurrency slot, while the Runner
// acquires credit in the background; unspent units go back to q when a
// grant expires or is replaced, and when the Runner closes. The Config's
// own buckets still apply as this process's ceiling.
func WithQuota(q Quota) RunnerOption {
	return func(o *runnerOptions) { o.quota = q }
}

// CreditConfig returns cfg as a Runner given WithQuota(q) runs it: with
// ServiceConfig.CreditRequests and CreditTokens set for the limits q
// covers, so that the Core asks for credit (ActCredit) before admitting
// those services' calls. A driver of the Core of its own (a simulator on
// a virtual clock) uses it to drive q as the Runner does. The caller's map
// is not modified.
func CreditConfig(cfg Config, q Quota) Config {
	svcs := make(map[string]ServiceConfig, len(cfg.Services))
	for name, s := range cfg.Services {
		s.CreditRequests, s.CreditTokens = q.Covers(name)
		svcs[name] = s
	}
	cfg.Services = svcs
	return cfg
}
