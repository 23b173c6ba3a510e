package fakeapi

import (
	"fmt"
	"time"

	"github.com/simbench/simbench/fakeapi/internal/wire"
	"github.com/simbench/simbench/spec"
)

// ID names one admitted request until Finish or Cancel. The zero ID is never
// issued: rejected requests carry it.
type ID uint64

// Kind is what the service does with a request.
type Kind uint8

// Kinds of decision. The first four and KindConflict are admissions (the
// request holds a concurrency slot until Finish or Cancel); the rest are
// immediate rejections.
const (
	// KindOK: a successful response after Latency.
	KindOK Kind = iota
	// KindServerError: a 5xx response after Latency.
	KindServerError
	// KindHang: no response ever; the driver calls Cancel when the client gives up.
	KindHang
	// KindReset: the connection is reset without a response after Latency.
	KindReset
	// KindRateLimited: 429 at once; Limit says which limit, RetryAfter what the client is told.
	KindRateLimited
	// KindOverloaded: 529 at once, during an overload episode.
	KindOverloaded
	// KindUnauthorized: 401 at once, the API key is missing or unknown.
	KindUnauthorized
	// KindTooLarge: 413 at once, the body or the token count can never be accepted.
	KindTooLarge
	// KindBadRequest: 400 at once, the body is malformed.
	KindBadRequest
	// KindConflict: a 409 after Latency; a write that arrived while another
	// write to its resource was in service lost the race to commit (see
	// spec.Faults.Conflict).
	KindConflict
	// KindQuotaExhausted: refused at once, the account's credit is spent
	// (spec.Faults.Credit): OpenAI's 429 insufficient_quota, which a client
	// must not retry.
	KindQuotaExhausted
	// KindContextTooLong: 400 at once, the input exceeds the model's
	// context (spec.Faults.ContextWindow).
	KindContextTooLong
	numKinds
)

// kindNames are the kinds' names; those the provider shapes word
// differently are theirs (package wire).
var kindNames = [numKinds]string{"ok", "server_error", "hang", "reset", "rate_limited", wire.KindOverloaded, "unauthorized", wire.KindTooLarge, "bad_request", "conflict",
	wire.KindQuotaExhausted, wire.KindContextTooLong}

// String returns the kind's snake_case name, as used in Stats.Errors.
func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Limit names the limit that rejected a request.
type Limit uint8

// Limits.
const (
	// LimitNone: the decision was not a 429.
	LimitNone Limit = iota
	// LimitRPS: requests per second.
	LimitRPS
	// LimitRPM: requests per minute.
	LimitRPM
	// LimitTPM: tokens per minute.
	LimitTPM
	// LimitConcurrency: requests in flight.
	LimitConcurrency
	// LimitITPM: input tokens per minute (ServiceConfig.InputTPM).
	LimitITPM
	// LimitOTPM: output tokens per minute (ServiceConfig.OutputTPM).
	LimitOTPM
	// LimitRPD: requests per day (spec.Daily.RPD); the wait is the time
	// until the daily reset.
	LimitRPD
	// LimitTPD: tokens per day (spec.Daily.TPD); the wait is the time
	// until the daily reset.
	LimitTPD
	numLimits
)

// limitNames are the limits' names; the token limits' are the provider
// shapes' (package wire).
var limitNames = [numLimits]string{"none", "rps", "rpm", wire.LimitTPM, "concurrency", wire.LimitITPM, wire.LimitOTPM, "rpd", "tpd"}

// String returns the limit's name: "rps", "rpm", "tpm", "concurrency",
// "itpm", "otpm", "rpd", "tpd" or "none".
func (l Limit) String() string {
	if l < numLimits {
		return limitNames[l]
	}
	return fmt.Sprintf("limit(%d)", uint8(l))
}

// Request is one arrival at the service.
type Request struct {
	// Client tells clients apart for early-retry accounting; the server uses
	// the API key plus the x-simbench-client header. Requests with the same
	// Client share one retry deadline.
	Client string
	// Key is the API key; it must be one of ServiceConfig.Keys when those are set.
	Key string
	// Method and Path are the HTTP method and path (informational; Path is
	// the write resource when Resource is empty).
	Method, Path string
	// Resource names what a write modifies; "" means Path.
	Resource string
	// Tokens are the input tokens and OutputTokens the output tokens the
	// response will carry; both are charged against TPM at admission.
	Tokens, OutputTokens int64
	// Generated is the output tokens the answer will have when the driver
	// knows it before admission (the server's fake model does), which
	// paces generation (ServiceConfig.Generation); 0: OutputTokens. The
	// limits are still charged OutputTokens, until SettleOutput.
	Generated int64
	// Write marks a request that modifies Resource; overlapping writes to one
	// resource count as write races, or fail with 409 when the service
	// detects conflicts (spec.Faults.Conflict).
	Write bool
	// Bytes is the body size in bytes (413 past ServiceConfig.MaxBodyBytes).
	Bytes int64
	// Malformed marks a body that failed to decode (400).
	Malformed bool
	// Retry says what the client told about this request being a retry; the
	// zero value, RetryUnknown, keeps the rule of a client that sends one
	// request at a time (see Decision.EarlyRetry).
	Retry RetryMark
}

