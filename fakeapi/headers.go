package fakeapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/simbench/simbench/spec"
)

// SetHeaders adds the rate-limit headers of style to h for decision d; wall
// is the wall-clock time of the decision, used for RFC 3339 resets. Quota
// headers go on every response of a limited service, retry headers on 429s
// that carry a delay.
//
//   - openai: retry-after (whole seconds, rounded up), retry-after-ms, and
//     x-ratelimit-{limit,remaining,reset}-{requests,tokens}, resets as
//     durations such as "6ms" or "1m2s".
//   - anthropic: retry-after (whole seconds) and
//     anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,reset},
//     resets as RFC 3339 times. The input-tokens and output-tokens headers
//     report the ITPM and OTPM limits (ServiceConfig.InputTPM, OutputTPM)
//     where set, and the single TPM limit otherwise, which the tokens
//     headers always report.
//   - standard: Retry-After only. none: nothing.
//
// A 429 whose RetryIn is spec.RetryDelayInstead states its delay in the
// body only: no Retry-After or Retry-After-Ms. A refusal for spent credit
// (KindQuotaExhausted) carries x-should-retry: false in every style, the
// header by which a server tells the official OpenAI and Anthropic SDKs
// not to retry an answer whose status they would otherwise retry (a 429).
func (d *Decision) SetHeaders(h http.Header, style spec.HeaderStyle, wall time.Time) {
	if d.Kind == KindQuotaExhausted {
		h.Set(HeaderShouldRetry, "false")
	}
	retry := d.Kind == KindRateLimited && d.HasRetryAfter && d.RetryIn != spec.RetryDelayInstead
	switch style {
	case spec.HeadersOpenAI:
		if retry {
			h.Set("Retry-After", seconds(d.RetryAfter))
			h.Set("Retry-After-Ms", strconv.FormatInt(RoundUp(d.RetryAfter, time.Millisecond).Milliseconds(), 10))
		}
		for _, q := range []struct {
			name string
			q    Quota
		}{{"requests", d.Requests}, {"tokens", d.TokenQuota}} {
			if q.q.Limit == 0 {
				continue
			}
			h.Set("X-Ratelimit-Limit-"+q.name, strconv.FormatInt(q.q.Limit, 10))
			h.Set("X-Ratelimit-Remaining-"+q.name, strconv.FormatInt(q.q.Remaining, 10))
			h.Set("X-Ratelimit-Reset-"+q.name, RoundUp(q.q.Reset, time.Millisecond).String())
		}
	case spec.HeadersAnthropic:
		if retry {
			h.Set("Retry-After", seconds(d.RetryAfter))
		}
		set := func(name string, q Quota) {
			if q.Limit == 0 {
				return
			}
			h.Set("Anthropic-Ratelimit-"+name+"-Limit", strconv.FormatInt(q.Limit, 10))
			h.Set("Anthropic-Ratelimit-"+name+"-Remaining", strconv.FormatInt(q.Remaining, 10))
			h.Set("Anthropic-Ratelimit-"+name+"-Reset", wall.Add(RoundUp(q.Reset, time.Second)).UTC().Truncate(time.Second).Format(time.RFC3339))
		}
		set("Requests", d.Requests)
		set("Tokens", d.TokenQuota)
		in, out := d.TokenQuota, d.TokenQuota
		if d.InputTokenQuota.Limit > 0 {
			in = d.InputTokenQuota
		}
		if d.OutputTokenQuota.Limit > 0 {
			out = d.OutputTokenQuota
		}
		set("Input-Tokens", in)
		set("Output-Tokens", out)
	case spec.HeadersStandard:
		if retry {
			h.Set("Retry-After", seconds(d.RetryAfter))
		}
	}
}

// seconds formats d as whole seconds, rounded up.
func seconds(d time.Duration) string {
	return strconv.FormatInt(int64(RoundUp(d, time.Second)/time.Second), 10)
}

// Answer adds to h the rate-limit headers of style that the server sends
// with decision d's response (SetHeaders; wall is the wall-clock time of
// the decision) and returns the response's HTTP status in API style api,
// or 0 for a decision answered with no response at all (a hang, a reset).
// The server answers every decision through it, and a simulator that
// reads decisions as a client reads the server's answers calls it too.
func (d *Decision) Answer(api spec.APIStyle, style spec.HeaderStyle, wall time.Time, h http.Header) int {
	d.SetHeaders(h, style, wall)
	return d.HTTPStatus(api)
}

// HTTPStatus is the HTTP status of the server's response to decision d in
// API style api, or 0 for a decision answered with no response (a hang, a
// reset); Answer returns it too.
func (d *Decision) HTTPStatus(api spec.APIStyle) int { return providerStatus(api, d) }

// HeaderShouldRetry is the header the official OpenAI and Anthropic SDKs
// obey over the status when deciding whether to retry ("true" or "false").
const HeaderShouldRetry = "X-Should-Retry"
