package scenarios

import (
	"math"
	"time"

	"github.com/simbench/simbench/sched/satmath"
	"github.com/simbench/simbench/spec"
)

// Service is a fake rate-limited downstream service (a fakeapi model). Limits
// that are 0 are not enforced.
type Service struct {
	// Name is the service's name, a key of [services].
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
	Limiter spec.Algorithm
	// Burst is the token bucket's capacity in requests, for the rps bucket
	// (or the rpm bucket when there is no rps); 0 means one second's worth
	// of the tighter of rps and rpm, at least 1 (the simulator's rule, for
	// the fake service and the clients' own buckets alike). Only set with
	// spec.TokenBucket.
	Burst float64
	// CountRejected makes 429ed requests count against the limits.
	CountRejected bool
	// DedupeWrites makes the fake service apply a write once per
	// Idempotency-Key (key dedupe_writes; see spec.Config.DedupeWrites).
	// Left out of the scenario's digest when false, so scenarios that
	// never set it keep theirs.
	DedupeWrites bool `json:",omitempty"`
	// Latency is the service time of one request that is admitted.
	Latency spec.Dist[time.Duration]
	// Load makes latency grow with requests in flight (zero: it doesn't).
	Load spec.Load
	// Faults are injected failures (zero: none).
	Faults spec.Faults
	// Headers is the provider style of rate-limit headers and 429 bodies
	// (key headers; spec.HeadersNone when the file leaves it out). It is
	// never "", so spec.DefaultHeaderStyle (openai, the default of a Config
	// written in Go) never applies to a scenario's service: a service a
	// file describes sends no rate-limit headers unless it says which, and
	// its API style follows (generic, every path a tool endpoint).
	Headers spec.HeaderStyle
	// API is the provider shape the service answers in (key api:
	// spec.APIStyle; "": openai or anthropic to match Headers, generic
	// otherwise). It sets Headers' default to the provider's own
	// (spec.APIStyle.DefaultHeaders).
	API spec.APIStyle `json:",omitempty"`
	// Lying makes the server mislead clients about Retry-After.
	Lying spec.LieMode
	// Keys are API keys; when set, each key gets its own quota of every limit
	// above and requests without a known key get 401. The simulated agents
	// (virtual and live) send the first key; the others are for clients of
	// `simbench serve`. Empty: no keys.
	Keys []string
	// KeyLimits are the limits and projects of the keys written as tables
	// (keys = [{ key = "...", project = "...", rpm = 60 }]), by key; a key
	// not in it has none of its own.
	KeyLimits map[string]spec.Key `json:",omitempty"`
	// Projects nest the limits (key projects): the service's limits are
	// then the organisation's, shared by every key, and each project's are
	// shared by its keys (spec.Config.Projects). Empty: one level.
	Projects []spec.Project `json:",omitempty"`
	// Background is unseen traffic from other clients sharing the service's
	// keys (key background); zero: none.
	Background spec.Background
	// NetworkDelay is the one-way time between an agent and the service:
	// the client's dispatch plus the network, drawn afresh for each attempt
	// on its way out (before the service sees it) and again on its way back
	// (before the client sees the answer). DefaultNetworkDelay when the
	// file leaves it out; a constant 0 turns it off.
	NetworkDelay spec.Dist[time.Duration]
	// Generation paces answers as a language model generates them (keys
	// ttft and tokens_per_s); zero: latency alone. Left out of JSON when
	// zero, as the next two are, so a scenario without the keys keeps its
	// digest (sim.ScenarioDigest).
	Generation spec.Generation `json:",omitzero"`
	// InputTokensPerMinute and OutputTokensPerMinute are separate input-
	// and output-token limits per minute (keys input_tpm and output_tpm,
	// Anthropic's ITPM and OTPM); 0: none.
	InputTokensPerMinute  float64 `json:",omitempty"`
	OutputTokensPerMinute float64 `json:",omitempty"`
	// PricePer1kInput and PricePer1kOutput are what the service charges,
	// in dollars per 1,000 input (prompt) and output tokens (keys
	// price_per_1k_input and price_per_1k_output; 0: free). A tool call's
	// tokens are all input; a model call's output_tokens are output. They
	// give a run's cost (results' tasks.cost_usd).
	PricePer1kInput  float64 `json:",omitempty"`
	PricePer1kOutput float64 `json:",omitempty"`
	// Daily is a per-day quota (keys rpd, tpd, daily_reset, timezone,
	// clock_start; spec.Daily); zero: none. Left out of JSON when zero.
	Daily spec.Daily `json:",omitzero"`
}

