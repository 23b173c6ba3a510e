package fakeapi

import (
	"errors"
	"fmt"
	"math"
	"os"
	"time"
)

// Defaults applied when the corresponding field is zero.
const (
	// DefaultAlgorithm is the limiter algorithm when ServiceConfig.Algorithm is empty.
	DefaultAlgorithm = TokenBucket
	// DefaultHeaderStyle is the header style when ServiceConfig.Headers is empty.
	DefaultHeaderStyle = HeadersOpenAI
	// DefaultConcurrencyRetryAfter is the retry delay given with a 429 for the
	// concurrency cap, whose true wait depends on other requests finishing.
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

// maxCredit bounds limit×window products (units × nanoseconds) so that
// limiter arithmetic stays within int64.
const maxCredit = 1 << 62

// Algorithm selects how a rate limit is enforced.
type Algorithm string

// Limiter algorithms.
const (
	// TokenBucket refills continuously at limit/window and holds at most the
	// burst (default: one window's worth). A full bucket admits a burst.
	TokenBucket Algorithm = "token_bucket"
	// FixedWindow counts units in windows aligned to multiples of the window
	// since the epoch; two full windows back to back admit twice the limit
	// around the edge.
	FixedWindow Algorithm = "fixed_window"
	// SlidingWindow keeps an exact log: any window of the given length,
	// (t-window, t], holds at most the limit.
	SlidingWindow Algorithm = "sliding_window"
)

// HeaderStyle selects which provider's rate-limit headers a service sends.
type HeaderStyle string

// Header styles.
const (
	// HeadersOpenAI sends retry-after (whole seconds), retry-after-ms and
	// x-ratelimit-{limit,remaining,reset}-{requests,tokens}, resets as
	// durations such as "6ms" or "1m2s".
	HeadersOpenAI HeaderStyle = "openai"
	// HeadersAnthropic sends retry-after (whole seconds) and
	// anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,reset},
	// resets as RFC 3339 times.
	HeadersAnthropic HeaderStyle = "anthropic"
	// HeadersStandard sends only Retry-After in whole seconds.
	HeadersStandard HeaderStyle = "standard"
	// HeadersNone sends no rate-limit headers at all.
	HeadersNone HeaderStyle = "none"
)

// APIStyle selects the endpoints and body shapes of a service on the server.
type APIStyle string

// API styles.
const (
	// APIOpenAI answers POST /v1/chat/completions, /v1/responses and
	// /v1/embeddings, and GET /v1/models.
	APIOpenAI APIStyle = "openai"
	// APIAnthropic answers POST /v1/messages and /v1/messages/count_tokens,
	// and GET /v1/models.
	APIAnthropic APIStyle = "anthropic"
	// APIGeneric answers every path as a JSON tool endpoint.
	APIGeneric APIStyle = "generic"
)

// LieMode makes a service mislead clients about when to retry.
type LieMode string

// Lie modes.
const (
	// LieNone tells the truth (the zero value).
	LieNone LieMode = ""
	// LieShort advertises the true wait times LieFactor.
	LieShort LieMode = "short"
	// LieMissing sends 429s without any retry delay.
	LieMissing LieMode = "missing"
)

// Dist names a latency distribution.
type Dist string

// Latency distributions.
const (
	// DistConstant: always Value.
	DistConstant Dist = "constant"
	// DistUniform: uniform on [Min, Max).
	DistUniform Dist = "uniform"
	// DistNormal: normal with Mean and StdDev, negative draws clamped to 0.
	DistNormal Dist = "normal"
	// DistLogNormal: lognormal whose median is P50 and 95th percentile P95.
	DistLogNormal Dist = "lognormal"
	// DistExponential: exponential with Mean.
	DistExponential Dist = "exponential"
	// DistPareto: Pareto type I with scale Scale (the minimum) and shape Alpha.
	DistPareto Dist = "pareto"
	// DistEmpirical: resamples Samples (or the file File), interpolating
	// linearly between order statistics.
	DistEmpirical Dist = "empirical"
)

// LatencyConfig describes how long an admitted request takes, from arrival
// to the last byte of the response. The zero value is a constant 0.
type LatencyConfig struct {
	// Dist selects the distribution ("" is DistConstant).
	Dist Dist
	// Value is the constant latency.
	Value time.Duration
	// Min and Max bound the uniform distribution.
	Min, Max time.Duration
	// Mean is the mean of the normal and exponential distributions; StdDev
	// the normal's standard deviation.
	Mean, StdDev time.Duration
	// P50 and P95 are the lognormal's median and 95th percentile.
	P50, P95 time.Duration
	// Scale (the minimum value) and Alpha (the shape, > 0; smaller is
	// heavier) define the Pareto distribution.
	Scale time.Duration
	Alpha float64
	// File names a file of observed latencies, one per line, for DistEmpirical;
	// LoadFiles reads it into Samples. A line is a Go duration ("120ms") or a
	// bare number of milliseconds; blank lines and lines starting with # are skipped.
	File string
	// Samples are the observed latencies for DistEmpirical.
	Samples []time.Duration
	// Cap, when positive, bounds every draw (useful for heavy tails).
	Cap time.Duration
	// LoadKnee and LoadSlope model an overloaded service: a request admitted
	// while n others are in flight takes (1 + LoadSlope×max(0, n-LoadKnee))
	// times its drawn latency. LoadSlope 0 disables it.
	LoadKnee  int
	LoadSlope float64
}

// OverloadConfig describes 529 "overloaded" episodes. The zero value has none.
type OverloadConfig struct {
	// Every is the mean time between the end of one episode and the start of
	// the next (exponentially distributed); 0 disables episodes.
	Every time.Duration
	// Length is how long each episode lasts.
	Length time.Duration
	// Rate is the fraction of arrivals rejected with 529 during an episode
	// (0 means 1: all of them).
	Rate float64
}

// FaultConfig injects failures. Rates are probabilities in [0, 1] drawn
// independently per admitted request. The zero value injects nothing.
type FaultConfig struct {
	// ErrorRate is the fraction of admitted requests answered with
	// ErrorStatus after their latency.
	ErrorRate float64
	// ErrorStatus is the 5xx status of those errors (0: DefaultErrorStatus).
	ErrorStatus int
	// HangRate is the fraction of admitted requests that never answer; they
	// hold their concurrency slot until the client gives up.
	HangRate float64
	// ResetRate is the fraction of admitted requests whose connection is
	// reset, without a response, after their latency.
	ResetRate float64
	// SlowFirstByteRate is the fraction of admitted requests whose response
	// starts SlowFirstByte late (added to the latency).
	SlowFirstByteRate float64
	SlowFirstByte     time.Duration
	// Overload describes 529 episodes.
	Overload OverloadConfig
	// ConflictRate is the probability, in [0, 1], that a write arriving
	// while another write to the same resource is in service fails with
	// 409 Conflict after its latency, as optimistic concurrency refuses a
	// stale commit; the write that arrived first wins (see KindConflict).
	// 0 detects no conflicts: overlapping writes are counted as races.
	ConflictRate float64
}

// KeyConfig is one tenant: an API key and its own quotas. Zero limits take
// the service's values. One tenant's traffic never spends another's quota.
type KeyConfig struct {
	// Key is the API key (Authorization: Bearer KEY, or x-api-key: KEY).
	Key string
	// RPS, RPM and TPM are requests per second, requests per minute and
	// tokens per minute for this key.
	RPS, RPM, TPM int64
	// MaxConcurrent caps this key's requests in flight.
	MaxConcurrent int
}

// MaxBackgroundRate bounds BackgroundConfig.Rate, in requests per second,
// so that the work the model does per arrival stays bounded.
const MaxBackgroundRate = 10_000

// BackgroundConfig is traffic from other clients on the same key, which the
// driver never sends and never sees answered. Its requests arrive in
// groups of Burst, evenly spaced, one group every Burst/Rate seconds from
// the epoch (a steady stream when Burst is 1, a batch job when it is
// large), on every key (or on the service's single tenant). Each spends its key's request and token limits
// as a client request does, but the other clients pace themselves: a
// background request that finds no room waits, and the waiting ones take
// the room that frees, oldest first and ahead of later arrivals, the
// driver's included. At most BackgroundPatience worth of them wait; past
// that the oldest gives up. They take no concurrency slot. The model
// accrues them lazily, at the next Arrive, in time order and before that
// arrival, so it needs no clock and no goroutine and is deterministic.
// Background requests more than BackgroundHorizon before an arrival are
// skipped: by then every limiter has refilled or moved on.
type BackgroundConfig struct {
	// Rate is the background requests per second, at most MaxBackgroundRate (0: none).
	Rate float64
	// Tokens is the tokens each background request charges against TPM.
	Tokens int64
	// Burst is the requests arriving together (0: 1), at most MaxBackgroundBurst.
	Burst int64
}

// MaxBackgroundBurst bounds BackgroundConfig.Burst.
const MaxBackgroundBurst = 1_000_000

// BackgroundHorizon is how far before an arrival background traffic is
// still accrued; earlier background requests are skipped.
const BackgroundHorizon = 10 * time.Minute

// BackgroundPatience bounds the background requests waiting for room: at
// most this long's worth of them at the background rate, and at least one
// group.
const BackgroundPatience = 10 * time.Second

// ServiceConfig configures one fake service. Zero limits mean no limit; the
// zero value (with a Name) is an unlimited, zero-latency, fault-free service.
type ServiceConfig struct {
	// Name identifies the service; on a shared listener it is the path prefix.
	Name string
	// RPS and RPM are requests per second and per minute; TPM is tokens per
	// minute (input plus output tokens, charged at admission).
	RPS, RPM, TPM int64
	// MaxConcurrent caps requests in flight (429 with limit "concurrency").
	MaxConcurrent int
	// Algorithm enforces RPS, RPM and TPM ("": DefaultAlgorithm).
	Algorithm Algorithm
	// Burst is the token-bucket capacity, in requests, of the RPS bucket (or
	// of the RPM bucket when RPS is 0); 0 is one window's worth.
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
	// Latency is the time an admitted request takes.
	Latency LatencyConfig
	// Faults injects failures.
	Faults FaultConfig
	// Headers selects the rate-limit header style ("": DefaultHeaderStyle).
	// It also sets the rounding of the advertised retry delay: milliseconds
	// for HeadersOpenAI (retry-after-ms), whole seconds otherwise.
	Headers HeaderStyle
	// API selects endpoints and body shapes on the server ("": openai or
	// anthropic to match Headers, generic otherwise).
	API APIStyle
	// Lie misleads clients about the retry delay; LieFactor scales the true
	// wait under LieShort (0: DefaultLieFactor).
	Lie       LieMode
	LieFactor float64
	// Keys, when not empty, requires one of these API keys (401 otherwise)
	// and gives each its own limits.
	Keys []KeyConfig
	// MaxBodyBytes caps request bodies in bytes (0: DefaultMaxBodyBytes).
	MaxBodyBytes int64
	// OutputTokens is what the server generates for a request that names no
	// max_tokens (0: DefaultOutputTokens). The model takes output tokens from
	// Request.OutputTokens instead.
	OutputTokens int64
	// KeepWorkingOnDisconnect makes the server finish a request whose client
	// disconnected, as many real backends do, and count its work as wasted;
	// otherwise the server stops and counts it as cancelled by the client.
	KeepWorkingOnDisconnect bool
	// ModelName is the "model" echoed in provider-shaped responses when the
	// request names none.
	ModelName string
	// Background is unseen traffic from other clients sharing the service's
	// API keys (zero: none): it spends the same buckets as the clients the
	// driver sends, so the remaining counts in the headers fall below what a
	// client's own pacing would predict.
	Background BackgroundConfig
	// Agent shapes the tool calls an openai- or anthropic-style service
	// answers requests that carry tools with (the zero value: one call,
	// once per conversation).
	Agent AgentConfig
	// WritePaths are the paths within the service (such as "/tools/save")
	// whose requests are writes, as a scenario's tools of kind write declare
	// them; the server also takes PUT, PATCH, DELETE and the
	// X-Simbench-Write header as writes. The model reads Request.Write.
	// Each is a WriteRoute with the default resource.
	WritePaths []string
	// WriteRoutes are write paths that may say where each request's
	// resource key comes from (see WriteRoute); they are matched before
	// WritePaths.
	WriteRoutes []WriteRoute
	// Events are timed changes of the service's conditions (limits,
	// latency, error and overload rates, stalls, outages), in time since the
	// model's epoch; see Event.
	Events []Event
	// Generation paces the answer as a language model generates it: time
	// to first token and output tokens per second (zero: Latency alone).
	Generation GenerationConfig
	// InputTPM and OutputTPM are separate input-token and output-token
	// per-minute limits (Anthropic's ITPM and OTPM; 0: none), each with a
	// bucket of its own beside TPM. Input tokens are charged at admission;
	// output tokens are charged at admission as the request's
	// Request.OutputTokens (its max_tokens) and settled to what the answer
	// carries by Model.SettleOutput. The anthropic header style publishes
	// them under input-tokens and output-tokens.
	InputTPM, OutputTPM int64
}

// GenerationConfig describes how a service generates its answer. When TTFT
// or TokensPerSecond is set, an admitted request's latency is
//
//	Latency + TTFT + output tokens ÷ tokens per second
//
// where Latency (ServiceConfig.Latency) stands for the overhead before
// generation starts (network, queueing; 0 when unset), TTFT is drawn per
// request, and the output tokens are Request.OutputTokens. The load factor
// (LatencyConfig.LoadSlope) and a latency_factor event scale the whole. The
// zero value (both unset) keeps the latency exactly as Latency alone draws
// it, from the same random stream; setting either draws from a stream of its
// own, so the latency and fault draws do not change.
type GenerationConfig struct {
	// TTFT is the time to first token (Dist "": unset, 0).
	TTFT LatencyConfig
	// TokensPerSecond is the output tokens generated per second after the
	// first (Dist "": unset, generation takes no time). Draws below
	// MinTokensPerSecond count as MinTokensPerSecond.
	TokensPerSecond RateConfig
}

// enabled reports whether either distribution is set.
func (g GenerationConfig) enabled() bool { return g.TTFT.Dist != "" || g.TokensPerSecond.Dist != "" }

// MinTokensPerSecond is the slowest generation rate a draw gives, in
// output tokens per second.
const MinTokensPerSecond = 0.001

// RateConfig is a distribution of a rate, in units (tokens) per second,
// with the fields of LatencyConfig as plain numbers. The zero value is
// unset.
type RateConfig struct {
	// Dist selects the distribution ("": unset).
	Dist Dist
	// Value is the constant; Min and Max bound the uniform; Mean and StdDev
	// set the normal (Mean alone the exponential); P50 and P95 the
	// lognormal; Scale and Alpha the Pareto; Cap, when positive, bounds
	// every draw.
	Value, Min, Max, Mean, StdDev, P50, P95, Scale, Alpha, Cap float64
	// Samples are the observed rates of DistEmpirical.
	Samples []float64
}

// rateUnit scales a rate into the integer units of LatencyConfig, so that
// rates share its sampler: 10⁶ units per token per second.
const rateUnit = 1e6

// latency returns r as a LatencyConfig in rateUnit units per token/s.
func (r RateConfig) latency() LatencyConfig {
	d := func(f float64) time.Duration { return time.Duration(math.Round(f * rateUnit)) }
	c := LatencyConfig{Dist: r.Dist, Value: d(r.Value), Min: d(r.Min), Max: d(r.Max), Mean: d(r.Mean),
		StdDev: d(r.StdDev), P50: d(r.P50), P95: d(r.P95), Scale: d(r.Scale), Alpha: r.Alpha, Cap: d(r.Cap)}
	for _, s := range r.Samples {
		c.Samples = append(c.Samples, d(s))
	}
	return c
}

// maxRate bounds every parameter of a RateConfig, in units per second.
const maxRate = 1e12

// withDefaults returns c with zero fields replaced by their defaults.
func (c ServiceConfig) withDefaults() ServiceConfig {
	if c.Algorithm == "" {
		c.Algorithm = DefaultAlgorithm
	}
	if c.Headers == "" {
		c.Headers = DefaultHeaderStyle
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
	if c.Latency.Dist == "" {
		c.Latency.Dist = DistConstant
	}
	if c.ModelName == "" {
		c.ModelName = "simbench-" + c.Name
	}
	return c
}

// LoadFiles reads the files the configuration names (the empirical latency
// file) into the configuration, so that NewModel needs no I/O. It does
// nothing when Samples are already set.
func (c *ServiceConfig) LoadFiles() error {
	if c.Latency.Dist != DistEmpirical || len(c.Latency.Samples) > 0 || c.Latency.File == "" {
		return nil
	}
	f, err := os.Open(c.Latency.File)
	if err != nil {
		return fmt.Errorf("fakeapi: service %q: %w", c.Name, err)
	}
	defer f.Close()
	s, err := ReadSamples(f)
	if err != nil {
		return fmt.Errorf("fakeapi: service %q: %s: %w", c.Name, c.Latency.File, err)
	}
	c.Latency.Samples = s
	return nil
}

// Validate reports every problem with the configuration at once, joined
// with errors.Join; nil means NewModel accepts it. It reads no files.
func (c ServiceConfig) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("fakeapi: service %q: "+format, append([]any{c.Name}, args...)...))
	}
	if c.Name == "" {
		bad("name is empty")
	}
	for _, l := range []struct {
		name string
		v    int64
		win  time.Duration
	}{{"rps", c.RPS, time.Second}, {"rpm", c.RPM, time.Minute}, {"tpm", c.TPM, time.Minute}} {
		if l.v < 0 {
			bad("%s is negative (%d)", l.name, l.v)
		} else if l.v > maxCredit/int64(l.win) {
			bad("%s %d is too large (at most %d)", l.name, l.v, maxCredit/int64(l.win))
		}
	}
	if c.MaxConcurrent < 0 {
		bad("max_concurrent is negative (%d)", c.MaxConcurrent)
	}
	switch c.Algorithm {
	case "", TokenBucket, FixedWindow, SlidingWindow:
	default:
		bad("algorithm %q is not token_bucket, fixed_window or sliding_window", c.Algorithm)
	}
	if c.Burst < 0 || c.TokenBurst < 0 {
		bad("burst and token_burst must not be negative (%d, %d)", c.Burst, c.TokenBurst)
	}
	if c.Burst > 0 && c.RPS == 0 && c.RPM == 0 {
		bad("burst %d is set but there is no rps or rpm limit", c.Burst)
	}
	if c.Burst > maxCredit/int64(time.Minute) || c.TokenBurst > maxCredit/int64(time.Minute) {
		bad("burst or token_burst is too large")
	}
	if b := c.Background; !(b.Rate >= 0 && b.Rate <= MaxBackgroundRate) || b.Tokens < 0 || b.Burst < 0 || b.Burst > MaxBackgroundBurst {
		bad("background rate %v must be in [0, %d] requests per second, its tokens (%d) not negative and its burst (%d) in [0, %d]", b.Rate, MaxBackgroundRate, b.Tokens, b.Burst, MaxBackgroundBurst)
	}
	if c.ConcurrencyRetryAfter < 0 {
		bad("concurrency_retry_after is negative (%v)", c.ConcurrencyRetryAfter)
	}
	switch c.Headers {
	case "", HeadersOpenAI, HeadersAnthropic, HeadersStandard, HeadersNone:
	default:
		bad("headers %q is not openai, anthropic, standard or none", c.Headers)
	}
	switch c.API {
	case "", APIOpenAI, APIAnthropic, APIGeneric:
	default:
		bad("api %q is not openai, anthropic or generic", c.API)
	}
	switch c.Lie {
	case LieNone, LieShort, LieMissing:
	default:
		bad("lie %q is not short or missing", c.Lie)
	}
	if c.LieFactor < 0 || c.LieFactor > 1 {
		bad("lie_factor %v is outside [0, 1]", c.LieFactor)
	}
	if c.MaxBodyBytes < 0 || c.OutputTokens < 0 {
		bad("max_body_bytes and output_tokens must not be negative")
	}
	errs = append(errs, c.Agent.validate(c.Name)...)
	seen := map[string]bool{}
	for i, k := range c.Keys {
		if k.Key == "" {
			bad("keys[%d]: key is empty", i)
		} else if seen[k.Key] {
			bad("keys[%d]: key %q appears twice", i, k.Key)
		}
		seen[k.Key] = true
		if k.RPS < 0 || k.RPM < 0 || k.TPM < 0 || k.MaxConcurrent < 0 {
			bad("keys[%d]: limits must not be negative", i)
		}
		if k.RPS > maxCredit/int64(time.Second) || k.RPM > maxCredit/int64(time.Minute) || k.TPM > maxCredit/int64(time.Minute) {
			bad("keys[%d]: a limit is too large", i)
		}
	}
	if c.InputTPM < 0 || c.OutputTPM < 0 {
		bad("input_tpm and output_tpm must not be negative (%d, %d)", c.InputTPM, c.OutputTPM)
	} else if c.InputTPM > maxCredit/int64(time.Minute) || c.OutputTPM > maxCredit/int64(time.Minute) {
		bad("input_tpm or output_tpm is too large (at most %d)", maxCredit/int64(time.Minute))
	}
	errs = append(errs, c.Latency.validate(c.Name)...)
	errs = append(errs, c.Generation.validate(c.Name)...)
	errs = append(errs, c.Faults.validate(c.Name)...)
	errs = append(errs, c.validateEvents()...)
	errs = append(errs, c.validateRoutes()...)
	return errors.Join(errs...)
}

