package scenarios

import (
	"math"
	"time"

	"github.com/simbench/simbench/sched"
)

// MaxServices bounds a scenario's [services.NAME] tables. Measured on a
// 10 s run of two strategies whose turns call every service once (20
// sessions, one tool per service; `simbench run FILE --no-cache
// --no-recommend`, reports included): 200 services run in 3.6 s and
// 72 MB, 500 in 10 s and 92 MB, 1,000 in 25 s and 164 MB, the
// simulation's time growing faster than the number of services. 256 keeps
// such a run within a few seconds; the reports draw at most
// reports.MaxDrawnServices of them one by one whatever the number.
const MaxServices = 256

// MaxStrategies bounds a scenario's [[strategy]] tables: every strategy is
// simulated in memory of its own, a row of every table and a series of
// every figure.
const MaxStrategies = 1024

// Strategy is one way of scheduling the workload's calls: the knobs of
// sched.Config. Zero numbers mean "no cap" as in sched.
//
// One scheduler serves every session of a run, as one agent runtime sharing
// one set of API keys does (one per process when Workload.Processes > 1,
// each with these settings): MaxInFlight, MaxInFlightPerService, MaxQueued
// and the token buckets are process-wide, while FanOut, Join, TurnTimeout
// and the budgets apply to each turn. "Sequential" in the usual sense (an
// agent runs its calls one at a time) is FanOut = 1.
type Strategy struct {
	// Name is the strategy's name, unique in the file; it also seeds the
	// strategy's random stream.
	Name string
	// Description is an optional line for reports.
	Description string
	// MaxInFlight caps attempts in flight across all services: 0 unbounded,
	// 1 sequential (sched.Config.MaxInFlight).
	MaxInFlight int
	// MaxInFlightPerService caps attempts in flight per service, by service
	// name (sched.ServiceConfig.MaxInFlight); nil when unset.
	MaxInFlightPerService map[string]int
	// TokenBucket makes the client pace itself with token buckets built from
	// each service's published limits (rps, rpm, tpm) scaled by Headroom.
	TokenBucket bool
	// Headroom is the fraction of published limits the buckets use, in (0, 1]
	// (1 when unset; only set with TokenBucket).
	Headroom float64
	// Retry is the retry policy; without a retry table it is Backoff none,
	// Attempts 0, which sched runs as one attempt and no retries.
	Retry Retry
	// SerializeWrites runs writes to one resource one at a time (true unless
	// the file says false). When false the simulator submits writes as plain
	// calls (sched.Call.Write unset), so they overlap and the fake service
	// counts write races.
	SerializeWrites bool
	// KeepSlotDuringBackoff holds the concurrency slot while waiting to retry.
	KeepSlotDuringBackoff bool
	// Recommend marks the strategy whose cap `recommend`, `run` and
	// `sweep` tune when they decide what to set (at most one per file).
	Recommend bool
	// PauseOnRetryAfter holds every call to a service until a 429's delay has
	// passed (sched.ServiceConfig.PauseOnRetryAfter, for every service).
	PauseOnRetryAfter bool
	// FanOut caps the calls of one turn active at once (0: no cap);
	// FanOutMode says what happens to the rest (key fan_out_mode, one of
	// sched.FanOutModes; sched.FanOutBatch when unset).
	FanOut     int
	FanOutMode sched.FanOutMode
	// Join says how one failure affects the rest of a turn (key join, one
	// of sched.JoinModes; sched.JoinPartial when unset).
	Join sched.JoinMode
	// BatchTurns is how many of the workload's turns the agent asks for in
	// one model turn (key batch_turns; 0 when unset, which means 1): each
	// turn draws the calls of BatchTurns turns at once, a session has
	// ⌈turns ÷ BatchTurns⌉ turns, and a model call's context grows by
	// BatchTurns × context_growth a turn, since each turn returns that
	// many turns' results. It compares many narrow turns with few wide
	// ones on one workload.
	BatchTurns int `json:",omitempty"`
	// ProgressiveJoin lets a turn move on before all its tool calls have
	// answered (key progressive_join; nil: it waits for every one).
	ProgressiveJoin *ProgressiveJoin `json:",omitempty"`
	// FallBackAfter, when set, replaces every route's fall_back_after
	// for this strategy (key fall_back_after; see Route.FallBackAfter), so
	// that strategies compare waiting with falling back on one scenario.
	FallBackAfter *time.Duration `json:",omitempty"`
	// AttemptTimeout bounds one attempt; CallTimeout one call over all its
	// attempts; TurnTimeout a whole turn (0: none).
	AttemptTimeout time.Duration
	CallTimeout    time.Duration
	TurnTimeout    time.Duration
	// TokenBudget caps the tokens a turn's attempts may reserve, in tokens;
	// AttemptBudget caps the attempts a turn may start (0: none).
	TokenBudget   int64
	AttemptBudget int
	// MaxQueued bounds calls waiting to start (0: unbounded).
	MaxQueued int
	// CancelAt says how far a cancellation reaches.
	CancelAt CancelAt
	// Adaptive, when set, makes each service's concurrency limit adapt
	// (sched.ServiceConfig.Adaptive); nil keeps static caps.
	Adaptive *Adaptive
	// RetryBudget, when set, lets each service's calls retry only as a
	// fraction of its successes plus a floor per second
	// (sched.ServiceConfig.RetryBudget); nil: no budget.
	RetryBudget *RetryBudget
	// HeaderSync lowers the token buckets to the remaining counts the
	// services report in their rate-limit headers
	// (sched.ServiceConfig.HeaderSync); only with TokenBucket.
	HeaderSync bool
	// Priority ranks the workload's session classes, highest first, each
	// with its guaranteed share (sched.Config.Priorities); nil: every
	// call in submission order.
	Priority []Priority
	// Hedge, when set, hedges the calls of read tools marked idempotent
	// (keys hedge_after, hedge_percentile, hedge_budget); nil: no hedges.
	Hedge *Hedge
	// Quota says how the workload's processes divide the services' limits
	// (Mode QuotaFull when unset; it only matters with Processes > 1,
	// except that QuotaShared also adds its round trips to one process).
	Quota Quota
}

