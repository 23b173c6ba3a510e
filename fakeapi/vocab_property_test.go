package fakeapi

import (
	"fmt"
	"math"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/simbench/simbench/spec"
)

// TestValidatorMatchesModelAndServer checks, over generated service
// configurations full of edge values (negative, zero, equal, too large,
// unknown enum values, NaN), that the one validator accepts a configuration
// exactly when the model builds from it and the server starts with it, and
// that an accepted one is served at a URL that routes to it and makes a
// model that answers requests without panicking. NewModel refuses through
// the validator alone, so the test holds the server's own refusals and the
// model's behaviour to it.
func TestValidatorMatchesModelAndServer(t *testing.T) {
	accepted := 0
	rapid.Check(t, func(t *rapid.T) {
		cfg := ServiceConfig{Config: genConfig(t)}
		problems := cfg.Config.Problems()
		m, modelErr := NewModel(cfg, rand.New(rand.NewPCG(1, 2)))
		srv, srvErr := Start(ServerConfig{Services: []ServiceConfig{cfg}, Seed: 1})
		var routed string // the service the server routes the service's own URL to
		if srv != nil {
			if u, err := url.Parse(srv.URL(cfg.Name)); err == nil {
				routed, _, _ = strings.Cut(strings.TrimPrefix(u.Path, "/"), "/")
			}
			srv.Close()
		}
		valid := len(problems) == 0
		if valid {
			accepted++
		}
		if valid != (modelErr == nil) {
			t.Fatalf("validator problems %v, but NewModel: %v", problems, modelErr)
		}
		if valid != (srvErr == nil) {
			t.Fatalf("validator problems %v, but Start: %v", problems, srvErr)
		}
		if valid && routed != cfg.Name {
			t.Fatalf("service %q is served at %q, which routes to %q", cfg.Name, srv.URL(cfg.Name), routed)
		}
		if !valid {
			if !strings.Contains(modelErr.Error(), problems[0].Msg) {
				t.Fatalf("NewModel: %v, want the validator's %q", modelErr, problems[0])
			}
			return
		}
		now := time.Duration(0)
		for i := range rapid.IntRange(1, 20).Draw(t, "requests") {
			now += time.Duration(rapid.Int64Range(0, int64(time.Second)).Draw(t, "gap"))
			d := m.Arrive(now, Request{Key: keyOf(cfg.Keys, i), Tokens: rapid.Int64Range(0, 5000).Draw(t, "tokens"), OutputTokens: 50})
			if d.Latency < 0 {
				t.Fatalf("latency %v is negative", d.Latency)
			}
			switch {
			case d.Kind == KindHang:
				m.Cancel(now+time.Second, d.ID) // the client gives up
			case d.Admitted():
				m.Finish(now+d.Latency, d.ID, false)
			}
		}
	})
	if accepted == 0 {
		t.Error("no generated configuration was valid; the generator tests only refusals")
	}
}

// keyOf is the ith request's API key: one of keys in turn ("" when none).
func keyOf(keys []spec.Key, i int) string {
	if len(keys) == 0 {
		return ""
	}
	return keys[i%len(keys)].Key
}

// choose draws one of good, or one of bad once in 20 draws, so that a
// fair share of the configurations are valid and the rest have a few
// problems each.
func choose[T any](t *rapid.T, name string, good, bad []T) T {
	// rapid leans towards the ends of a range; 13 is in neither.
	if len(bad) > 0 && rapid.IntRange(0, 19).Draw(t, name+".bad") == 13 {
		return rapid.SampledFrom(bad).Draw(t, name)
	}
	return rapid.SampledFrom(good).Draw(t, name)
}

