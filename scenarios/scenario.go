// Package scenarios defines simbench's scenario files: the schema, strict
// loading and validation, and the built-in scenarios embedded in the binary.
//
// A scenario describes a workload (agent sessions or arriving turns, the tool
// calls each turn emits), the rate-limited services those calls reach, the
// tools that map calls onto services, and the scheduling strategies to
// compare. The package only describes; it runs nothing. Package sim turns a
// Scenario into sched.Config values and fakeapi service models.
//
// Loading is strict: unknown keys, wrong types and impossible values are all
// reported at once in one *Error, each problem with file, line, column and key
// path. Every value in a parsed Scenario has its defaults filled in, so a
// consumer never has to know what an absent key means.
//
// Slices keep the order of the file (services, tools and strategies as
// written), so iterating a Scenario is deterministic.
package scenarios

import (
	"math"
	"math/bits"
	"time"
)

// Scenario is one parsed and validated scenario file. Values are plain data,
// safe to read from many goroutines; nothing in it changes after loading.
type Scenario struct {
	// Name identifies the scenario in reports and results.json (the file's
	// base name without .toml when the file has no name key).
	Name string
	// Description is one line saying what the scenario shows.
	Description string
	// Source is where the scenario came from: a file path, or
	// "builtin:NAME.toml" for an embedded one.
	Source string
	// Seed seeds every random stream of a run (0 is a valid seed).
	Seed uint64
	// Duration is how much virtual time a run covers; always > 0.
	Duration time.Duration

	Workload Workload
	// Services in file order; Service looks one up by name.
	Services []Service
	// Tools in file order; Tool looks one up by name.
	Tools []Tool
	// Strategies in file order, names unique; there is at least one.
	Strategies []Strategy
	// Thresholds are the run's pass/fail bounds, from the [thresholds]
	// table, in file order (see Threshold).
	Thresholds []Threshold
	// Events are the timed changes of services' conditions, from the
	// [[events]] tables, in file order (see Event).
	Events []Event
}

// Service returns the service called name, or nil.
func (s *Scenario) Service(name string) *Service {
	for i := range s.Services {
		if s.Services[i].Name == name {
			return &s.Services[i]
		}
	}
	return nil
}

// Tool returns the tool called name, or nil.
func (s *Scenario) Tool(name string) *Tool {
	for i := range s.Tools {
		if s.Tools[i].Name == name {
			return &s.Tools[i]
		}
	}
	return nil
}

// Strategy returns the strategy called name, or nil.
func (s *Scenario) Strategy(name string) *Strategy {
	for i := range s.Strategies {
		if s.Strategies[i].Name == name {
			return &s.Strategies[i]
		}
	}
	return nil
}

// Workload says what the agents do: how turns begin (closed or open model)
// and what calls each turn makes. Exactly one model is set: Sessions > 0
// (closed) or ArrivalRate > 0 (open).
type Workload struct {
	// Sessions is the number of concurrent agent sessions in the closed model;
	// each loops: turn, think, turn, … (0 in the open model).
	Sessions int
	// Turns is turns per session in the closed model; 0 means sessions keep
	// going until Duration ends.
	Turns int
	// Think is the pause between a session's turns (closed model; zero
	// distribution when unset).
	Think Dist[time.Duration]
	// Ramp spreads the closed model's session starts evenly over the run's
	// first Ramp: session i of n starts at i × Ramp ÷ n. Zero starts every
	// session at once.
	Ramp time.Duration

	// Arrival is the open model's arrival process ("" in the closed model).
	// Each arrival is one turn; latency counts from the intended arrival time.
	Arrival Arrival
	// ArrivalRate is turns per second in the open model (0 in the closed model).
	ArrivalRate float64

	// LLM, when set, is a model call made at the start of every turn, before
	// its tool calls are issued.
	LLM *LLMCall
	// Calls are the groups of tool calls a turn emits, in file order. Empty
	// only when LLM is set.
	Calls []CallGroup
	// Subagents, when set, makes each turn an orchestrator turn that starts
	// subagents after its own calls (multi-agent).
	Subagents *Subagents
	// Cancel holds user cancels and the parent's timeout (zero: none).
	Cancel Cancel

	// Processes is the number of agent processes (replicas, workers) that
	// run the workload behind the same API keys, each with a scheduler of
	// its own: ≥ 1, and 1 when unset (one process, one scheduler). The
	// sessions (closed model) or arrivals (open model) are divided among
	// them by ProcessShares; each strategy's Quota says how they divide the
	// services' limits.
	Processes int `json:",omitempty"`
	// ProcessShares weighs the load across the processes: one weight > 0
	// per process (nil: even). A closed model's sessions are apportioned by
	// it exactly (ProcessSessions); an open model's arrivals go to process
	// p with probability share_p, drawn per arrival.
	ProcessShares []float64 `json:",omitempty"`
}

