package httptool

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/simbench/simbench/sched"
)

// quotaHeader names one limit's remaining count and reset header.
type quotaHeader struct {
	remaining, reset, limit string
	rfc3339                 bool // reset is an RFC 3339 time, else a duration
}

// Header pairs read by Quota, by limit.
var (
	requestQuota = [...]quotaHeader{
		{remaining: "X-Ratelimit-Remaining-Requests", reset: "X-Ratelimit-Reset-Requests", limit: "X-Ratelimit-Limit-Requests"},
		{remaining: "Anthropic-Ratelimit-Requests-Remaining", reset: "Anthropic-Ratelimit-Requests-Reset", limit: "Anthropic-Ratelimit-Requests-Limit", rfc3339: true},
	}
	tokenQuota = [...]quotaHeader{
		{remaining: "X-Ratelimit-Remaining-Tokens", reset: "X-Ratelimit-Reset-Tokens", limit: "X-Ratelimit-Limit-Tokens"},
		{remaining: "Anthropic-Ratelimit-Tokens-Remaining", reset: "Anthropic-Ratelimit-Tokens-Reset", limit: "Anthropic-Ratelimit-Tokens-Limit", rfc3339: true},
		{remaining: "Anthropic-Ratelimit-Input-Tokens-Remaining", reset: "Anthropic-Ratelimit-Input-Tokens-Reset", limit: "Anthropic-Ratelimit-Input-Tokens-Limit", rfc3339: true},
		{remaining: "Anthropic-Ratelimit-Output-Tokens-Remaining", reset: "Anthropic-Ratelimit-Output-Tokens-Reset", limit: "Anthropic-Ratelimit-Output-Tokens-Limit", rfc3339: true},
	}
)

// Quota returns what the response headers h say is left of the service's
// request and token limits, with resets measured from now (the time the
// response arrived) and the published limits from the matching -limit
// headers (x-ratelimit-limit-*, anthropic-ratelimit-*-limit) when they
// parse as a positive whole number. It is a pure function; the scheduler lowers its
// buckets to the result when sched.ServiceConfig.HeaderSync is set.
//
//   - OpenAI: x-ratelimit-remaining-{requests,tokens}, whole counts, with
//     x-ratelimit-reset-{requests,tokens} as Go-style durations ("1s",
//     "6m0s", "20ms"; a bare number is seconds).
//   - Anthropic: anthropic-ratelimit-requests-remaining and
//     anthropic-ratelimit-{tokens,input-tokens,output-tokens}-remaining,
//     with the matching -reset headers as RFC 3339 times.
//
// Where several token limits are reported the one with the fewest tokens
// left wins (its reset with it). A remaining count that does not parse as a
// whole number is ignored, as is a reset that does not parse (the count is
// kept, with a zero Reset); negative counts and resets in the past become 0.
func Quota(h http.Header, now time.Time) sched.ServerQuota {
	return sched.ServerQuota{Requests: quotaOf(h, requestQuota[:], now), Tokens: quotaOf(h, tokenQuota[:], now)}
}

// quotaOf reads the first (fewest left) of the given limits the headers report.
func quotaOf(h http.Header, names []quotaHeader, now time.Time) sched.QuotaLeft {
	var best sched.QuotaLeft
	for _, q := range names {
		v := strings.TrimSpace(h.Get(q.remaining))
		if v == "" {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			continue
		}
		left := sched.QuotaLeft{Known: true, Remaining: max(n, 0)}
		if l, err := strconv.ParseInt(strings.TrimSpace(h.Get(q.limit)), 10, 64); err == nil && l > 0 {
			left.Limit = l
		}
		if r := h.Get(q.reset); r != "" {
			if q.rfc3339 {
				if t, err := time.Parse(time.RFC3339, strings.TrimSpace(r)); err == nil {
					left.Reset = nonNegative(t.Sub(now))
				}
			} else if d, ok := parseResetDuration(r); ok {
				left.Reset = d
			}
		}
		if !best.Known || left.Remaining < best.Remaining {
			best = left
		}
	}
	return best
}