func (g GenerationConfig) validate(name string) []error {
	var errs []error
	if g.TTFT.Dist != "" {
		errs = append(errs, g.TTFT.validateAs(name, "ttft")...)
	}
	if r := g.TokensPerSecond; r.Dist != "" {
		for _, v := range append([]float64{r.Value, r.Min, r.Max, r.Mean, r.StdDev, r.P50, r.P95, r.Scale, r.Cap}, r.Samples...) {
			if !(math.Abs(v) <= maxRate) {
				errs = append(errs, fmt.Errorf("fakeapi: service %q: tokens_per_s: %v is outside [-%g, %g]", name, v, maxRate, maxRate))
				return errs
			}
		}
		errs = append(errs, r.validate(name)...)
	}
	return errs
}

// validate reports the problems of a tokens-per-second distribution, in
// its own units.
func (r RateConfig) validate(name string) []error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("fakeapi: service %q: tokens_per_s: "+format, append([]any{name}, args...)...))
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"value", r.Value}, {"min", r.Min}, {"max", r.Max}, {"mean", r.Mean}, {"stddev", r.StdDev},
		{"p50", r.P50}, {"p95", r.P95}, {"scale", r.Scale}, {"cap", r.Cap}} {
		if f.v < 0 {
			bad("%s is negative (%v)", f.name, f.v)
		}
	}
	switch r.Dist {
	case DistConstant, DistNormal:
	case DistUniform:
		if r.Max < r.Min {
			bad("uniform max %v is below min %v", r.Max, r.Min)
		}
	case DistLogNormal:
		if !(r.P50 > 0 && r.P95 > r.P50) {
			bad("lognormal needs 0 < p50 < p95 (%v, %v)", r.P50, r.P95)
		}
	case DistExponential:
		if !(r.Mean > 0) {
			bad("exponential needs mean > 0")
		}
	case DistPareto:
		if !(r.Scale > 0 && r.Alpha > 0) {
			bad("pareto needs scale > 0 and alpha > 0")
		}
	case DistEmpirical:
		if len(r.Samples) == 0 {
			bad("empirical needs samples")
		}
		for i, v := range r.Samples {
			if v < 0 {
				bad("samples[%d] is negative (%v)", i, v)
				break
			}
		}
	default:
		bad("dist %q is not constant, uniform, normal, lognormal, exponential, pareto or empirical", r.Dist)
	}
	return errs
}

