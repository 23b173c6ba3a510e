package sched

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/simbench/simbench/sched/internal/vocab"
)

// Defaults applied by Config when a field is zero.
const (
	// DefaultMaxRetryAfter is the longest server-given delay honoured as is.
	DefaultMaxRetryAfter = 120 * time.Second
	// DefaultHeadroom is the fraction of a service's published limits the
	// buckets use. It is kept at 1.0, all of the limit, because a lower
	// default would slow every caller to buy off a cost that is small and
	// bounded: a bucket at exactly the published limit meets an occasional
	// 429 where the server's window and the client's bucket do not start
	// together (1 call in 13 at 240 rpm with a burst of 2, measured against
	// the fake server), and each such call is retried after the server's
	// delay. Set Headroom to 0.9 to avoid those at the cost of a tenth of the
	// rate, or below when other clients share the limit.
	DefaultHeadroom = 1.0
	// DefaultMaxAttempts is the attempts per call when Retry.MaxAttempts is 0
	// and a backoff policy is set.
	DefaultMaxAttempts = 5
)

// FanOutMode says what happens to a turn's calls beyond Config.FanOut.
type FanOutMode uint8

const (
	// FanOutBatch: calls beyond the cap wait until earlier calls of the turn finish.
	FanOutBatch FanOutMode = iota
	// FanOutTruncate: calls beyond the cap get an ErrTruncated result at once.
	FanOutTruncate
)

// JoinMode says how one failure affects the rest of the turn.
type JoinMode uint8

const (
	// JoinDefault takes Config.Join (itself JoinPartial when zero).
	JoinDefault JoinMode = iota
	// JoinPartial returns every result, failures included.
	JoinPartial
	// JoinAllOrNothing cancels the siblings at the first failure.
	JoinAllOrNothing
)

// OverMaxRetryAfter says what happens to a server delay above Config.MaxRetryAfter.
type OverMaxRetryAfter uint8

const (
	// RetryAfterClamp waits MaxRetryAfter instead.
	RetryAfterClamp OverMaxRetryAfter = iota
	// RetryAfterFail fails the call with ErrRetryAfterTooLong, stating the value.
	RetryAfterFail
)

var (
	fanOutModes = vocab.Vocab[FanOutMode]{What: "fan-out mode", Names: []string{"batch", "truncate"}}
	joinModes   = vocab.Vocab[JoinMode]{What: "join mode", Names: []string{"default", "partial", "all-or-nothing"}, First: JoinPartial}
	overMaxes   = vocab.Vocab[OverMaxRetryAfter]{What: "over-max-retry-after", Names: []string{"clamp", "fail"}}
)

// String returns the mode's name as written in scenario files.
func (m FanOutMode) String() string { return fanOutModes.Name(m) }

// ParseFanOutMode returns the mode named s (as String prints it).
func ParseFanOutMode(s string) (FanOutMode, error) { return fanOutModes.Parse(s) }

// FanOutModes returns every fan-out mode, in order.
func FanOutModes() []FanOutMode { return fanOutModes.Choices() }

// MarshalText returns the mode's name (encoding.TextMarshaler).
func (m FanOutMode) MarshalText() ([]byte, error) { return fanOutModes.Marshal(m) }

// UnmarshalText sets m to the mode text names (encoding.TextUnmarshaler).
func (m *FanOutMode) UnmarshalText(text []byte) error { return fanOutModes.Unmarshal(m, text) }

// String returns the mode's name as written in scenario files ("default"
// for JoinDefault).
func (m JoinMode) String() string { return joinModes.Name(m) }

// ParseJoinMode returns the mode named s (as String prints it).
func ParseJoinMode(s string) (JoinMode, error) { return joinModes.Parse(s) }

// JoinModes returns the join modes a caller picks from, in order:
// JoinPartial and JoinAllOrNothing (JoinDefault only defers to another).
func JoinModes() []JoinMode { return joinModes.Choices() }

// MarshalText returns the mode's name (encoding.TextMarshaler).
func (m JoinMode) MarshalText() ([]byte, error) { return joinModes.Marshal(m) }

// UnmarshalText sets m to the mode text names (encoding.TextUnmarshaler).
func (m *JoinMode) UnmarshalText(text []byte) error { return joinModes.Unmarshal(m, text) }

// String returns the choice's name as written in scenario files.
func (o OverMaxRetryAfter) String() string { return overMaxes.Name(o) }

// ParseOverMaxRetryAfter returns the choice named s (as String prints it).
func ParseOverMaxRetryAfter(s string) (OverMaxRetryAfter, error) { return overMaxes.Parse(s) }

// OverMaxRetryAfters returns every choice for a server delay above
// Config.MaxRetryAfter, in order.
func OverMaxRetryAfters() []OverMaxRetryAfter { return overMaxes.Choices() }

// MarshalText returns the choice's name (encoding.TextMarshaler).
func (o OverMaxRetryAfter) MarshalText() ([]byte, error) { return overMaxes.Marshal(o) }