func genConfig(t *rapid.T) spec.Config {
	perMinute := int64(spec.MaxLimit)
	limit := func(name string) int64 {
		return choose(t, name, []int64{0, 0, 1, 60, 10_000, perMinute}, []int64{-1, perMinute + 1, math.MaxInt64})
	}
	rate := func(name string) float64 {
		return choose(t, name, []float64{0, 0, 0, 0.1, 0.3}, []float64{-0.1, 1, 1.1, math.NaN()})
	}
	dur := func(name string) time.Duration {
		return choose(t, name, []time.Duration{0, 0, time.Nanosecond, time.Second}, []time.Duration{-time.Millisecond})
	}
	c := spec.Config{
		Name:                  choose(t, "name", []string{"api"}, []string{"", "a/b", "q?x", "_simbench", "two words", "tab\tbed"}),
		RPS:                   limit("rps"),
		RPM:                   limit("rpm"),
		TPM:                   limit("tpm"),
		MaxConcurrent:         choose(t, "max_concurrent", []int{0, 1, 8}, []int{-1}),
		Algorithm:             choose(t, "limiter", []spec.Algorithm{"", spec.TokenBucket, spec.FixedWindow, spec.SlidingWindow}, []spec.Algorithm{"leaky"}),
		Burst:                 choose(t, "burst", []int64{0}, []int64{5, -1, perMinute + 1}),
		TokenBurst:            choose(t, "token_burst", []int64{0, 0, 5000}, []int64{-1}),
		CountRejected:         rapid.Bool().Draw(t, "count_rejected"),
		ConcurrencyRetryAfter: dur("concurrency_retry_after"),
		Latency:               genDist(t, "latency", durValue),
		Load: spec.Load{Knee: choose(t, "load.knee", []int{0, 2}, []int{-1}),
			Factor: choose(t, "load.factor", []float64{0, 0.1}, []float64{-0.5, math.NaN()})},
		Faults: spec.Faults{
			ErrorRate: rate("error_rate"), ErrorStatus: choose(t, "error_status", []int{0, 500, 503}, []int{404, 600}),
			HangRate: rate("hang_rate"), ResetRate: rate("reset_rate"),
			SlowFirstByte: spec.SlowFirstByte{Rate: rate("slow_first_byte.rate"), Delay: dur("slow_first_byte.delay")},
			Overload:      genOverload(t),
			Conflict:      rate("conflict"),
		},
		Headers:      choose(t, "headers", []spec.HeaderStyle{"", spec.HeadersNone, spec.HeadersOpenAI, spec.HeadersAnthropic, spec.HeadersStandard}, []spec.HeaderStyle{"aws"}),
		API:          choose(t, "api", []spec.APIStyle{"", spec.APIOpenAI, spec.APIAnthropic, spec.APIGeneric}, []spec.APIStyle{"soap"}),
		Lie:          choose(t, "lying", []spec.LieMode{spec.LieNone}, []spec.LieMode{spec.LieShort, spec.LieMissing, "often"}),
		LieFactor:    choose(t, "lie_factor", []float64{0, 0.5, 1}, []float64{1.5, -0.1, math.NaN()}),
		MaxBodyBytes: choose(t, "max_body_bytes", []int64{0, 1024}, []int64{-1}),
		OutputTokens: choose(t, "output_tokens", []int64{0, 16}, []int64{-1}),
		Background: spec.Background{
			Rate:   choose(t, "background.rate", []float64{0, 0, 5}, []float64{-1, spec.MaxBackgroundRate + 1, math.NaN()}),
			Tokens: choose(t, "background.tokens", []int64{0, 100}, []int64{-1}),
			Burst:  choose(t, "background.burst", []int64{0, 3}, []int64{-1, spec.MaxBackgroundBurst + 1}),
		},
		Generation: spec.Generation{TTFT: genDist(t, "ttft", durValue), TokensPerSecond: genDist(t, "tokens_per_s", amountValue)},
		InputTPM:   limit("input_tpm"),
		OutputTPM:  limit("output_tpm"),
	}
	for i := range rapid.IntRange(0, 3).Draw(t, "keys") {
		c.Keys = append(c.Keys, spec.Key{
			Key: choose(t, "key", []string{fmt.Sprintf("k%d", i)}, []string{"", "k0"}),
			RPS: choose(t, "key.rps", []int64{0, 5}, []int64{-1}), RPM: choose(t, "key.rpm", []int64{0, 100}, []int64{perMinute + 1}),
			TPM: choose(t, "key.tpm", []int64{0, 1000}, nil), MaxConcurrent: choose(t, "key.max_concurrent", []int{0, 2}, []int{-1}),
		})
	}
	return c
}

// genOverload draws overload episodes: none, or every and length both set,
// with an edge value now and then.
func genOverload(t *rapid.T) spec.Overload {
	if !rapid.Bool().Draw(t, "overload") {
		return spec.Overload{}
	}
	every := choose(t, "overload.every", []time.Duration{time.Nanosecond, time.Minute}, []time.Duration{-time.Second})
	length := choose(t, "overload.length", []time.Duration{time.Millisecond, time.Second}, []time.Duration{0, -time.Second})
	return spec.Overload{Every: every, Length: length, Rate: choose(t, "overload.rate", []float64{0, 0.5, 1}, []float64{1.5, math.NaN()})}
}

// durValue and amountValue draw a distribution parameter, edges included:
// equal draws make p50 = p95 and min = max likely.
func durValue(t *rapid.T, name string) time.Duration {
	return choose(t, name, []time.Duration{0, time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond, time.Second}, []time.Duration{-time.Millisecond})
}

func amountValue(t *rapid.T, name string) float64 {
	return choose(t, name, []float64{0, 0.5, 10, 10, 60}, []float64{-1, 2e12})
}

// genDist draws a distribution of any kind (or an unknown or unset one)
// with parameters that may contradict each other.
func genDist[T spec.Unit](t *rapid.T, name string, value func(*rapid.T, string) T) spec.Dist[T] {
	d := spec.Dist[T]{Kind: choose(t, name+".dist", []spec.DistKind{"", "", spec.DistConstant, spec.DistUniform, spec.DistNormal,
		spec.DistLognormal, spec.DistExponential, spec.DistPareto, spec.DistEmpirical}, []spec.DistKind{"weibull"})}
	switch d.Kind {
	case spec.DistConstant:
		d.Value = value(t, name+".value")
	case spec.DistUniform:
		d.Min, d.Max = value(t, name+".min"), value(t, name+".max")
	case spec.DistNormal:
		d.Mean, d.Stddev = value(t, name+".mean"), value(t, name+".stddev")
	case spec.DistLognormal:
		d.P50, d.P95 = value(t, name+".p50"), value(t, name+".p95")
	case spec.DistExponential:
		d.Mean = value(t, name+".mean")
	case spec.DistPareto:
		d.Min, d.Alpha = value(t, name+".min"), choose(t, name+".alpha", []float64{0.5, 2}, []float64{0, -1, math.NaN()})
	case spec.DistEmpirical:
		for range choose(t, name+".samples", []int{1, 2, 3}, []int{0}) {
			d.Samples = append(d.Samples, value(t, name+".sample"))
		}
	}
	if d.Kind != spec.DistUniform && d.Kind != spec.DistConstant && rapid.Bool().Draw(t, name+".capped") {
		d.Max = value(t, name+".max")
	}
	return d
}
