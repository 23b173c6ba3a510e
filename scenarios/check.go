package scenarios

import (
	"math"
	"time"

	"github.com/simbench/simbench/spec"
)

// Check holds the rules `simbench check` grades a client by, from the
// scenario's [check] table. A zero field means the rule's default (package
// check's DefaultRules says what each is); the loader sets only what the
// file writes.
type Check struct {
	// MaxInFlight caps the attempts one client may have in flight per
	// service, by service name; AllMaxInFlight applies to every service
	// not named (0: the service's Little's-law cap).
	MaxInFlight    map[string]int
	AllMaxInFlight int
	// RateLimitedWarn and RateLimitedFail bound the share of a client's
	// attempts answered 429, in [0, 1].
	RateLimitedWarn, RateLimitedFail float64
	// EarlyRetries is the most retries a client may send before the delay
	// it was told; HasEarlyRetries says the file set it (0 is the default).
	EarlyRetries    int
	HasEarlyRetries bool
	// JitterWindow groups 429s answered within it into one shared 429;
	// JitterMinSpread and JitterMinShare are the least spread (p10 to p90)
	// of the retries after one, as a time and as a share of their median
	// delay (the larger applies).
	JitterWindow, JitterMinSpread time.Duration
	JitterMinShare                float64
	// AttemptsWarn and AttemptsFail bound the attempts of one call.
	AttemptsWarn, AttemptsFail int
	// Abandoned is the most attempts a client may leave running on the
	// server while it retries them; HasAbandoned says the file set it.
	Abandoned    int
	HasAbandoned bool
	// NonRetryable is the most retries a client may send of answers that
	// no retry can change (insufficient_quota, context too long, 400, 401,
	// 413); HasNonRetryable says the file set it.
	NonRetryable    int
	HasNonRetryable bool
	// AnswerGapWarn and AnswerGapFail bound the p95 time between one model
	// answer to a client and the next.
	AnswerGapWarn, AnswerGapFail time.Duration
	// AttemptTimeout is the per-attempt timeout a client should give an
	// attempt up at (0: the tuned strategy's attempt_timeout, if any).
	AttemptTimeout time.Duration
	// Gateway declares the per-key limits a gateway in front of the
	// services promises, from [check.gateway] (nil: none declared).
	Gateway *Gateway
}

// Gateway is what a rate-limiting gateway (a proxy such as LiteLLM or
// nginx with limit_req, run in front of check's services) promises per API
// key: `simbench check --gateway URL` drives load through it and grades
// the rate that reached the upstream against these limits.
type Gateway struct {
	// Service is the service the gateway forwards to (its upstream).
	Service string
	// Window is the window the gateway counts its limits over: the rate
	// admitted is graded in every window of this length.
	Window time.Duration
	// MaxRatio is the most the rate admitted in a window may exceed the
	// declared one by, as a ratio (1.05: 5% over FAILs).
	MaxRatio float64
	// Keys are the declared limits, one per API key, in file order.
	Keys []GatewayKey
}

// GatewayKey is one API key's limits as a gateway declares them.
type GatewayKey struct {
	// Key is the API key the client sends the gateway.
	Key string
	// RPM and TPM are the requests and tokens per minute the gateway
	// promises to let through for the key (0: no such limit).
	RPM, TPM float64
}

// DefaultGatewayWindow and DefaultGatewayMaxRatio are the window and the
// ratio [check.gateway] takes when the file does not set them.
const (
	DefaultGatewayWindow   = time.Minute
	DefaultGatewayMaxRatio = 1.05
)

// maxGatewayRate bounds a declared gateway limit, per minute: far above
// any provider's, well below where float arithmetic on counts goes wrong.
const maxGatewayRate = 1e9

