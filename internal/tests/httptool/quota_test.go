package httptool_test

import (
	. "github.com/simbench/simbench/sched/httptool"
	"net/http"
	"testing"
	"time"

	"github.com/simbench/simbench/sched"
)

func TestQuota(t *testing.T) {
	at := func(d time.Duration) string { return testNow.Add(d).Format(time.RFC3339) }
	left := func(n int64, reset time.Duration) sched.QuotaLeft {
		return sched.QuotaLeft{Known: true, Remaining: n, Reset: reset}
	}
	of := func(q sched.QuotaLeft, limit int64) sched.QuotaLeft { q.Limit = limit; return q }
	tests := []struct {
		name string
		give http.Header
		want sched.ServerQuota
	}{
		{name: "no headers", give: headers()},
		{name: "openai", give: headers(
			"X-Ratelimit-Limit-Requests", "500", "X-Ratelimit-Remaining-Requests", "499", "X-Ratelimit-Reset-Requests", "120ms",
			"X-Ratelimit-Limit-Tokens", "30000", "X-Ratelimit-Remaining-Tokens", "29000", "X-Ratelimit-Reset-Tokens", "6m0s"),
			want: sched.ServerQuota{Requests: of(left(499, 120*time.Millisecond), 500), Tokens: of(left(29000, 6*time.Minute), 30000)}},
		{name: "openai 1s and bare seconds", give: headers(
			"x-ratelimit-remaining-requests", "0", "x-ratelimit-reset-requests", "1s",
			"x-ratelimit-remaining-tokens", "7", "x-ratelimit-reset-tokens", "1.5"),
			want: sched.ServerQuota{Requests: left(0, time.Second), Tokens: left(7, 1500*time.Millisecond)}},
		{name: "openai 20ms", give: headers("x-ratelimit-remaining-requests", "3", "x-ratelimit-reset-requests", "20ms"),
			want: sched.ServerQuota{Requests: left(3, 20*time.Millisecond)}},
		{name: "anthropic, fewest tokens wins", give: headers(
			"Anthropic-Ratelimit-Requests-Limit", "50", "Anthropic-Ratelimit-Requests-Remaining", "40", "Anthropic-Ratelimit-Requests-Reset", at(2*time.Second),
			"Anthropic-Ratelimit-Tokens-Remaining", "9000", "Anthropic-Ratelimit-Tokens-Reset", at(5*time.Second),
			"Anthropic-Ratelimit-Input-Tokens-Remaining", "8000", "Anthropic-Ratelimit-Input-Tokens-Reset", at(7*time.Second),
			"Anthropic-Ratelimit-Output-Tokens-Remaining", "12000", "Anthropic-Ratelimit-Output-Tokens-Reset", at(time.Second)),
			want: sched.ServerQuota{Requests: of(left(40, 2*time.Second), 50), Tokens: left(8000, 7*time.Second)}},
		{name: "garbage or zero limit ignored", give: headers("x-ratelimit-remaining-requests", "3", "x-ratelimit-limit-requests", "many",
			"x-ratelimit-remaining-tokens", "4", "x-ratelimit-limit-tokens", "0"),
			want: sched.ServerQuota{Requests: left(3, 0), Tokens: left(4, 0)}},
		{name: "anthropic reset in the past is zero", give: headers(
			"anthropic-ratelimit-requests-remaining", "0", "anthropic-ratelimit-requests-reset", at(-time.Minute)),
			want: sched.ServerQuota{Requests: left(0, 0)}},
		{name: "garbage count ignored", give: headers("x-ratelimit-remaining-requests", "lots", "x-ratelimit-reset-requests", "1s")},
		{name: "decimal count ignored", give: headers("x-ratelimit-remaining-tokens", "1.5")},
		{name: "garbage reset keeps the count", give: headers("x-ratelimit-remaining-requests", "5", "x-ratelimit-reset-requests", "soon"),
			want: sched.ServerQuota{Requests: left(5, 0)}},
		{name: "negative count is zero", give: headers("x-ratelimit-remaining-requests", "-2"),
			want: sched.ServerQuota{Requests: left(0, 0)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Quota(tt.give, testNow); got != tt.want {
				t.Errorf("Quota = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestExecuteQuota checks that Execute passes the quota headers of both a
// success and a 429 into the outcome.
func TestExecuteQuota(t *testing.T) {
	for _, status := range []int{200, 429} {
		tool, _ := newTool(respond(status, `{}`, "x-ratelimit-limit-requests", "60", "x-ratelimit-remaining-requests", "2", "x-ratelimit-reset-requests", "6m0s",
			"x-ratelimit-remaining-tokens", "100", "x-ratelimit-reset-tokens", "20ms"))
		o := tool.Execute(t.Context(), testCall, 1)
		want := sched.ServerQuota{
			Requests: sched.QuotaLeft{Known: true, Remaining: 2, Limit: 60, Reset: 6 * time.Minute},
			Tokens:   sched.QuotaLeft{Known: true, Remaining: 100, Reset: 20 * time.Millisecond},
		}
		if o.Quota != want {
			t.Errorf("status %d: Quota = %+v, want %+v", status, o.Quota, want)
		}
	}
}
