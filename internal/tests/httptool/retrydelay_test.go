package httptool_test

import (
	. "github.com/simbench/simbench/sched/httptool"
	"math"
	"net/http"
	"testing"
	"time"
)

var testNow = time.Date(2025, time.March, 4, 12, 0, 0, 0, time.UTC)

func headers(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

func TestRetryDelay(t *testing.T) {
	in := func(d time.Duration) string { return testNow.Add(d).Format(time.RFC3339Nano) }
	httpDate := func(d time.Duration, layout string) string { return testNow.Add(d).Format(layout) }
	tests := []struct {
		name   string
		give   http.Header
		want   time.Duration
		wantOK bool
	}{
		{name: "no headers", give: headers()},
		{name: "unrelated headers", give: headers("Content-Type", "application/json")},

		// retry-after-ms
		{name: "ms integer", give: headers("retry-after-ms", "1500"), want: 1500 * time.Millisecond, wantOK: true},
		{name: "ms decimal", give: headers("retry-after-ms", "20.5"), want: 20500 * time.Microsecond, wantOK: true},
		{name: "ms beats Retry-After", give: headers("retry-after-ms", "250", "Retry-After", "1"), want: 250 * time.Millisecond, wantOK: true},
		{name: "ms garbage falls back to Retry-After", give: headers("retry-after-ms", "soon", "Retry-After", "3"), want: 3 * time.Second, wantOK: true},
		{name: "ms negative is zero", give: headers("retry-after-ms", "-40"), want: 0, wantOK: true},
		{name: "ms huge saturates", give: headers("retry-after-ms", "99999999999999999999999"), want: math.MaxInt64, wantOK: true},
		{name: "ms exponent is garbage", give: headers("retry-after-ms", "1e3")},

		// Retry-After seconds
		{name: "seconds", give: headers("Retry-After", "30"), want: 30 * time.Second, wantOK: true},
		{name: "seconds zero", give: headers("Retry-After", "0"), want: 0, wantOK: true},
		{name: "seconds decimal", give: headers("Retry-After", "1.5"), want: 1500 * time.Millisecond, wantOK: true},
		{name: "seconds leading dot", give: headers("Retry-After", ".25"), want: 250 * time.Millisecond, wantOK: true},
		{name: "seconds padded", give: headers("Retry-After", "  7 "), want: 7 * time.Second, wantOK: true},
		{name: "seconds negative is zero", give: headers("Retry-After", "-5"), want: 0, wantOK: true},
		{name: "seconds huge saturates", give: headers("Retry-After", "99999999999999999999"), want: math.MaxInt64, wantOK: true},
		{name: "seconds just below overflow", give: headers("Retry-After", "9223372036"), want: 9223372036 * time.Second, wantOK: true},
		{name: "seconds with unit is garbage", give: headers("Retry-After", "5s")},
		{name: "seconds exponent is garbage", give: headers("Retry-After", "1e3")},
		{name: "inf is garbage", give: headers("Retry-After", "inf")},
		{name: "NaN is garbage", give: headers("Retry-After", "NaN")},
		{name: "two dots is garbage", give: headers("Retry-After", "1.2.3")},
		{name: "sign alone is garbage", give: headers("Retry-After", "-")},
		{name: "empty is absent", give: headers("Retry-After", "")},

		// Retry-After HTTP-date
		{name: "IMF-fixdate", give: headers("Retry-After", httpDate(90*time.Second, http.TimeFormat)), want: 90 * time.Second, wantOK: true},
		{name: "RFC 850 date", give: headers("Retry-After", httpDate(2*time.Minute, time.RFC850)), want: 2 * time.Minute, wantOK: true},
		{name: "asctime date", give: headers("Retry-After", httpDate(time.Hour, time.ANSIC)), want: time.Hour, wantOK: true},
		{name: "date in the past is zero", give: headers("Retry-After", httpDate(-time.Minute, http.TimeFormat)), want: 0, wantOK: true},
		{name: "date now is zero", give: headers("Retry-After", httpDate(0, http.TimeFormat)), want: 0, wantOK: true},
		{name: "garbage date", give: headers("Retry-After", "Tuesday-ish")},
		{name: "RFC 3339 is no HTTP-date", give: headers("Retry-After", in(time.Minute))},

		// OpenAI x-ratelimit-reset-*
		{name: "openai requests exhausted", give: headers(
			"x-ratelimit-reset-requests", "6ms", "x-ratelimit-remaining-requests", "0",
			"x-ratelimit-reset-tokens", "1m2s", "x-ratelimit-remaining-tokens", "100"),
			want: 6 * time.Millisecond, wantOK: true},
		{name: "openai tokens exhausted", give: headers(
			"x-ratelimit-reset-requests", "6ms", "x-ratelimit-remaining-requests", "59",
			"x-ratelimit-reset-tokens", "1m2s", "x-ratelimit-remaining-tokens", "0"),
			want: time.Minute + 2*time.Second, wantOK: true},
		{name: "openai both exhausted: larger", give: headers(
			"x-ratelimit-reset-requests", "20s", "x-ratelimit-remaining-requests", "0",
			"x-ratelimit-reset-tokens", "1.5s", "x-ratelimit-remaining-tokens", "0"),
			want: 20 * time.Second, wantOK: true},
		{name: "openai remaining absent: larger of both", give: headers(
			"x-ratelimit-reset-requests", "1.5s", "x-ratelimit-reset-tokens", "750ms"),
			want: 1500 * time.Millisecond, wantOK: true},
		{name: "openai none exhausted: larger of all", give: headers(
			"x-ratelimit-reset-requests", "2s", "x-ratelimit-remaining-requests", "3",
			"x-ratelimit-reset-tokens", "9s", "x-ratelimit-remaining-tokens", "12"),
			want: 9 * time.Second, wantOK: true},
		{name: "openai only one header", give: headers("x-ratelimit-reset-tokens", "1h2m3.5s"),
			want: time.Hour + 2*time.Minute + 3500*time.Millisecond, wantOK: true},
		{name: "openai bare number is seconds", give: headers("x-ratelimit-reset-requests", "2"), want: 2 * time.Second, wantOK: true},
		{name: "openai garbage reset skipped", give: headers(
			"x-ratelimit-reset-tokens", "soon", "x-ratelimit-remaining-tokens", "0",
			"x-ratelimit-reset-requests", "20s", "x-ratelimit-remaining-requests", "5"),
			want: 20 * time.Second, wantOK: true},
		{name: "openai garbage remaining counts as absent", give: headers(
			"x-ratelimit-reset-requests", "4s", "x-ratelimit-remaining-requests", "many",
			"x-ratelimit-reset-tokens", "8s", "x-ratelimit-remaining-tokens", "10"),
			want: 4 * time.Second, wantOK: true},
		{name: "openai negative is zero", give: headers("x-ratelimit-reset-requests", "-3s"), want: 0, wantOK: true},
		{name: "openai all garbage", give: headers("x-ratelimit-reset-requests", "3 fortnights", "x-ratelimit-reset-tokens", "")},
		{name: "Retry-After beats openai", give: headers("Retry-After", "2", "x-ratelimit-reset-tokens", "30s"), want: 2 * time.Second, wantOK: true},
		{name: "Retry-After garbage falls back to openai", give: headers("Retry-After", "later", "x-ratelimit-reset-tokens", "30s"), want: 30 * time.Second, wantOK: true},

		// Anthropic anthropic-ratelimit-*-reset
		{name: "anthropic requests exhausted", give: headers(
			"anthropic-ratelimit-requests-reset", in(10*time.Second), "anthropic-ratelimit-requests-remaining", "0",
			"anthropic-ratelimit-tokens-reset", in(40*time.Second), "anthropic-ratelimit-tokens-remaining", "5000"),
			want: 10 * time.Second, wantOK: true},
		{name: "anthropic input tokens exhausted", give: headers(
			"anthropic-ratelimit-input-tokens-reset", in(1500*time.Millisecond), "anthropic-ratelimit-input-tokens-remaining", "0",
			"anthropic-ratelimit-output-tokens-reset", in(5*time.Second), "anthropic-ratelimit-output-tokens-remaining", "800"),
			want: 1500 * time.Millisecond, wantOK: true},
		{name: "anthropic output tokens only", give: headers("anthropic-ratelimit-output-tokens-reset", in(3*time.Second)),
			want: 3 * time.Second, wantOK: true},
		{name: "anthropic remaining absent: larger", give: headers(
			"anthropic-ratelimit-requests-reset", in(time.Second), "anthropic-ratelimit-tokens-reset", in(7*time.Second)),
			want: 7 * time.Second, wantOK: true},
		{name: "anthropic zone offset", give: headers("anthropic-ratelimit-tokens-reset", testNow.Add(time.Minute).In(time.FixedZone("", -7*3600)).Format(time.RFC3339)),
			want: time.Minute, wantOK: true},
		{name: "anthropic past is zero", give: headers("anthropic-ratelimit-requests-reset", in(-time.Minute)), want: 0, wantOK: true},
		{name: "anthropic garbage", give: headers("anthropic-ratelimit-requests-reset", "tomorrow", "anthropic-ratelimit-tokens-reset", "1700000000")},
		{name: "Retry-After beats anthropic", give: headers("Retry-After", "4", "anthropic-ratelimit-requests-reset", in(time.Minute)), want: 4 * time.Second, wantOK: true},
		{name: "openai beats anthropic", give: headers("x-ratelimit-reset-requests", "5s", "anthropic-ratelimit-requests-reset", in(time.Minute)), want: 5 * time.Second, wantOK: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := RetryDelay(tt.give, testNow)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("RetryDelay(%v) = %v, %v; want %v, %v", tt.give, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func FuzzRetryDelay(f *testing.F) {
	f.Add("1500", "30", "6ms", "0", "1m2s", "", "2025-03-04T12:00:10Z", "0")
	f.Add("", "Tue, 04 Mar 2025 12:01:00 GMT", "", "", "", "", "", "")
	f.Add("-1", "-99999999999999999999", "-3s", "x", "99999999999h", "5", "1970-01-01T00:00:00Z", "")
	f.Add("1e309", ".", "2", "-1", "NaN", "inf", "9999-12-31T23:59:59Z", "1")
	f.Fuzz(func(t *testing.T, ms, ra, resetReq, remReq, resetTok, remTok, anthReset, anthRem string) {
		h := headers(
			"retry-after-ms", ms, "Retry-After", ra,
			"x-ratelimit-reset-requests", resetReq, "x-ratelimit-remaining-requests", remReq,
			"x-ratelimit-reset-tokens", resetTok, "x-ratelimit-remaining-tokens", remTok,
			"anthropic-ratelimit-tokens-reset", anthReset, "anthropic-ratelimit-tokens-remaining", anthRem,
		)
		d, ok := RetryDelay(h, testNow)
		if d < 0 {
			t.Fatalf("RetryDelay = %v, negative", d)
		}
		if !ok && d != 0 {
			t.Fatalf("RetryDelay = %v, false; want 0 when no delay is given", d)
		}
	})
}
