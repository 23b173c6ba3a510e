package trace

// FormatVersion is the version of the trace format this package writes and
// reads, carried by every header line as "simbench_trace".
const FormatVersion = 1

// Outcome classes of an attempt: the names of sched.Class (its String
// method), so a driver writes o.Class.String() and a reader compares with
// these constants. An attempt timeout and a connection reset are
// OutcomeTransient, as the scheduler classes them.
const (
	OutcomeSuccess        = "success"         // the attempt produced a value
	OutcomeRateLimited    = "rate_limited"    // 429 or equivalent; retried after the server's delay
	OutcomeOverloaded     = "overloaded"      // 529 or 503; retried with backoff
	OutcomeQuotaExhausted = "quota_exhausted" // the account's quota is spent; not retried
	OutcomeTooLarge       = "too_large"       // 413 or a context too long; not retried
	OutcomeTransient      = "transient"       // 5xx, connection reset or attempt timeout; retried
	OutcomePermanent      = "permanent"       // another 4xx or a tool error; not retried
	OutcomeCancelled      = "cancelled"       // the client stopped waiting (turn cancel, deadline, sibling failure)
	OutcomeConflict       = "conflict"        // 409, a write another write beat to its resource; retried with backoff
)

// Outcomes lists every outcome class, in sched.Class order.
var Outcomes = []string{
	OutcomeSuccess, OutcomeRateLimited, OutcomeOverloaded, OutcomeQuotaExhausted,
	OutcomeTooLarge, OutcomeTransient, OutcomePermanent, OutcomeCancelled,
	OutcomeConflict,
}

// Kinds of call a record can describe.
const (
	KindTool  = "tool"  // a tool call (OpenTelemetry's execute_tool)
	KindModel = "model" // a model call (OpenTelemetry's chat)
)

// Record is one attempt of one call: one line of a trace. Times are seconds
// from the start of the run (virtual time in a simulated run, wall-clock
// time since the run began in a live one), as float64; the writer rounds
// them to the microsecond. The zero value is not a valid record: Service,
// Outcome and End ≥ Start are required (see [Record.Check]).
type Record struct {
	// Session numbers the agent session (closed model) from 1; 0 means the
	// turn belongs to no session (open model). JSON "session", left out
	// when 0.
	Session int64
	// Turn identifies the turn within its section of the trace (the
	// scheduler's TurnID). Every attempt of a turn's calls carries it.
	// JSON "turn".
	Turn int64
	// Call is the call's id within its turn (sched.Call.ID). Attempts of
	// one call share it. JSON "call", left out when empty.
	Call string
	// Kind is KindTool or KindModel; "" reads as KindTool. JSON "kind",
	// left out for tool calls.
	Kind string
	// Service names the service the attempt went to. JSON "service";
	// required.
	Service string
	// Tool names the tool of a tool call ("" for a model call). JSON
	// "tool", left out when empty.
	Tool string
	// Attempt numbers the attempt within its call, from 1. JSON "attempt";
	// 1 when left out.
	Attempt int
	// Intended is when the attempt was due, in seconds: the call's
	// submission for attempt 1, the end of the retry delay for a retry.
	// Start − Intended is the time it queued in the client (concurrency
	// caps, token buckets). JSON "intended"; Start when left out.
	Intended float64
	// Start is when the attempt was sent, in seconds. JSON "start";
	// required.
	Start float64
	// End is when its outcome was known (response, timeout, cancel), in
	// seconds, at least Start. JSON "end"; required.
	End float64
	// Outcome is the attempt's outcome class, one of [Outcomes]. JSON
	// "outcome"; required.
	Outcome string
	// Status is the HTTP status of the response, 0 when there was none
	// (timeout, reset, cancel). JSON "status", left out when 0.
	Status int
	// Tokens is the tokens the attempt used (usage reported by the
	// service, or the reservation when none was reported), prompt and
	// output together. JSON "tokens", left out when 0.
	Tokens int64
	// RetryAfter is the retry delay the server asked for in this
	// attempt's response (Retry-After, retry-after-ms), in seconds, valid
	// when HasRetryAfter is set. JSON "retry_after", present exactly when
	// HasRetryAfter (0 is a delay of 0).
	RetryAfter    float64
	HasRetryAfter bool
	// RetryDelay is, for attempt 2 and later, the delay the client chose
	// before this attempt, in seconds: from the previous attempt's End to
	// this attempt's Intended (backoff, or the server's delay when
	// honoured). A RetryDelay below the previous attempt's RetryAfter is
	// an early retry. JSON "retry_delay", left out when 0.
	RetryDelay float64
	// LimitRequests and LimitTokens are the service's limits as its
	// response announced them (x-ratelimit-limit-requests and
	// x-ratelimit-limit-tokens, or anthropic-ratelimit-*-limit), per
	// minute; 0 when not announced. JSON "limit_requests" and
	// "limit_tokens", left out when 0.
	LimitRequests float64
	LimitTokens   float64
}

// Header starts a section of a trace: the records after it, up to the next
// header, come from one run of one strategy. It is the line holding the
// key "simbench_trace". Session, turn and call ids are scoped to their
// section.
type Header struct {
	// Format is the format version, FormatVersion. JSON "simbench_trace".
	Format int `json:"simbench_trace"`
	// Scenario names the scenario run. JSON "scenario".
	Scenario string `json:"scenario,omitempty"`
	// Strategy names the strategy run. JSON "strategy".
	Strategy string `json:"strategy,omitempty"`
	// Seed is the run's seed. JSON "seed".
	Seed uint64 `json:"seed,omitempty"`
	// Mode is "virtual" for a simulated run, "live" for a real-time one,
	// or anything naming where a converted trace came from. JSON "mode".
	Mode string `json:"mode,omitempty"`
	// Limits are the services' limits, by service name, when known: as
	// configured for a simulated run, as observed in the rate-limit
	// headers of a live one. JSON "limits".
	Limits map[string]Limits `json:"limits,omitempty"`
}

// Limits are one service's rate limits, each 0 when unknown or not
// enforced, in the units of the scenario keys of the same names.
type Limits struct {
	// RPS is requests per second.
	RPS float64 `json:"rps,omitempty"`
	// RPM is requests per minute.
	RPM float64 `json:"rpm,omitempty"`
	// TPM is tokens per minute.
	TPM float64 `json:"tpm,omitempty"`
	// MaxConcurrent is the most requests in progress at once.
	MaxConcurrent int `json:"max_concurrent,omitempty"`
}