// SessionStart is when closed-model session i (0 ≤ i < Sessions) begins:
// i × Ramp ÷ Sessions into the run, rounded down. The product is taken in
// 128 bits, so it cannot overflow (200,000 sessions over a 24 h ramp pass
// the range of a Duration).
func (w *Workload) SessionStart(i int) time.Duration {
	if w.Sessions <= 0 || i <= 0 || w.Ramp <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(i), uint64(w.Ramp))
	if hi >= uint64(w.Sessions) { // i ≥ Sessions: past the ramp
		return w.Ramp
	}
	q, _ := bits.Div64(hi, lo, uint64(w.Sessions))
	return time.Duration(q)
}

// Arrival is an open-model arrival process.
type Arrival string

const (
	// ArrivalPoisson spaces turns by exponential gaps with mean 1/ArrivalRate.
	ArrivalPoisson Arrival = "poisson"
	// ArrivalConstant spaces turns exactly 1/ArrivalRate apart.
	ArrivalConstant Arrival = "constant"
)

// LLMCall is a model call to a service, as one request.
type LLMCall struct {
	// Service names the service the call goes to (a key of [services]).
	Service string
	// Tokens is the call's token cost (prompt + output), drawn per call;
	// charged against the service's TokensPerMinute.
	Tokens Dist[float64]
	// Output is the output part of Tokens, in tokens, drawn per call and
	// capped at that call's Tokens draw (key output_tokens; the zero Dist:
	// none, every token is input). The service paces it by its
	// tokens_per_s and charges it against output_tpm; the rest of Tokens
	// is input.
	Output Dist[float64] `json:",omitzero"`
}

// CallGroup is a set of tool calls a turn emits. Either Tool or Mix is set.
type CallGroup struct {
	// Tool is the tool every call of the group uses ("" when Mix is set).
	Tool string
	// Mix picks each call's tool at random by weight ("" Tool); file order.
	Mix []Weighted
	// Count is how many calls the group emits per turn, drawn per turn and
	// rounded to a whole number ≥ 0.
	Count Dist[float64]
	// Probability is the chance the group appears in a turn at all, in [0, 1]
	// (1 when unset). A group with Probability 0.1 models a model that
	// sometimes emits it.
	Probability float64
	// After lists tools whose calls in the same turn must all succeed before
	// this group's calls start (sched.Call.After). Every name is the tool of
	// another group in the same list (or in its mix), and the lists form no
	// cycle.
	After []string
}

// Weighted is a tool and its relative weight in a mix (> 0).
type Weighted struct {
	Tool   string
	Weight float64
}

// Tools returns the tools the group can emit, in file order.
func (g *CallGroup) Tools() []string {
	if g.Tool != "" {
		return []string{g.Tool}
	}
	names := make([]string, len(g.Mix))
	for i, w := range g.Mix {
		names[i] = w.Tool
	}
	return names
}

