package spec

import "time"

// Defaults applied by WithDefaults when the corresponding field is zero.
const (
	// DefaultAlgorithm is the limiter algorithm when Config.Algorithm is empty.
	DefaultAlgorithm = TokenBucket
	// DefaultHeaderStyle is the header style when Config.Headers is empty:
	// a Config written in Go is a fake OpenAI-style provider (its API
	// follows, see Config.API) unless it says otherwise. A scenario file
	// that names no headers means a service that sends none, so its loader
	// sets HeadersNone explicitly (scenarios.Service.Headers): a file's
	// service is as often a tool API without rate-limit headers as a
	// model provider, and the file format has documented that default
	// from the start. The two differ on purpose: one default would change
	// either every Go caller's endpoints and statuses or the headers,
	// routes and 529/503 statuses of every scenario file that leaves the
	// key out.
	DefaultHeaderStyle = HeadersOpenAI
	// DefaultConcurrencyRetryAfter is the retry delay given with a 429 for
	// the concurrency cap, whose true wait depends on other requests
	// finishing.
	DefaultConcurrencyRetryAfter = time.Second
	// DefaultLieFactor scales the true wait under LieShort.
	DefaultLieFactor = 0.25
	// DefaultErrorStatus is the status of injected server errors.
	DefaultErrorStatus = 500
	// DefaultMaxBodyBytes caps request bodies in bytes (413 past it).
	DefaultMaxBodyBytes = 1 << 20
	// DefaultOutputTokens is the completion tokens the server generates for
	// a request that names no max_tokens.
	DefaultOutputTokens = 16
)

// MaxLimit bounds every rate limit and burst, in units over the limit's
// own window (rps a second; rpm, tpm and the bursts a minute): 10^15, a
// thousand times an enterprise token limit of 10^12 a minute. The fake
// service's token buckets count units × nanoseconds exactly for any limit
// an int64 holds (fakeapi keeps them as whole units and a remainder); the
// bound keeps a limit scaled by a factor, or a per-second limit turned
// into a per-minute one (MaxRPS), within a float64's exact integers
// (2^53 ≈ 9 × 10^15).
const MaxLimit = 1_000_000_000_000_000

// MaxRPS bounds rps, so that rps × 60, the limit per minute the simulator
// turns it into, stays within MaxLimit.
const MaxRPS = MaxLimit / 60

// MaxBackgroundRate bounds Background.Rate, in requests per second, so that
// the work the model does per arrival stays bounded.
const MaxBackgroundRate = 10_000

// MaxBackgroundBurst bounds Background.Burst, in requests.
const MaxBackgroundBurst = 1_000_000

// BackgroundHorizon is how far before an arrival background traffic is
// still accrued; earlier background requests are skipped.
const BackgroundHorizon = 10 * time.Minute

// BackgroundPatience bounds the background requests waiting for room: at
// most this long's worth of them at the background rate, and at least one
// group.
const BackgroundPatience = 10 * time.Second

// MinTokensPerSecond is the slowest generation rate a draw gives, in
// output tokens per second.
const MinTokensPerSecond = 0.001

// MaxTokensPerSecond bounds every parameter of Generation.TokensPerSecond,
// in tokens per second, so that the model's arithmetic stays finite.
const MaxTokensPerSecond = 1e12

