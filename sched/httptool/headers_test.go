package httptool

import (
	"math"
	"math/rand/v2"
	"net/http"
	"reflect"
	"testing"
	"time"
)

// Write writes each value exactly, in the form a provider sends it.
func TestHeadersWrite(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 7, 0, time.UTC)
	v := Headers{
		PreciseRetryAfter: 1500 * time.Millisecond, HasPreciseRetryAfter: true,
		RetryAfter: 2 * time.Second, HasRetryAfter: true,
		OpenAI: [2]Limit{
			OpenAITokens: {Sent: true, Limit: 10_000, Remaining: -3, Reset: 62*time.Second + 6*time.Millisecond},
		},
		Anthropic: [4]Limit{
			AnthropicRequests:     {Sent: true, Limit: 50, Remaining: 0, ResetAt: at},
			AnthropicOutputTokens: {Sent: true, Limit: 8_000, Remaining: 7, ResetAt: at.Add(250 * time.Millisecond).In(time.FixedZone("x", 3600))},
		},
	}
	h := http.Header{}
	v.Write(h)
	want := http.Header{
		"Retry-After-Ms":                              {"1500"},
		"Retry-After":                                 {"2"},
		"X-Ratelimit-Limit-Tokens":                    {"10000"},
		"X-Ratelimit-Remaining-Tokens":                {"-3"},
		"X-Ratelimit-Reset-Tokens":                    {"1m2.006s"},
		"Anthropic-Ratelimit-Requests-Limit":          {"50"},
		"Anthropic-Ratelimit-Requests-Remaining":      {"0"},
		"Anthropic-Ratelimit-Requests-Reset":          {"2026-01-02T03:04:07Z"},
		"Anthropic-Ratelimit-Output-Tokens-Limit":     {"8000"},
		"Anthropic-Ratelimit-Output-Tokens-Remaining": {"7"},
		"Anthropic-Ratelimit-Output-Tokens-Reset":     {"2026-01-02T03:04:07.25Z"},
	}
	if !reflect.DeepEqual(h, want) {
		t.Errorf("Write wrote\n %v\nwant\n %v", h, want)
	}
}

func TestFormatDecimal(t *testing.T) {
	tests := []struct {
		give, unit time.Duration
		want       string
	}{
		{0, time.Second, "0"},
		{3 * time.Second, time.Second, "3"},
		{1500 * time.Millisecond, time.Second, "1.5"},
		{-250 * time.Millisecond, time.Second, "-0.25"},
		{time.Nanosecond, time.Second, "0.000000001"},
		{1500 * time.Millisecond, time.Millisecond, "1500"},
		{20*time.Millisecond + 500*time.Microsecond, time.Millisecond, "20.5"},
		{math.MaxInt64, time.Second, "9223372036.854775807"},
		{math.MinInt64, time.Second, "-9223372036.854775808"},
	}
	for _, tt := range tests {
		if got := formatDecimal(tt.give, tt.unit); got != tt.want {
			t.Errorf("formatDecimal(%d, %v) = %q, want %q", int64(tt.give), tt.unit, got, tt.want)
		}
	}
}

// ReadValues and ReadBodyValues read what Read and ReadBody read from the
// headers Write writes, for any values: every status class, retry delays
// from either header, none or both, limits of both styles sent or not,
// counts and delays negative, zero, fractional and at the ends of their
// types, resets in the past and the future.
func TestReadValuesIsReadOfWrite(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC)
	rng := rand.New(rand.NewPCG(1, 2))
	durations := func() time.Duration {
		switch rng.IntN(8) {
		case 0:
			return 0
		case 1:
			return math.MaxInt64
		case 2:
			return math.MinInt64
		case 3:
			return -time.Duration(rng.Int64N(int64(time.Hour)))
		case 4:
			return time.Duration(rng.Int64N(100)) * time.Second
		case 5:
			return time.Duration(rng.Int64N(100_000)) * time.Millisecond
		default:
			return time.Duration(rng.Int64N(int64(time.Hour)))
		}
	}
	counts := func() int64 {
		switch rng.IntN(6) {
		case 0:
			return 0
		case 1:
			return math.MaxInt64
		case 2:
			return math.MinInt64
		case 3:
			return -rng.Int64N(100)
		default:
			return rng.Int64N(100_000)
		}
	}
	limit := func() Limit {
		if rng.IntN(3) == 0 {
			return Limit{}
		}
		at := now.Add(durations() / 1000)
		if rng.IntN(2) == 0 {
			at = at.Truncate(time.Second)
		}
		return Limit{Sent: true, Limit: counts(), Remaining: counts(), Reset: durations(), ResetAt: at}
	}
	statuses := []int{200, 204, 400, 409, 429, 500, 502, 503, 529, 0}
	bodies := [][]byte{nil,
		[]byte(`{"error":{"code":"insufficient_quota","message":"no credit"}}`),
		[]byte(`{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"13s"}]}}`),
	}
	for i := range 5_000 {
		v := Headers{HasPreciseRetryAfter: rng.IntN(3) == 0, HasRetryAfter: rng.IntN(2) == 0}
		if v.HasPreciseRetryAfter {
			v.PreciseRetryAfter = durations()
		}
		if v.HasRetryAfter {
			v.RetryAfter = durations()
		}
		for k := range v.OpenAI {
			v.OpenAI[k] = limit()
		}
		for k := range v.Anthropic {
			v.Anthropic[k] = limit()
		}
		h := http.Header{}
		v.Write(h)
		status, body := statuses[i%len(statuses)], bodies[rng.IntN(len(bodies))]
		if got, want := ReadValues(status, &v, now), Read(status, h, now); got != want {
			t.Fatalf("ReadValues(%d, %+v) = %+v, Read of %v = %+v", status, v, got, h, want)
		}
		if got, want := ReadBodyValues(status, &v, body, now), ReadBody(status, h, body, now); !reflect.DeepEqual(got, want) {
			t.Fatalf("ReadBodyValues(%d, %+v, %s) = %+v, ReadBody of %v = %+v", status, v, body, got, h, want)
		}
	}
}