// Subagents describes the subagents an orchestrator turn fans out to. Each
// subagent loops iterations (an optional LLM call, then its calls) until it
// reaches MaxIterations, spends TokenBudget, or finishes by chance; the
// orchestrator's turn ends when the last subagent ends.
type Subagents struct {
	// Count is the subagents started per orchestrator turn (whole number ≥ 1
	// per draw).
	Count Dist[float64]
	// MaxIterations caps each subagent's iterations (≥ 1).
	MaxIterations int
	// TokenBudget caps the tokens one subagent may spend over all its
	// iterations, in tokens (0: no budget). Map each iteration onto
	// sched.Turn.TokenBudget = what is left.
	TokenBudget int64
	// FinishProbability is the chance a subagent is done after each
	// iteration, in [0, 1] (0: it always runs MaxIterations).
	FinishProbability float64
	// LLM is the call at the start of every iteration (nil: none).
	LLM *LLMCall
	// Calls are each iteration's tool calls, as Workload.Calls.
	Calls []CallGroup
}

// Cancel describes turns that end early from outside the scheduler.
type Cancel struct {
	// Probability is the chance the user cancels a turn, in [0, 1].
	Probability float64
	// After is when a cancelling user cancels, counted from the turn's start
	// (required when Probability > 0).
	After Dist[time.Duration]
	// ParentTimeout is the deadline the caller puts on each turn, after which
	// it cancels the turn whatever the strategy's own timeouts (0: none).
	ParentTimeout time.Duration
}

// Service is a fake rate-limited downstream service (a fakeapi model). Limits
// that are 0 are not enforced.
type Service struct {
	Name string
	// RequestsPerSecond is the limit on requests in a 1 s window (key rps).
	RequestsPerSecond float64
	// RequestsPerMinute is the limit on requests in a 60 s window (key rpm).
	RequestsPerMinute float64
	// TokensPerMinute is the limit on tokens in a 60 s window (key tpm).
	TokensPerMinute float64
	// MaxConcurrent is the most requests in progress at once; more get 429.
	MaxConcurrent int
	// Limiter is the algorithm enforcing the rates (token bucket by default).
	Limiter Limiter
	// Burst is the token bucket's capacity in requests, for the rps bucket
	// (or the rpm bucket when there is no rps); 0 means one second's worth
	// of the tighter of rps and rpm, at least 1 (the simulator's rule, for
	// the fake service and the clients' own buckets alike). Only set with
	// LimiterTokenBucket.
	Burst float64
	// CountRejected makes 429ed requests count against the limits.
	CountRejected bool
	// Latency is the service time of one request that is admitted.
	Latency Dist[time.Duration]
	// Load makes latency grow with requests in flight (zero: it doesn't).
	Load LoadSensitivity
	// Faults are injected failures (zero: none).
	Faults Faults
	// Headers is the provider style of rate-limit headers and 429 bodies.
	Headers Headers
	// Lying makes the server mislead clients about Retry-After.
	Lying Lying
	// Keys are API keys; when set, each key gets its own quota of every limit
	// above and requests without a known key get 401. The simulated agents
	// (virtual and live) send the first key; the others are for clients of
	// `simbench serve`. Empty: no keys.
	Keys []string
	// Background is unseen traffic from other clients sharing the service's
	// keys (key background); zero: none.
	Background Background
	// NetworkDelay is the one-way time between an agent and the service:
	// the client's dispatch plus the network, drawn afresh for each attempt
	// on its way out (before the service sees it) and again on its way back
	// (before the client sees the answer). DefaultNetworkDelay when the
	// file leaves it out; a constant 0 turns it off.
	NetworkDelay Dist[time.Duration]
	// Generation paces answers as a language model generates them (keys
	// ttft and tokens_per_s); zero: latency alone. Left out of JSON when
	// zero, as the next two are, so a scenario without the keys keeps its
	// digest (sim.ScenarioDigest).
	Generation Generation `json:",omitzero"`
	// InputTokensPerMinute and OutputTokensPerMinute are separate input-
	// and output-token limits per minute (keys input_tpm and output_tpm,
	// Anthropic's ITPM and OTPM); 0: none.
	InputTokensPerMinute  float64 `json:",omitempty"`
	OutputTokensPerMinute float64 `json:",omitempty"`
}

