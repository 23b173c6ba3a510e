package fakeapi

import (
	"net/http"
	"time"

	"github.com/simbench/simbench/fakeapi/internal/wire"
	"github.com/simbench/simbench/sched/httptool"
	"github.com/simbench/simbench/spec"
)

// SetHeaders adds the rate-limit headers of style to h for decision d
// (RateHeaders, written by httptool's Headers.Write); wall is the
// wall-clock time of the decision, used for RFC 3339 resets. A refusal for
// spent credit (KindQuotaExhausted) also carries x-should-retry: false in
// every style, the header by which a server tells the official OpenAI and
// Anthropic SDKs not to retry an answer whose status they would otherwise
// retry (a 429).
func (d *Decision) SetHeaders(h http.Header, style spec.HeaderStyle, wall time.Time) {
	if d.Kind == KindQuotaExhausted {
		h.Set(HeaderShouldRetry, "false")
	}
	v := d.RateHeaders(style, wall)
	v.Write(h)
}

// RateHeaders returns, as values, the rate-limit headers of style that the
// server sends with decision d's response; wall is the wall-clock time of
// the decision, from which Anthropic's resets are times. The server writes
// them (SetHeaders) and a simulator reads them as they are
// (httptool.ReadValues), so both take them from here. Quota headers go on
// every response of a limited service, retry headers on 429s that carry a
// delay.
//
//   - openai: retry-after (whole seconds, rounded up), retry-after-ms
//     (whole milliseconds, rounded up), and
//     x-ratelimit-{limit,remaining,reset}-{requests,tokens}, resets rounded
//     up to the millisecond (written as durations such as "6ms" or "1m2s").
//   - anthropic: retry-after (whole seconds) and
//     anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,reset},
//     resets rounded up to the second, as times in whole seconds (written
//     in RFC 3339). The input-tokens and output-tokens headers report the
//     ITPM and OTPM limits (ServiceConfig.InputTPM, OutputTPM) where set,
//     and the single TPM limit otherwise, which the tokens headers always
//     report.
//   - standard: Retry-After only. none: nothing.
//
// A 429 whose RetryIn is spec.RetryDelayInstead states its delay in the
// body only: no Retry-After or Retry-After-Ms.
func (d *Decision) RateHeaders(style spec.HeaderStyle, wall time.Time) httptool.Headers {
	var v httptool.Headers
	retry := d.Kind == KindRateLimited && d.HasRetryAfter && d.RetryIn != spec.RetryDelayInstead
	if retry && (style == spec.HeadersOpenAI || style == spec.HeadersAnthropic || style == spec.HeadersStandard) {
		v.RetryAfter, v.HasRetryAfter = wholeUnits(d.RetryAfter, time.Second), true
	}
	switch style {
	case spec.HeadersOpenAI:
		if retry {
			v.PreciseRetryAfter, v.HasPreciseRetryAfter = wholeUnits(d.RetryAfter, time.Millisecond), true
		}
		for i, q := range [...]Quota{httptool.OpenAIRequests: d.Requests, httptool.OpenAITokens: d.TokenQuota} {
			if q.Limit != 0 {
				v.OpenAI[i] = httptool.Limit{Sent: true, Limit: q.Limit, Remaining: q.Remaining, Reset: RoundUp(q.Reset, time.Millisecond)}
			}
		}
	case spec.HeadersAnthropic:
		in, out := d.TokenQuota, d.TokenQuota
		if d.InputTokenQuota.Limit > 0 {
			in = d.InputTokenQuota
		}
		if d.OutputTokenQuota.Limit > 0 {
			out = d.OutputTokenQuota
		}
		for i, q := range [...]Quota{httptool.AnthropicRequests: d.Requests, httptool.AnthropicTokens: d.TokenQuota,
			httptool.AnthropicInputTokens: in, httptool.AnthropicOutputTokens: out} {
			if q.Limit != 0 {
				at := wall.Add(RoundUp(q.Reset, time.Second)).UTC().Truncate(time.Second)
				v.Anthropic[i] = httptool.Limit{Sent: true, Limit: q.Limit, Remaining: q.Remaining, ResetAt: at}
			}
		}
	}
	return v
}

// wholeUnits is d rounded up to a whole number of units, or, for the longest
// delays, the most whole units a Duration holds.
func wholeUnits(d, unit time.Duration) time.Duration {
	return RoundUp(d, unit).Truncate(unit)
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
func (d *Decision) HTTPStatus(api spec.APIStyle) int {
	return wire.ProviderOf(api).Status(d.Kind.String(), d.Limit.String(), d.Status)
}

// HeaderShouldRetry is the header the official OpenAI and Anthropic SDKs
// obey over the status when deciding whether to retry ("true" or "false").
const HeaderShouldRetry = "X-Should-Retry"