// decodeGateway reads [check.gateway]: the service (default: the only
// one), window, max_ratio and, under keys, each key's rpm and tpm.
func (d *decoder) decodeGateway(sc *Scenario, t *table) *Gateway {
	g := &Gateway{Window: DefaultGatewayWindow, MaxRatio: DefaultGatewayMaxRatio}
	if name, ok := t.str("service"); ok {
		d.checkService(sc, t.key("service"), name)
		g.Service = name
	} else if len(sc.Services) == 1 {
		g.Service = sc.Services[0].Name
	} else if len(sc.Services) > 1 {
		t.add("service", "is missing; the scenario has %d services, so name the one the gateway forwards to", len(sc.Services))
	}
	if w, ok := t.duration("window"); ok {
		if w < time.Millisecond {
			t.add("window", "is %v; the window the gateway counts over must be at least 1ms", w)
		} else {
			g.Window = w
		}
	}
	if r, ok := t.positive("max_ratio", 1000, "a ratio of rates"); ok {
		if r < 1 {
			t.add("max_ratio", "is %s; a ratio below 1 fails a gateway that keeps its limit exactly", spec.ShowAmount(r))
		} else {
			g.MaxRatio = r
		}
	}
	if kt := t.sub("keys"); kt != nil {
		for _, key := range kt.keys() {
			st := kt.sub(key) // nil, said so: not a table
			if st == nil {
				continue
			}
			k := GatewayKey{Key: key}
			k.RPM, _ = st.rate("rpm", time.Minute, maxGatewayRate, "a limit a gateway can declare")
			k.TPM, _ = st.rate("tpm", time.Minute, maxGatewayRate, "a limit a gateway can declare")
			if !st.has("rpm") && !st.has("tpm") {
				kt.add(key, "declares no limit; give it rpm, tpm or both")
			}
			st.finish()
			g.Keys = append(g.Keys, k)
		}
	}
	if len(g.Keys) == 0 {
		t.add("keys", "is missing; declare each API key's limits, like keys = { \"sk-team-a\" = { rpm = 600 } }")
	}
	t.finish()
	return g
}

// decodeCheck reads the [check] table.
func (d *decoder) decodeCheck(sc *Scenario, t *table) Check {
	var c Check
	if v, ok := t.get("max_in_flight"); ok {
		key := t.key("max_in_flight")
		if m, isTable := v.(map[string]any); isTable {
			st := &table{d: d, path: key, m: m}
			c.MaxInFlight = map[string]int{}
			for _, name := range st.keys() {
				d.checkService(sc, st.key(name), name)
				if n, ok := st.integer(name, 1, math.MaxInt32, "a cap on requests in flight"); ok {
					c.MaxInFlight[name] = int(n)
				}
			}
		} else if n, ok := t.integer("max_in_flight", 1, math.MaxInt32, "a cap on requests in flight"); ok {
			c.AllMaxInFlight = int(n)
		}
	}
	if f, ok := t.fraction("rate_limited_warn"); ok {
		c.RateLimitedWarn = f
	}
	if f, ok := t.fraction("rate_limited_fail"); ok {
		c.RateLimitedFail = f
	}
	if c.RateLimitedWarn > 0 && c.RateLimitedFail > 0 && c.RateLimitedWarn > c.RateLimitedFail {
		t.add("rate_limited_warn", "is above rate_limited_fail; the warning bound must not be past the failing one")
	}
	if n, ok := t.integer("early_retries", 0, math.MaxInt32, "a count"); ok {
		c.EarlyRetries, c.HasEarlyRetries = int(n), true
	}
	if n, ok := t.integer("abandoned", 0, math.MaxInt32, "a count"); ok {
		c.Abandoned, c.HasAbandoned = int(n), true
	}
	if n, ok := t.integer("non_retryable", 0, math.MaxInt32, "a count"); ok {
		c.NonRetryable, c.HasNonRetryable = int(n), true
	}
	for _, k := range []struct {
		key string
		to  *time.Duration
	}{{"jitter_window", &c.JitterWindow}, {"jitter_min_spread", &c.JitterMinSpread}, {"answer_gap_warn", &c.AnswerGapWarn}, {"answer_gap_fail", &c.AnswerGapFail}, {"attempt_timeout", &c.AttemptTimeout}} {
		if v, ok := t.duration(k.key); ok {
			if v <= 0 {
				t.add(k.key, "is %v; it must be above 0", v)
				continue
			}
			*k.to = v
		}
	}
	if c.AnswerGapWarn > 0 && c.AnswerGapFail > 0 && c.AnswerGapWarn > c.AnswerGapFail {
		t.add("answer_gap_warn", "is above answer_gap_fail; the warning bound must not be past the failing one")
	}
	if f, ok := t.fraction("jitter_min_share"); ok {
		c.JitterMinShare = f
	}
	if n, ok := t.integer("attempts_warn", 1, math.MaxInt32, "a count of attempts"); ok {
		c.AttemptsWarn = int(n)
	}
	if n, ok := t.integer("attempts_fail", 1, math.MaxInt32, "a count of attempts"); ok {
		c.AttemptsFail = int(n)
	}
	if c.AttemptsWarn > 0 && c.AttemptsFail > 0 && c.AttemptsWarn > c.AttemptsFail {
		t.add("attempts_warn", "is above attempts_fail; the warning bound must not be past the failing one")
	}
	if gt := t.sub("gateway"); gt != nil {
		c.Gateway = d.decodeGateway(sc, gt)
	}
	t.finish()
	return c
}