// Generation is the pace of a service's answers (fakeapi.GenerationConfig).
// When either is set, an admitted request takes latency + TTFT + output
// tokens ÷ TokensPerSecond.
type Generation struct {
	// TTFT is the time to first token, drawn per request (Kind "": unset).
	TTFT Dist[time.Duration]
	// TokensPerSecond is the output tokens per second, drawn per request
	// (Kind "": unset).
	TokensPerSecond Dist[float64]
}

// Background is traffic from other clients on the same API key, which the
// simulated agents never see but which spends the key's limits
// (fakeapi.BackgroundConfig): Rate requests per second, in evenly spaced
// groups of Burst, each charging Tokens tokens.
type Background struct {
	// Rate is in requests per second (0: none).
	Rate float64
	// Tokens is the tokens each background request charges against tpm.
	Tokens int64
	// Burst is the requests arriving together (0: 1).
	Burst int64
}

// DefaultNetworkDelay is a service's one-way network delay when the
// scenario file does not set one: a lognormal with a median of 1 ms and a
// 95th percentile of 5 ms, from a client in the provider's region (under a
// millisecond each way) to one in a nearby region (a few milliseconds),
// with the tail a busy client's dispatch adds. scenarios/README.md says why.
var DefaultNetworkDelay = Dist[time.Duration]{Kind: DistLognormal, P50: time.Millisecond, P95: 5 * time.Millisecond}

// ClientKey is the API key the simulated agents send to the service: the
// first of Keys, or "" when the service takes none.
func (s *Service) ClientKey() string {
	if len(s.Keys) == 0 {
		return ""
	}
	return s.Keys[0]
}

// Limiter is a rate-limiting algorithm.
type Limiter string

// The limiter algorithms a service can use, as written in scenario files.
const (
	LimiterTokenBucket   Limiter = "token_bucket"
	LimiterFixedWindow   Limiter = "fixed_window"
	LimiterSlidingWindow Limiter = "sliding_window"
)

// Headers is a provider style of rate-limit response headers.
type Headers string

const (
	// HeadersNone sends no rate-limit headers (and no Retry-After).
	HeadersNone Headers = "none"
	// HeadersOpenAI sends retry-after, retry-after-ms and x-ratelimit-*.
	HeadersOpenAI Headers = "openai"
	// HeadersAnthropic sends retry-after and anthropic-ratelimit-*.
	HeadersAnthropic Headers = "anthropic"
	// HeadersStandard sends only Retry-After, in whole seconds.
	HeadersStandard Headers = "standard"
)

// Lying is how a server misreports its retry delay.
type Lying string

const (
	// LyingNone tells the truth.
	LyingNone Lying = ""
	// LyingShort sends a Retry-After shorter than the real wait.
	LyingShort Lying = "short"
	// LyingMissing sends 429s without Retry-After.
	LyingMissing Lying = "missing"
)

// LoadSensitivity makes latency grow with load: a request admitted with n
// requests in flight takes latency × (1 + Factor × max(0, n − Knee)).
type LoadSensitivity struct {
	// Knee is the requests in flight up to which latency is unaffected (≥ 0).
	Knee int
	// Factor is the fractional latency increase per request in flight above
	// Knee (0: no load sensitivity).
	Factor float64
}

// Faults are failures the service injects. Rates are fractions of admitted
// requests in [0, 1]; ErrorRate + HangRate + ResetRate ≤ 1.
type Faults struct {
	// ErrorRate is the fraction of requests answered 500.
	ErrorRate float64
	// HangRate is the fraction that never answer until the client gives up.
	HangRate float64
	// ResetRate is the fraction whose connection is reset.
	ResetRate float64
	// SlowFirstByte delays the response headers of some requests.
	SlowFirstByte SlowFirstByte
	// Overload describes periodic episodes of 529 "overloaded" answers.
	Overload Overload
	// Conflict is the probability, in [0, 1], that a write arriving while
	// another write to the same resource is in service fails with 409
	// Conflict after its latency (the first arrival wins), as optimistic
	// concurrency refuses a stale commit. 0: overlapping writes go through
	// and count as write races. The key takes true (1) or false (0) too.
	Conflict float64
}