// UnmarshalText sets o to the choice text names (encoding.TextUnmarshaler).
func (o *OverMaxRetryAfter) UnmarshalText(text []byte) error { return overMaxes.Unmarshal(o, text) }

// ServiceConfig holds the limits that apply to every call naming one service.
// Zero fields mean no limit. New refuses a rate below MinRatePerMinute, as
// SetLimits does.
type ServiceConfig struct {
	// MaxInFlight caps attempts in flight to the service (0: only the global cap).
	MaxInFlight int
	// RequestsPerMinute refills the request bucket; RequestBurst is its
	// capacity (0: one second's worth, at least 1).
	RequestsPerMinute float64
	RequestBurst      float64
	// TokensPerMinute refills the token bucket; TokenBurst is its capacity
	// (0: one minute's worth).
	TokensPerMinute float64
	TokenBurst      float64
	// Headroom scales rates and capacities (0: DefaultHeadroom); 0.7 keeps 30% spare for retries.
	Headroom float64
	// PauseOnRetryAfter holds every call to the service until a 429's retry
	// delay has passed, so parallel calls don't return as a herd.
	PauseOnRetryAfter bool
	// Adaptive, when set, makes the service's concurrency limit adapt to its
	// answers (AIMD on rate limits or a latency gradient), never above
	// MaxInFlight or Config.MaxInFlight. Nil keeps the static caps only.
	Adaptive *AdaptiveConfig
	// RetryBudget, when set, lets the service's calls retry only as a
	// fraction of its successful attempts plus a floor per second; a retry
	// beyond it fails the call with ErrRetryBudget. Nil: retries are bounded
	// by the RetryPolicy only.
	RetryBudget *RetryBudget
	// HeaderSync makes the service's request and token buckets follow the
	// remaining counts the server reports (Outcome.Quota): when the server
	// says fewer are left than the bucket holds — other processes share
	// the key — the bucket is lowered to match, never raised, so the
	// process stops before the 429. It needs RequestsPerMinute or
	// TokensPerMinute to have a bucket to lower.
	HeaderSync bool
	// CreditRequests and CreditTokens admit the service's calls only
	// against units of a limit shared with other processes, which the
	// driver feeds with Core.Credit when the Core asks (ActCredit); a
	// Runner given WithQuota sets them for the services its quota covers.
	// A call waiting for credit stays queued and holds no slot. The local
	// buckets above still apply, as a ceiling of this process's own.
	CreditRequests bool
	CreditTokens   bool
}

// Config configures a Core (and a Runner). The zero value runs every call at
// once with no limits and no retries.
type Config struct {
	// MaxInFlight caps attempts in flight across all services: 0 is unbounded, 1 sequential.
	MaxInFlight int
	// Services holds per-service caps and buckets, keyed by Call.Service.
	Services map[string]ServiceConfig
	// Routes holds the routes, keyed by the name a Call.Service gives
	// them: logical services served by several of Services, with fallback
	// and cooldown (see RouteConfig). Nil: every call names a service.
	Routes map[string]RouteConfig
	// MaxQueued bounds calls waiting to start; Submit refuses a turn that would pass it (0: unbounded).
	MaxQueued int
	// FanOut caps the calls of one turn that may be active at once (0: no cap); FanOutMode picks batch or truncate.
	FanOut     int
	FanOutMode FanOutMode
	// Retry is the retry and backoff policy.
	Retry RetryPolicy
	// Priorities lists the priority classes calls choose with
	// Call.Priority, highest first (nil: one class, admission in
	// submission order). Within one service's caps and buckets a higher
	// class's calls are admitted first, and each class is guaranteed its
	// Share of the service's admissions while it has calls waiting. A
	// service with buckets then admits a call only when it can start at
	// once, so that a call of a higher class is not queued behind
	// reservations made for later.
	Priorities []PriorityClass
	// Hedge, when set, sends a second attempt of an idempotent read that is
	// slow to answer and keeps the first success (see HedgePolicy). Nil:
	// no hedges.
	Hedge *HedgePolicy
	// KeepSlotDuringBackoff makes a call hold its concurrency slot while it
	// waits to retry (the semaphore-around-the-retry-loop pattern). By default
	// the slot is released and the retry queues again in its original place.
	KeepSlotDuringBackoff bool
	// MaxRetryAfter is the longest server delay honoured (0: DefaultMaxRetryAfter);
	// OverMaxRetryAfter says whether longer ones are clamped or fail the call.
	MaxRetryAfter     time.Duration
	OverMaxRetryAfter OverMaxRetryAfter
	// AttemptTimeout bounds one attempt; a timed-out attempt is cancelled and
	// counts as transient (0: none).
	AttemptTimeout time.Duration
	// CallTimeout and TurnTimeout are default deadlines relative to submission (0: none).
	CallTimeout time.Duration
	TurnTimeout time.Duration
	// Join is the default join mode (0: JoinPartial).
	Join JoinMode
	// TurnTokenBudget and TurnAttemptBudget are default per-turn budgets (0: none).
	TurnTokenBudget   int64
	TurnAttemptBudget int
	// Rand supplies jitter draws. Nil seeds a generator from crypto/rand,
	// so two processes never draw the same jitter and retry in step; a run
	// is reproducible only when the caller passes a seeded source, such as
	// rand.New(rand.NewPCG(seed, 0)), as the simulator does. The Core draws
	// from it on its owner's goroutine only; do not share it.
	Rand *rand.Rand
	// Hook receives one Event per decision, in the order the decisions are
	// made; nil costs nothing. It is called synchronously while the Core
	// decides — under a Runner's lock, on whichever goroutine made the
	// decision — so it must be quick and must not block: every turn of the
	// Runner waits while it runs. It must not call the Core or the Runner
	// (a Runner's Hook that does deadlocks). An observer that does slow
	// work (a network exporter, a log write) copies the Event to a buffered
	// channel or a ring and does the work elsewhere, dropping events when
	// it falls behind. The Event and its fields may be kept.
	Hook func(Event)
}

