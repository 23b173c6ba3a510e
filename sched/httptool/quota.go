package httptool

import (
	"net/http"
	"time"

	"github.com/simbench/simbench/sched"
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
	r := parse(h, now, false)
	return r.quota()
}

// quota applies Quota's rules to r: of the limits of each kind, OpenAI's
// first, the one with the fewest left.
func (r *reading) quota() sched.ServerQuota {
	return sched.ServerQuota{
		Requests: fewestLeft(r.openAI[OpenAIRequests], r.anthropic[AnthropicRequests]),
		Tokens: fewestLeft(r.openAI[OpenAITokens], r.anthropic[AnthropicTokens],
			r.anthropic[AnthropicInputTokens], r.anthropic[AnthropicOutputTokens]),
	}
}

// fewestLeft returns the first of the limits with the fewest left, of those
// whose remaining count reads.
func fewestLeft(ls ...limitReading) sched.QuotaLeft {
	var best sched.QuotaLeft
	for _, l := range ls {
		if !l.hasRemaining {
			continue
		}
		left := sched.QuotaLeft{Known: true, Remaining: l.remaining, Limit: l.limit}
		if l.hasReset {
			left.Reset = l.reset
		}
		if !best.Known || left.Remaining < best.Remaining {
			best = left
		}
	}
	return best
}