// SlowFirstByte delays the first byte of a fraction Rate of responses by Delay.
type SlowFirstByte struct {
	Rate  float64
	Delay time.Duration
}

// Overload describes 529 "overloaded" episodes, as fakeapi.OverloadConfig:
// episodes last Length, the gaps between them are exponentially distributed
// with mean Every, and during an episode a fraction Rate of requests get 529
// (1 when unset). Zero Every: no episodes.
type Overload struct {
	Every  time.Duration
	Length time.Duration
	Rate   float64
}

// Tool maps a tool call onto a service.
type Tool struct {
	Name string
	// Service names the service the tool calls (a key of [services]).
	Service string
	// Tokens is the call's token cost, drawn per call; charged against the
	// service's TokensPerMinute and reserved by sched (sched.Call.Tokens).
	Tokens Dist[float64]
	// Kind is read or write; writes to one resource are serialized by sched
	// and raced by unbounded strategies.
	Kind Kind
	// Resource is the key writes are serialized on ("" : sched's default,
	// the service name). Only set on writes.
	Resource string
	// Idempotent allows a write to be retried. Only set on writes.
	Idempotent bool
	// ResourceFrom says where a served write request's resource key comes
	// from: "path:N" (the Nth path segment after the tool's path),
	// "json:FIELD" (a top-level field of the JSON body) or "header:NAME"
	// (a request header); "" keeps the server's default. Only set on
	// writes.
	ResourceFrom string
}

// Kind says whether a tool reads or writes.
type Kind string

// The kinds of tool, as written in scenario files.
const (
	KindRead  Kind = "read"
	KindWrite Kind = "write"
)

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
	// FanOutMode says what happens to the rest.
	FanOut     int
	FanOutMode FanOutMode
	// Join says how one failure affects the rest of a turn.
	Join Join
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
	// Algorithm is "aimd" or "gradient".
	Algorithm AdaptiveAlgorithm
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

// AdaptiveAlgorithm names an adaptive limit's algorithm.
type AdaptiveAlgorithm string

// The adaptive algorithms, as written in scenario files.
const (
	// AdaptiveAIMD grows the limit by one per round trip and cuts it on a 429.
	AdaptiveAIMD AdaptiveAlgorithm = "aimd"
	// AdaptiveGradient follows the ratio of long- to short-term latency.
	AdaptiveGradient AdaptiveAlgorithm = "gradient"
)

// Retry is a retry policy (sched.RetryPolicy).
type Retry struct {
	// Backoff is the delay policy when the server gives no delay. Its values
	// are the names sched.ParseBackoff accepts.
	Backoff Backoff
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
	OverMaxRetryAfter OverMaxRetryAfter
}

// Backoff names a backoff policy, spelled as sched.Backoff.String.
type Backoff string

// The backoff policies, as written in scenario files (sched.ParseBackoff reads them).
const (
	BackoffNone               Backoff = "none"
	BackoffConstant           Backoff = "constant"
	BackoffExponential        Backoff = "exponential"
	BackoffFullJitter         Backoff = "full-jitter"
	BackoffEqualJitter        Backoff = "equal-jitter"
	BackoffDecorrelatedJitter Backoff = "decorrelated-jitter"
)

// OverMaxRetryAfter says what happens to a server delay above MaxRetryAfter.
type OverMaxRetryAfter string

// What to do with a server delay above max_retry_after, as written in scenario files.
const (
	OverMaxClamp OverMaxRetryAfter = "clamp"
	OverMaxFail  OverMaxRetryAfter = "fail"
)

// FanOutMode says what happens to a turn's calls beyond Strategy.FanOut.
type FanOutMode string