// Config is one fake service: what a scenario's [services.NAME] table
// says, resolved into whole-number limits, and what fakeapi.NewModel and
// its HTTP server build from. Zero limits mean no limit; the zero value
// (with a Name) is an unlimited, zero-latency, fault-free service.
type Config struct {
	// Name identifies the service; on a shared listener it is the path prefix.
	Name string
	// RPS and RPM are requests per second and per minute; TPM is tokens per
	// minute (input plus output tokens, charged at admission).
	RPS, RPM, TPM int64
	// MaxConcurrent caps requests in flight (429 with limit "concurrency").
	MaxConcurrent int
	// Algorithm enforces RPS, RPM and TPM ("": DefaultAlgorithm; key limiter).
	Algorithm Algorithm
	// Burst is the token-bucket capacity, in requests, of the RPS bucket (or
	// of the RPM bucket when RPS is 0); 0 is one window's worth. Only with
	// TokenBucket.
	Burst int64
	// TokenBurst is the token-bucket capacity of the TPM bucket, in tokens; 0
	// is TPM. A request needing more tokens than this gets 413.
	TokenBurst int64
	// CountRejected makes rejected requests count against the request limits
	// (RPS and RPM), as some providers do: a client that keeps hammering
	// keeps itself locked out.
	CountRejected bool
	// ConcurrencyRetryAfter is the retry delay given with a concurrency 429
	// (0: DefaultConcurrencyRetryAfter).
	ConcurrencyRetryAfter time.Duration
	// Latency is the time an admitted request takes, from arrival to the
	// last byte of the response (Kind "": a constant 0).
	Latency Dist[time.Duration]
	// Load makes latency grow with the requests in flight (zero: it doesn't).
	Load Load
	// Faults injects failures.
	Faults Faults
	// Headers selects the rate-limit header style ("": DefaultHeaderStyle,
	// openai; a scenario's service is never "", its file's default being
	// HeadersNone).
	// It also sets the rounding of the advertised retry delay: milliseconds
	// for HeadersOpenAI (retry-after-ms), whole seconds otherwise.
	Headers HeaderStyle
	// API selects endpoints and body shapes on the server ("": openai or
	// anthropic to match Headers, generic otherwise). A gemini service's
	// Headers default to HeadersStandard, and its 429s state their delay in
	// the body only (Faults.RetryDelayBody "": RetryDelayInstead).
	API APIStyle
	// Lie misleads clients about the retry delay (key lying); LieFactor
	// scales the true wait under LieShort (0: DefaultLieFactor).
	Lie       LieMode
	LieFactor float64
	// Keys, when not empty, requires one of these API keys (401 otherwise)
	// and gives each its own limits.
	Keys []Key
	// Projects, when not empty, nests the limits: organisation ⊃ project
	// ⊃ key (OpenAI's projects, Anthropic's workspaces). The service's
	// own limits (RPS, RPM, TPM, InputTPM, OutputTPM, MaxConcurrent) are
	// then the organisation's, shared by every key; a project's are shared
	// by its keys (Key.Project); a key's are its own, and a limit a key or
	// project leaves at 0 sets none at that level. A request is admitted
	// only when every level it belongs to has room, and then spends each
	// level's limits once. Without projects a key's zero limit takes the
	// service's value, in a bucket of its own (one level).
	Projects []Project
	// MaxBodyBytes caps request bodies in bytes (0: DefaultMaxBodyBytes).
	MaxBodyBytes int64
	// OutputTokens is what the server generates for a request that names no
	// max_tokens (0: DefaultOutputTokens). The model takes output tokens
	// from its request instead.
	OutputTokens int64
	// KeepWorkingOnDisconnect makes the server finish a request whose client
	// disconnected, as many real backends do, and count its work as wasted;
	// otherwise the server stops and counts it as cancelled by the client.
	KeepWorkingOnDisconnect bool
	// DedupeWrites makes the server apply a write once per Idempotency-Key:
	// a write repeating a key already applied is answered at once with 200
	// and applies nothing (key dedupe_writes). Without it, the server counts
	// such a write as applied twice.
	DedupeWrites bool `json:",omitempty"`
	// ModelName is the "model" echoed in provider-shaped responses when the
	// request names none ("": "simbench-" + Name).
	ModelName string
	// Background is unseen traffic from other clients sharing the service's
	// API keys (zero: none).
	Background Background
	// Generation paces the answer as a language model generates it (zero:
	// Latency alone).
	Generation Generation
	// InputTPM and OutputTPM are separate input-token and output-token
	// per-minute limits (Anthropic's ITPM and OTPM; 0: none), each with a
	// bucket of its own beside TPM. Input tokens are charged at admission;
	// output tokens are charged at admission as the request's max_tokens and
	// settled to what the answer carries.
	InputTPM, OutputTPM int64
	// Daily is a per-day quota of requests and tokens, reset at a time of
	// day in a time zone (zero: none).
	Daily Daily `json:",omitzero"`
}

