package scenarios

import (
	"math"
	"time"

	"github.com/simbench/simbench/spec"
)

// The bounds below make loading and validation refuse what a run cannot
// survive, instead of letting it run out of memory, overflow or loop. Each
// is derived from what the engine, the scheduler and the fake service can
// represent; docs/scenario-format.md lists them for users. A problem that breaks one names
// the key, its line and the bound.

// Loading: reading and parsing a file takes time and memory linear in its
// size, with these caps on the size and on how deep its keys nest.
const (
	// MaxFileBytes is the largest scenario or empirical file, in bytes. The
	// built-in scenarios are about 3 KB, so this leaves eighty times the
	// room. The TOML parser allocates up to about 300 bytes per byte of the
	// worst-shaped input (thousands of keys at the deepest level), so a
	// file at the cap loads in about 100 MiB at most, and most in far less.
	MaxFileBytes = 256 << 10
	// MaxNesting is the deepest a key may sit: tables, dotted keys, arrays
	// and inline tables each count one level. The deepest key the format
	// has, workload.subagents.calls[0].count.max, sits at 6. The TOML
	// parser's cost per key grows with the square of its depth (12 KB of
	// nested inline tables took it 1 GiB), so depth is checked before it
	// runs.
	MaxNesting = 8
)

// Time: virtual time is a time.Duration, int64 nanoseconds, about 292
// years. The engine adds a few durations at a time (now + think, now +
// backoff + jitter, the run plus its drain), so every duration a file sets
// is kept to a year: a sum of 290 of them still fits.
const (
	// MaxDuration is the longest duration any key may give, and the largest
	// value a duration distribution may draw.
	MaxDuration = 365 * 24 * time.Hour
	// MinOverloadEvery is the shortest mean gap between overload episodes.
	// The fake service steps through episodes one gap at a time, so the gap
	// bounds its work per second of (virtual or real) time: at most 1,000
	// steps a second.
	MinOverloadEvery = time.Millisecond
	// MinBackoffBase is the shortest base delay of a retry backoff when one
	// is set (0, the default, retries at once). Shorter steps only spin.
	MinBackoffBase = time.Millisecond
)

// Rates. The fake service takes any limit up to spec.MaxLimit (10^15) over
// its window, and the simulator turns requests per second into requests
// per minute, so every request rate must fit that bound once expressed per
// minute. Rates below one an hour are indistinguishable from none over a
// run and make the time to the next token overflow.
const (
	// MaxRequestsPerMinute bounds rpm and burst: spec.MaxLimit.
	MaxRequestsPerMinute = spec.MaxLimit
	// MaxRequestsPerSecond bounds rps, so that rps × 60 stays within
	// MaxRequestsPerMinute.
	MaxRequestsPerSecond = spec.MaxRPS
	// MaxTokensPerMinute bounds tpm, input_tpm, output_tpm and
	// token_burst, by the same bound as rpm: a thousand times an
	// enterprise limit of 10^12 tokens a minute.
	MaxTokensPerMinute = spec.MaxLimit
	// MaxTokensPerSecond bounds the draws of tokens_per_s, in output
	// tokens per second.
	MaxTokensPerSecond = 1e6
	// MinRatePerHour is the slowest rate any rate key accepts, per hour.
	MinRatePerHour = 1
	// MaxArrivalRate bounds arrival_rate, in turns per second: at least
	// 10 µs between arrivals, so a second of virtual time holds at most
	// 100,000 new turns.
	MaxArrivalRate = 100_000
	// MaxBackgroundRate bounds a service's background rate, in requests per
	// second (spec.MaxBackgroundRate): the fake service accrues background
	// requests one by one at each arrival, so this bounds its work per
	// virtual second.
	MaxBackgroundRate = spec.MaxBackgroundRate
	// MaxBackgroundBurst bounds a service's background burst, in requests
	// arriving together (spec.MaxBackgroundBurst).
	MaxBackgroundBurst = spec.MaxBackgroundBurst
	// MaxRetryBudget bounds a retry budget's ratio (retries per success),
	// floor (retries per second) and max (retries held).
	MaxRetryBudget = 1_000_000
)

// Work per turn and in flight. The engine and the scheduler keep about
// 1 KiB per call in flight (10,000 sessions of 100 calls peaked at 1 GiB),
// and one turn's calls are allocated together.
const (
	// MaxSessions bounds workload.sessions: each session holds an event and
	// a turn in memory from the start of the run.
	MaxSessions = 1_000_000
	// MaxTurns bounds workload.turns, turns per session.
	MaxTurns = 1_000_000_000
	// MaxCallsPerTurn bounds the calls one turn (or one subagent iteration)
	// can make: the sum over its call groups of the largest count each can
	// draw, plus its model call. With subagents it also bounds subagents ×
	// calls per iteration, since their iterations run at once.
	MaxCallsPerTurn = 10_000
	// MaxCallsAtOnce bounds sessions × calls per turn, the calls in flight
	// when every session is mid-turn: about 1 GiB.
	MaxCallsAtOnce = 1_000_000
	// MaxSubagents bounds the subagents one orchestrator turn can start.
	MaxSubagents = 1_000
	// MaxIterations bounds a subagent's max_iterations.
	MaxIterations = 1_000_000
	// MaxAttempts bounds retry.attempts, attempts per call.
	MaxAttempts = 1_000
	// MaxTokensPerCall bounds the tokens one call can draw. Token sums must
	// not overflow int64: a turn of MaxCallsPerTurn calls, each retried
	// MaxAttempts times, reserves at most 10^4 × 10^3 × 10^8 = 10^15 tokens.
	MaxTokensPerCall = 100_000_000
	// MaxTokenBudget bounds token_budget (per turn, per subagent): the most
	// a turn can reserve, as above.
	MaxTokenBudget = 1_000_000_000_000_000
	// MaxPricePer1k bounds price_per_1k_input and price_per_1k_output, in
	// dollars per 1,000 tokens: a hundred times the dearest model's price,
	// so that a run's cost stays a number a report can print.
	MaxPricePer1k = 1_000
	// MaxCap bounds the whole-number caps (max_in_flight, max_queued,
	// fan_out, max_concurrent, attempt_budget, knee and the per-service
	// caps), so that they fit an int on every platform.
	MaxCap = math.MaxInt32
	// MaxLoadFactor bounds services.NAME.load.factor: at most 100 times the
	// latency per request in flight above the knee.
	MaxLoadFactor = 100
	// MaxWeight bounds a mix weight, so that a sum of weights stays exact.
	MaxWeight = 1e9
	// MinHeadroom is the smallest strategy headroom: the client's buckets
	// refill at least 1% as fast as the published limits, so that even at
	// the slowest rate a file can set (one an hour) the wait for a token,
	// 100 hours, stays within MaxDuration.
	MinHeadroom = 0.01
)

// Why the bounds are what they are, for problems.
const (
	whyRPS         = "so that rps × 60 fits the most the fake service counts over a minute"
	whyCredit      = "the most the fake service counts over a minute"
	whyCap         = "caps must fit an int on every platform"
	whyTokenBudget = "token sums must not overflow"
)