const (
	// FanOutBatch makes them wait for earlier calls of the turn.
	FanOutBatch FanOutMode = "batch"
	// FanOutTruncate fails them at once.
	FanOutTruncate FanOutMode = "truncate"
)

// Join says how one failed call affects the rest of its turn.
type Join string

const (
	// JoinPartial returns every result, failures included.
	JoinPartial Join = "partial"
	// JoinAllOrNothing cancels the siblings at the first failure.
	JoinAllOrNothing Join = "all-or-nothing"
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

// Dist is a probability distribution of durations (Dist[time.Duration]) or of
// amounts such as call counts and tokens (Dist[float64]). Only the parameters
// of Kind are set; the loader rejects the others.
type Dist[T time.Duration | float64] struct {
	Kind DistKind
	// Value is the constant's value.
	Value T
	// Min and Max bound a uniform distribution. Min is a Pareto's scale.
	// For normal, lognormal, exponential and Pareto, Max > 0 is an optional
	// cap on draws (0: none).
	Min, Max T
	// Mean and Stddev set a normal distribution (draws below 0 count as 0);
	// Mean alone sets an exponential one.
	Mean, Stddev T
	// P50 and P95 set a lognormal distribution by its median and 95th
	// percentile: mu = ln P50, sigma = ln(P95/P50) / 1.6448536.
	P50, P95 T
	// Alpha is a Pareto's shape (> 0).
	Alpha float64
	// File is the empirical distribution's file as written in the scenario,
	// relative to the scenario file; Samples are its values in file order.
	File    string
	Samples []T
}

// DistKind names a distribution family.
type DistKind string

// The distribution families, as written in scenario files.
const (
	DistConstant    DistKind = "constant"
	DistUniform     DistKind = "uniform"
	DistNormal      DistKind = "normal"
	DistLognormal   DistKind = "lognormal"
	DistExponential DistKind = "exponential"
	DistPareto      DistKind = "pareto"
	DistEmpirical   DistKind = "empirical"
)

// Upper returns the largest draw of d that the loader allows for, as a
// float64 in d's unit (nanoseconds for durations): the value of a constant,
// the max of a uniform, the largest sample of an empirical distribution, and
// for the unbounded families (normal, lognormal, exponential, Pareto) the
// draw exceeded once in 10^12 draws, or Max when that is smaller. The loader
// keeps Upper within each key's bound (MaxDuration, MaxCallsPerTurn,
// MaxSubagents, MaxTokensPerCall); a consumer that clamps its draws to Upper
// never sees more than what was validated. It is 0 for the zero Dist.
func (d Dist[T]) Upper() float64 {
	var up float64
	switch d.Kind {
	case DistConstant:
		return float64(d.Value)
	case DistUniform:
		return float64(d.Max)
	case DistEmpirical:
		for _, s := range d.Samples {
			up = max(up, float64(s))
		}
		return up
	case DistNormal:
		up = float64(d.Mean) + tailZ*float64(d.Stddev)
	case DistLognormal:
		up = float64(d.P50) * math.Pow(float64(d.P95)/float64(d.P50), tailZ/lognormalZ95)
	case DistExponential:
		up = float64(d.Mean) * math.Log(tailOdds)
	case DistPareto:
		up = float64(d.Min) * math.Pow(tailOdds, 1/d.Alpha)
	default:
		return 0
	}
	if d.Max > 0 {
		up = min(up, float64(d.Max))
	}
	if math.IsNaN(up) {
		return math.Inf(1)
	}
	return max(up, 0)
}

// lognormalZ95 is the standard normal's 95th percentile, which relates a
// lognormal's P95 to its P50.
const lognormalZ95 = 1.6448536

// Constant returns the distribution that always gives v.
func Constant[T time.Duration | float64](v T) Dist[T] {
	return Dist[T]{Kind: DistConstant, Value: v}
}

// Info names a built-in scenario.
type Info struct {
	Name        string // without .toml
	Description string // one line
}