// Load makes latency grow with load: a request admitted while n others are
// in flight takes its drawn latency × (1 + Factor × max(0, n − Knee)).
type Load struct {
	// Knee is the requests in flight up to which latency is unaffected (≥ 0).
	Knee int
	// Factor is the fractional latency increase per request in flight above
	// Knee (0: no load sensitivity).
	Factor float64
}

// Faults are failures the service injects. Rates are probabilities in
// [0, 1] drawn independently per admitted request; ErrorRate + HangRate +
// ResetRate ≤ 1. The zero value injects nothing.
type Faults struct {
	// ErrorRate is the fraction of admitted requests answered with
	// ErrorStatus after their latency.
	ErrorRate float64
	// ErrorStatus is the 5xx status of those errors (0: DefaultErrorStatus).
	ErrorStatus int `json:",omitempty"`
	// HangRate is the fraction of admitted requests that never answer; they
	// hold their concurrency slot until the client gives up.
	HangRate float64
	// ResetRate is the fraction of admitted requests whose connection is
	// reset, without a response, after their latency.
	ResetRate float64
	// SlowFirstByte delays the first byte of some responses.
	SlowFirstByte SlowFirstByte
	// Overload describes 529 "overloaded" episodes.
	Overload Overload
	// Conflict is the probability, in [0, 1], that a write arriving while
	// another write to the same resource is in service fails with 409
	// Conflict after its latency, as optimistic concurrency refuses a stale
	// commit; the write that arrived first wins. 0 detects no conflicts:
	// overlapping writes are counted as races.
	Conflict float64
	// Credit is the tokens the account may spend in all (0: unlimited),
	// shared by every key: once admitted requests have been charged that
	// many, every request is refused at once as insufficient_quota (OpenAI
	// API style: 429 with code "insufficient_quota"; Anthropic: 400
	// invalid_request_error, "Your credit balance is too low", as Anthropic
	// refuses an account without credit; generic: 429 with kind
	// "insufficient_quota"). A client must not retry it: waiting does not
	// refill a spent balance. A reset gives the credit back.
	Credit int64 `json:",omitempty"`
	// ContextWindow is the model's context in input tokens (0: unlimited): a
	// request with more input tokens is refused at once with 400, spending no
	// quota (OpenAI API style: code "context_length_exceeded"; Anthropic:
	// invalid_request_error "prompt is too long: N tokens > W maximum").
	// Retrying the same request cannot succeed.
	ContextWindow int64 `json:",omitempty"`
	// RetryDelayBody carries a 429's retry delay in its JSON body, as Google
	// APIs do: error.details[] holds a google.rpc.RetryInfo whose retryDelay
	// is "Ns" ("": headers only, RetryDelayBesides, RetryDelayInstead).
	RetryDelayBody RetryDelayBody `json:",omitempty"`
}

// SlowFirstByte delays the response of a fraction Rate of admitted
// requests by Delay (added to the latency).
type SlowFirstByte struct {
	// Rate is the fraction, 0–1, of admitted requests delayed.
	Rate float64
	// Delay is the time added to each delayed request's latency.
	Delay time.Duration
}

// Overload describes 529 "overloaded" episodes. The zero value has none.
type Overload struct {
	// Every is the mean time between the end of one episode and the start of
	// the next (exponentially distributed); 0 disables episodes.
	Every time.Duration
	// Length is how long each episode lasts.
	Length time.Duration
	// Rate is the fraction of arrivals rejected with 529 during an episode
	// (0 means 1: all of them).
	Rate float64
}

// Key is one tenant: an API key and its own quotas. Zero limits take the
// service's values, except under nested limits (Config.Projects), where
// they set none at the key's level. One tenant's traffic never spends
// another's own quota (under nested limits, keys share their project's and
// the organisation's).
type Key struct {
	// Key is the API key (Authorization: Bearer KEY, or x-api-key: KEY).
	Key string
	// RPS, RPM and TPM are requests per second, requests per minute and
	// tokens per minute for this key.
	RPS, RPM, TPM int64
	// MaxConcurrent caps this key's requests in flight.
	MaxConcurrent int
	// Project names the project (Config.Projects) the key belongs to; ""
	// puts it directly under the organisation.
	Project string
}