// RetryPolicy says which failed attempts are retried and after how long.
type RetryPolicy struct {
	// Backoff is the delay policy when the server gives no delay (BackoffNone: retry at once).
	Backoff Backoff
	// Base and Cap bound the policy's delays.
	Base, Cap time.Duration
	// MaxAttempts counts attempts including the first (0: 1 when Backoff is
	// BackoffNone and Base is 0, else DefaultMaxAttempts).
	MaxAttempts int
	// Budget bounds the time from a call's first attempt to the start of its
	// last (0: none). A retry that would start later fails the call instead.
	Budget time.Duration
	// IgnoreRetryAfter makes the policy ignore the server's delay, as careless
	// clients do (the simulator uses it to show early retries).
	IgnoreRetryAfter bool
	// RetryAfterJitter is the most jitter added on top of a server delay; each
	// retry waits RetryAfter + draw×RetryAfterJitter. The default, 0, keeps
	// the server's delay exact: a server that paces its clients with
	// Retry-After (retry-after-ms is exact to the millisecond) gets each
	// back when it said, and a process's own calls are kept from returning
	// together by ServiceConfig.PauseOnRetryAfter, which releases them one
	// bucket slot at a time. Set a jitter of a tenth of the typical delay
	// or more when many processes without a shared quota are told the same
	// delay, or they come back as one herd.
	RetryAfterJitter time.Duration
}

func (p *RetryPolicy) maxAttempts() int {
	switch {
	case p.MaxAttempts > 0:
		return p.MaxAttempts
	case p.Backoff == BackoffNone && p.Base == 0:
		return 1
	default:
		return DefaultMaxAttempts
	}
}

func (s ServiceConfig) headroom() float64 {
	if s.Headroom <= 0 {
		return DefaultHeadroom
	}
	return s.Headroom
}

// validate reports the first impossible value; Config errors are programming
// errors of the caller's, so one at a time is enough. Services are checked
// in the order of their names, so the same Config names the same one.
func (c *Config) validate() error {
	if c.MaxInFlight < 0 || c.MaxQueued < 0 || c.FanOut < 0 || c.TurnAttemptBudget < 0 || c.TurnTokenBudget < 0 {
		return fmt.Errorf("sched: negative cap or budget in config")
	}
	if c.Retry.Base < 0 || c.Retry.Cap < 0 || c.Retry.MaxAttempts < 0 || c.Retry.Budget < 0 || c.Retry.RetryAfterJitter < 0 {
		return fmt.Errorf("sched: negative retry setting in config")
	}
	if err := validatePriorities(c.Priorities); err != nil {
		return err
	}
	if c.Hedge != nil {
		if err := c.Hedge.validate(); err != nil {
			return err
		}
	}
	for _, name := range c.serviceNames() {
		s := c.Services[name]
		if err := limitsOf(s).check(); err != nil {
			return fmt.Errorf("sched: service %q: %w", name, err)
		}
		if !(s.Headroom >= 0 && s.Headroom <= 1) {
			return fmt.Errorf("sched: service %q: headroom %g outside [0, 1] (0: DefaultHeadroom)", name, s.Headroom)
		}
		if s.Adaptive != nil {
			if err := s.Adaptive.validate(); err != nil {
				return fmt.Errorf("sched: service %q: %w", name, err)
			}
		}
		if s.RetryBudget != nil {
			if err := s.RetryBudget.validate(); err != nil {
				return fmt.Errorf("sched: service %q: %w", name, err)
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.Routes)) {
		r := c.Routes[name]
		if err := r.validate(name, c.Services); err != nil {
			return err
		}
	}
	return nil
}

// serviceNames returns the names of c.Services, sorted: the order in which
// anything that walks the services does, so that no result depends on
// map order.
func (c *Config) serviceNames() []string {
	return slices.Sorted(maps.Keys(c.Services))
}