// Priced reports whether the service charges for tokens.
func (s *Service) Priced() bool { return s.PricePer1kInput > 0 || s.PricePer1kOutput > 0 }

// DefaultNetworkDelay is a service's one-way network delay when the
// scenario file does not set one: a lognormal with a median of 1 ms and a
// 95th percentile of 5 ms, from a client in the provider's region (under a
// millisecond each way) to one in a nearby region (a few milliseconds),
// with the tail a busy client's dispatch adds. docs/scenario-format.md says why.
var DefaultNetworkDelay = spec.Dist[time.Duration]{Kind: spec.DistLognormal, P50: time.Millisecond, P95: 5 * time.Millisecond}

// ClientKey is the API key the simulated agents send to the service: the
// first of Keys, or "" when the service takes none.
func (s *Service) ClientKey() string {
	if len(s.Keys) == 0 {
		return ""
	}
	return s.Keys[0]
}

// RequestsPerMinuteLimit is the tighter of the service's request limits,
// per minute (0: none).
func (s *Service) RequestsPerMinuteLimit() float64 {
	switch {
	case s.RequestsPerSecond > 0 && s.RequestsPerMinute > 0:
		return math.Min(s.RequestsPerSecond*60, s.RequestsPerMinute)
	case s.RequestsPerSecond > 0:
		return s.RequestsPerSecond * 60
	default:
		return s.RequestsPerMinute
	}
}

// RequestBurst is the request bucket's capacity: the service's burst, or
// one second's worth of its tightest request rate, at least 1 — the same
// rule for the fake service and for the clients' own buckets.
func (s *Service) RequestBurst() float64 {
	if s.Burst > 0 {
		return s.Burst
	}
	return math.Max(1, s.RequestsPerMinuteLimit()/60)
}

// Model returns the fake service the table describes, in the service
// vocabulary that fakeapi builds its model and server from: limits
// rounded up to whole requests and tokens per window, a fractional rps
// turned into the equivalent (tighter) rpm, and the token bucket's burst
// set by RequestBurst. Rates too large for an int64 saturate, so that the
// validator reports them as too large rather than as negative. The loader
// reports the problems of every service's Model (spec.Config.Problems), so
// a loaded scenario's services all build.
func (s *Service) Model() spec.Config {
	c := spec.Config{
		Name:          s.Name,
		RPS:           satmath.FromFloat[int64](s.RequestsPerSecond),
		RPM:           satmath.FromFloat[int64](math.Ceil(s.RequestsPerMinute)),
		TPM:           satmath.FromFloat[int64](math.Ceil(s.TokensPerMinute)),
		MaxConcurrent: s.MaxConcurrent,
		Algorithm:     s.Limiter,
		CountRejected: s.CountRejected,
		DedupeWrites:  s.DedupeWrites,
		Latency:       s.Latency,
		Load:          s.Load,
		Faults:        s.Faults,
		Headers:       s.Headers,
		API:           s.API,
		Lie:           s.Lying,
		Background:    s.Background,
		Generation:    s.Generation,
		InputTPM:      satmath.FromFloat[int64](math.Ceil(s.InputTokensPerMinute)),
		OutputTPM:     satmath.FromFloat[int64](math.Ceil(s.OutputTokensPerMinute)),
		Daily:         s.Daily,
	}
	if r := s.RequestsPerSecond; r != math.Trunc(r) {
		// The model counts whole requests per window: a fractional rate per
		// second becomes the equivalent (tighter) rate per minute.
		c.RPS = 0
		if rpm := satmath.FromFloat[int64](math.Floor(r * 60)); c.RPM == 0 || rpm < c.RPM {
			c.RPM = max(rpm, 1)
		}
	}
	// Only a token bucket has a burst. Another limiter's Burst sizes only the
	// clients' buckets (Scale keeps it when it scales the rates); the
	// loader refuses one written in the file.
	if c.Algorithm == "" || c.Algorithm == spec.TokenBucket {
		c.Algorithm = spec.TokenBucket
		if c.RPS > 0 || c.RPM > 0 || s.Burst > 0 {
			c.Burst = satmath.FromFloat[int64](math.Ceil(s.RequestBurst()))
		}
	}
	for _, k := range s.Keys {
		key, ok := s.KeyLimits[k]
		if !ok {
			key = spec.Key{Key: k}
		}
		c.Keys = append(c.Keys, key)
	}
	c.Projects = s.Projects
	return c
}