// Project is a group of API keys with limits shared by its keys, inside
// the organisation (Config.Projects). Zero limits set none at the
// project's level.
type Project struct {
	// Name names the project in Key.Project and in the 429s it causes.
	Name string
	// RPS, RPM and TPM are requests per second, requests per minute and
	// tokens per minute that the project's keys share.
	RPS, RPM, TPM int64
	// MaxConcurrent caps the project's requests in flight, all keys together.
	MaxConcurrent int
}

// Background is traffic from other clients on the same key, which the
// driver never sends and never sees answered. Its requests arrive in
// groups of Burst, evenly spaced, one group every Burst/Rate seconds from
// the epoch (a steady stream when Burst is 1, a batch job when it is
// large), on every key (or on the service's single tenant). Each spends its
// key's request and token limits as a client request does, but the other
// clients pace themselves: a background request that finds no room waits,
// and the waiting ones take the room that frees, oldest first and ahead of
// later arrivals, the driver's included. At most BackgroundPatience worth
// of them wait; past that the oldest gives up. They take no concurrency
// slot. Background requests more than BackgroundHorizon before an arrival
// are skipped: by then every limiter has refilled or moved on.
type Background struct {
	// Rate is the background requests per second, at most MaxBackgroundRate (0: none).
	Rate float64
	// Tokens is the tokens each background request charges against TPM.
	Tokens int64
	// Burst is the requests arriving together (0: 1), at most MaxBackgroundBurst.
	Burst int64
}

// Generation describes how a service generates its answer. When TTFT or
// TokensPerSecond is set, an admitted request's latency is
//
//	Latency + TTFT + output tokens ÷ tokens per second
//
// where Latency stands for the overhead before generation starts (network,
// queueing; 0 when unset) and TTFT and the rate are drawn per request. The
// load factor and a latency_factor event scale the whole. The zero value
// (both unset) keeps the latency exactly as Latency alone draws it, from
// the same random stream; setting either draws from a stream of its own,
// so the latency and fault draws do not change.
type Generation struct {
	// TTFT is the time to first token (Kind "": unset, 0).
	TTFT Dist[time.Duration]
	// TokensPerSecond is the output tokens generated per second after the
	// first (Kind "": unset, generation takes no time). Draws below
	// MinTokensPerSecond count as MinTokensPerSecond.
	TokensPerSecond Dist[float64]
}

// Enabled reports whether either distribution is set.
func (g Generation) Enabled() bool { return g.TTFT.IsSet() || g.TokensPerSecond.IsSet() }

// WithDefaults returns c with zero fields replaced by their defaults: the
// one place the defaults of a Config are applied.
func (c Config) WithDefaults() Config {
	if c.Algorithm == "" {
		c.Algorithm = DefaultAlgorithm
	}
	if c.Headers == "" {
		c.Headers = DefaultHeaderStyle
		if c.API == APIGemini || c.API == APIBedrock {
			// The Gemini API and Bedrock send no OpenAI headers (the
			// other styles keep DefaultHeaderStyle, as they always have).
			c.Headers = c.API.DefaultHeaders()
		}
	}
	if c.API == APIGemini && c.Headers != HeadersNone && c.Faults.RetryDelayBody == "" {
		// The Gemini API states a 429's delay in its body only.
		c.Faults.RetryDelayBody = RetryDelayInstead
	}
	if c.API == "" {
		switch c.Headers {
		case HeadersOpenAI:
			c.API = APIOpenAI
		case HeadersAnthropic:
			c.API = APIAnthropic
		default:
			c.API = APIGeneric
		}
	}
	if c.ConcurrencyRetryAfter == 0 {
		c.ConcurrencyRetryAfter = DefaultConcurrencyRetryAfter
	}
	if c.LieFactor == 0 {
		c.LieFactor = DefaultLieFactor
	}
	if c.Faults.ErrorStatus == 0 {
		c.Faults.ErrorStatus = DefaultErrorStatus
	}
	if c.Faults.Overload.Rate == 0 {
		c.Faults.Overload.Rate = 1
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.OutputTokens == 0 {
		c.OutputTokens = DefaultOutputTokens
	}
	if c.Latency.Kind == "" {
		c.Latency.Kind = DistConstant
	}
	if c.ModelName == "" {
		c.ModelName = "simbench-" + c.Name
	}
	return c
}