// RetryMark is what a request says about being a retry.
type RetryMark uint8

// Retry marks.
const (
	// RetryUnknown: nothing is known; any request from a client that was
	// told to wait, before its latest delay has elapsed, is an early retry.
	// Right for a client that sends one request at a time (the simulator's).
	RetryUnknown RetryMark = iota
	// RetryFresh: the client says this is a first attempt (such as
	// x-stainless-retry-count: 0); it is never an early retry.
	RetryFresh
	// RetryMarked: the client says this repeats an earlier request (such as
	// x-stainless-retry-count above 0). It is early when every rate-limited
	// request of its client still pending a retry was told to wait past now,
	// so parallel requests on one client that each honour their own delay
	// never count.
	RetryMarked
)

// Quota is what a rate-limit header reports about one limit.
type Quota struct {
	// Limit is the published limit per window; 0 means there is no such limit.
	Limit int64
	// Remaining is what could be admitted now.
	Remaining int64
	// Reset is how long until the limit is back to its initial state.
	Reset time.Duration
}

// Decision is what the service does with one request.
type Decision struct {
	// ID is non-zero for admissions (Kind OK, ServerError, Hang, Reset,
	// Conflict); the driver must later call Finish or Cancel with it.
	ID ID
	// Kind is what happens; Status the HTTP status the client sees (0 for
	// Hang and Reset, which send none).
	Kind   Kind
	Status int
	// Limit is the binding limit of a 429 (the one with the longest wait).
	Limit Limit
	// Level is the level of nested limits whose Limit refused a 429
	// (spec.Config.Projects), and Scope names it: the API key, the
	// project, or the service for the organisation. LevelNone and "" on
	// a service without projects.
	Level Level
	Scope string
	// Wait is the exact time from arrival until the limiter would admit this
	// request (429), or until the overload episode ends (529).
	Wait time.Duration
	// RetryAfter is the delay the client is told, after the header style's
	// rounding (milliseconds for openai, seconds otherwise, rounded up) and
	// any lie; HasRetryAfter says whether the response carries one.
	RetryAfter    time.Duration
	HasRetryAfter bool
	// RetryIn is where a 429 states RetryAfter besides the rate-limit
	// headers: spec.Faults.RetryDelayBody ("": headers only).
	RetryIn spec.RetryDelayBody
	// Latency is the time from arrival until the response is complete, for
	// admissions other than Hang (including any stall it overlaps); for a
	// rejection it is 0, or during a stall the time until the stall ends,
	// when the answer is sent.
	Latency time.Duration
	// SlowFirstByte says Latency includes the configured slow-first-byte delay
	// before any byte of the response.
	SlowFirstByte bool
	// Tokens is the token count charged (Request.Tokens + OutputTokens).
	Tokens int64
	// InputTokens is the request's input tokens, set on a
	// KindContextTooLong decision, which its message quotes.
	InputTokens int64
	// Requests and TokenQuota feed the rate-limit headers: the request limit
	// (RPM when set, else RPS) and TPM, after this decision.
	Requests, TokenQuota Quota
	// InputTokenQuota and OutputTokenQuota are the input- and output-token
	// limits (ServiceConfig.InputTPM and OutputTPM) after this decision;
	// zero Limit when the service has none.
	InputTokenQuota, OutputTokenQuota Quota
	// DailyQuota is the daily limit that refused a 429 of LimitRPD or
	// LimitTPD (spec.Daily): the limit a day, what is left of it, and the
	// time until it resets; zero on every other decision.
	DailyQuota Quota
	// FirstToken is the time from arrival until the first token of an
	// admission's answer, when the service paces generation
	// (ServiceConfig.Generation); Latency - FirstToken is then the time the
	// output tokens take. 0 when generation is not paced.
	FirstToken time.Duration
	// EarlyRetry says the client came back before a retry delay it was given
	// had elapsed: for Request.Retry RetryUnknown, before its latest delay;
	// for RetryMarked, before the earliest delay of its rate-limited
	// requests not yet retried (each marked retry answers one of them);
	// never for RetryFresh.
	EarlyRetry bool
	// WriteRace says this write overlaps another in-flight write to its
	// resource and was let through (a conflict is not a race: it commits
	// nothing).
	WriteRace bool
}

// Daily reports whether d is a 429 of a spent daily quota (LimitRPD or
// LimitTPD), whose retry delay is the time until the daily reset.
func (d *Decision) Daily() bool {
	return d.Kind == KindRateLimited && (d.Limit == LimitRPD || d.Limit == LimitTPD)
}

// Admitted reports whether the request holds a slot until Finish or Cancel.
func (d Decision) Admitted() bool { return d.ID != 0 }

// quotas are d's quotas: Requests, TokenQuota, InputTokenQuota and
// OutputTokenQuota.
func (d *Decision) quotas() [4]*Quota {
	return [4]*Quota{&d.Requests, &d.TokenQuota, &d.InputTokenQuota, &d.OutputTokenQuota}
}