// RetryBudget is a per-service retry budget (sched.RetryBudget).
type RetryBudget struct {
	// Ratio is the retries each successful attempt earns.
	Ratio float64
	// MinPerSecond is the retries per second always allowed.
	MinPerSecond float64
	// Max is the most retries held, and the starting level (0: sched's default).
	Max float64
}

// Adaptive is an adaptive concurrency limit per service (sched.AdaptiveConfig).
// Zero numbers take sched's defaults.
type Adaptive struct {
	// Algorithm is one of sched.Algorithms, by name in the file ("aimd"
	// or "gradient").
	Algorithm sched.Algorithm
	// Initial, Min and Max bound the limit, in attempts in flight per
	// service; the strategy's static caps bound it further.
	Initial, Min, Max int
	// Decrease multiplies the limit on a 429 or overload answer, in (0, 1).
	Decrease float64
	// Smoothing, Tolerance, LongWindow (in completions) and QueueSize (in
	// attempts) tune the gradient limit (sched.AdaptiveConfig).
	Smoothing, Tolerance float64
	LongWindow           int
	QueueSize            float64
	// Services names the services the limit applies to (nil: every service).
	Services []string
}

// Retry is a retry policy (sched.RetryPolicy).
type Retry struct {
	// Backoff is the delay policy when the server gives no delay: one of
	// sched.Backoffs, by name in the file (sched.BackoffNone when unset).
	Backoff sched.Backoff
	// Base and Cap bound the backoff delays (Cap 0: no cap).
	Base, Cap time.Duration
	// Attempts counts attempts including the first (0: sched's default —
	// 1 when there is neither a backoff nor a base, else
	// sched.DefaultMaxAttempts).
	Attempts int
	// Budget bounds the time from a call's first attempt to the start of its
	// last (0: none).
	Budget time.Duration
	// HonorRetryAfter waits the server's delay when it gives one (true unless
	// the file says false; sched.RetryPolicy.IgnoreRetryAfter is its negation).
	HonorRetryAfter bool
	// RetryAfterJitter is the most random delay added on top of the server's.
	RetryAfterJitter time.Duration
	// MaxRetryAfter is the longest server delay honoured (0: sched's default);
	// OverMaxRetryAfter says whether longer ones are clamped or fail the call.
	MaxRetryAfter     time.Duration
	OverMaxRetryAfter sched.OverMaxRetryAfter
}

// ProgressiveJoin is the article's as_completed: a turn's tool calls are
// read as they answer, and once First of them (or the Share of them,
// rounded up) have succeeded the turn moves on (its subagents start, or
// it ends and its session thinks and starts the next model turn, the
// synthesis) while the slow calls finish. Late says what becomes of
// those. A turn that draws no more calls than the join needs waits for
// all of them, as without it; one whose failures leave too few
// successes ends when every call has answered, failed.
type ProgressiveJoin struct {
	// First is how many successes the turn waits for (0: Share says).
	First int `json:",omitempty"`
	// Share is the fraction of the turn's calls that must succeed, in
	// (0, 1], rounded up to whole calls (0: First says).
	Share float64 `json:",omitempty"`
	// Late says what becomes of the calls still running at the join.
	Late JoinLate
}

// Need returns how many of a turn's n tool calls must succeed before it
// moves on: min(First, n), or ⌈Share × n⌉.
func (j *ProgressiveJoin) Need(n int) int {
	if j.First > 0 {
		return min(j.First, n)
	}
	k := int(math.Ceil(j.Share*float64(n) - 1e-9))
	return max(1, min(k, n))
}

// JoinLate says what becomes of a turn's tool calls still running when
// its progressive join moves on.
type JoinLate string

const (
	// JoinLateFold lets them finish: they hold their slots and quota and
	// are billed, and their results are folded into a later turn (its
	// context already grows by context_growth a turn).
	JoinLateFold JoinLate = "fold"
	// JoinLateDrop cancels them at the join (at the transport or the
	// reader, as cancel_at says) and drops their results.
	JoinLateDrop JoinLate = "drop"
)

// CancelAt says where a cancelled call is stopped.
type CancelAt string

const (
	// CancelAtTransport closes the request, so the server stops the work.
	CancelAtTransport CancelAt = "transport"
	// CancelAtReader only stops reading the result: the request runs on at
	// the server and spends quota that nobody uses (wasted work).
	CancelAtReader CancelAt = "reader"
)

// Batch is the number of the workload's turns one turn of the strategy
// asks for: BatchTurns, or 1 when unset.
func (s *Strategy) Batch() int { return max(s.BatchTurns, 1) }