func (l LatencyConfig) validate(name string) []error { return l.validateAs(name, "latency") }

// validateAs reports the problems of l, naming it key.
func (l LatencyConfig) validateAs(name, key string) []error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("fakeapi: service %q: %s: "+format, append([]any{name, key}, args...)...))
	}
	neg := func(field string, d time.Duration) {
		if d < 0 {
			bad("%s is negative (%v)", field, d)
		}
	}
	neg("value", l.Value)
	neg("min", l.Min)
	neg("max", l.Max)
	neg("mean", l.Mean)
	neg("stddev", l.StdDev)
	neg("p50", l.P50)
	neg("p95", l.P95)
	neg("scale", l.Scale)
	neg("cap", l.Cap)
	switch l.Dist {
	case "", DistConstant:
	case DistUniform:
		if l.Max < l.Min {
			bad("uniform max %v is below min %v", l.Max, l.Min)
		}
	case DistNormal:
	case DistLogNormal:
		if l.P50 <= 0 {
			bad("lognormal needs p50 > 0")
		}
		if l.P95 <= l.P50 {
			bad("lognormal p95 %v must be above p50 %v", l.P95, l.P50)
		}
	case DistExponential:
		if l.Mean <= 0 {
			bad("exponential needs mean > 0")
		}
	case DistPareto:
		if l.Scale <= 0 {
			bad("pareto needs scale > 0")
		}
		if !(l.Alpha > 0) {
			bad("pareto needs alpha > 0")
		}
	case DistEmpirical:
		if l.File == "" && len(l.Samples) == 0 {
			bad("empirical needs file or samples")
		}
		for i, s := range l.Samples {
			if s < 0 {
				bad("samples[%d] is negative (%v)", i, s)
				break
			}
		}
	default:
		bad("dist %q is not constant, uniform, normal, lognormal, exponential, pareto or empirical", l.Dist)
	}
	if l.LoadKnee < 0 || l.LoadSlope < 0 || math.IsNaN(l.LoadSlope) {
		bad("load_knee and load_slope must not be negative")
	}
	return errs
}

func (f FaultConfig) validate(name string) []error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("fakeapi: service %q: faults: "+format, append([]any{name}, args...)...))
	}
	for _, r := range []struct {
		name string
		v    float64
	}{{"error_rate", f.ErrorRate}, {"hang_rate", f.HangRate}, {"reset_rate", f.ResetRate},
		{"slow_first_byte_rate", f.SlowFirstByteRate}, {"overload.rate", f.Overload.Rate},
		{"conflict", f.ConflictRate}} {
		if !(r.v >= 0 && r.v <= 1) {
			bad("%s %v is outside [0, 1]", r.name, r.v)
		}
	}
	if f.ErrorRate+f.HangRate+f.ResetRate > 1 {
		bad("error_rate + hang_rate + reset_rate is above 1")
	}
	if f.ErrorStatus != 0 && (f.ErrorStatus < 500 || f.ErrorStatus > 599) {
		bad("error_status %d is not a 5xx", f.ErrorStatus)
	}
	if f.SlowFirstByte < 0 || f.Overload.Every < 0 || f.Overload.Length < 0 {
		bad("durations must not be negative")
	}
	if f.Overload.Every > 0 && f.Overload.Length == 0 {
		bad("overload.every is set but overload.length is 0")
	}
	return errs
}
