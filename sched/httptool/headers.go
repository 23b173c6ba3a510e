package httptool

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Headers is what an answer's rate-limit headers say, as values: the
// headers Read consults, before they are written as text. A server that
// knows what it sends fills one in, writes it with Write, and a simulator
// of that server reads it with ReadValues, which reads exactly what Read
// reads from the written headers without building or parsing them. The
// zero value is an answer with none of these headers.
type Headers struct {
	// PreciseRetryAfter is retry-after-ms's delay (OpenAI, Azure OpenAI),
	// written in milliseconds, sent when HasPreciseRetryAfter.
	PreciseRetryAfter    time.Duration
	HasPreciseRetryAfter bool
	// RetryAfter is Retry-After's delay, written in seconds, sent when
	// HasRetryAfter.
	RetryAfter    time.Duration
	HasRetryAfter bool
	// OpenAI holds x-ratelimit-{limit,remaining,reset}-* by limit
	// (OpenAIRequests, OpenAITokens); their resets are durations (Reset).
	OpenAI [2]Limit
	// Anthropic holds anthropic-ratelimit-*-{limit,remaining,reset} by limit
	// (AnthropicRequests, AnthropicTokens, AnthropicInputTokens,
	// AnthropicOutputTokens); their resets are times (ResetAt).
	Anthropic [4]Limit
}

// Limit is one rate limit's three headers as values. The zero value sends
// none of them.
type Limit struct {
	// Sent says the limit's headers are sent.
	Sent bool
	// Limit is the published size of the limit (requests or tokens).
	Limit int64
	// Remaining is what is left of it (requests or tokens).
	Remaining int64
	// Reset is when it is full again, measured from the answer: the reset
	// of an OpenAI limit.
	Reset time.Duration
	// ResetAt is when it is full again: the reset of an Anthropic limit.
	ResetAt time.Time
}

// Indexes of Headers.OpenAI and Headers.Anthropic.
const (
	OpenAIRequests = 0
	OpenAITokens   = 1

	AnthropicRequests     = 0
	AnthropicTokens       = 1
	AnthropicInputTokens  = 2
	AnthropicOutputTokens = 3
)

// limitNames names one limit's headers.
type limitNames struct{ limit, remaining, reset string }

// The header names of Headers.OpenAI and Headers.Anthropic, by index.
var (
	openAINames = [...]limitNames{
		OpenAIRequests: {limit: "X-Ratelimit-Limit-Requests", remaining: "X-Ratelimit-Remaining-Requests", reset: "X-Ratelimit-Reset-Requests"},
		OpenAITokens:   {limit: "X-Ratelimit-Limit-Tokens", remaining: "X-Ratelimit-Remaining-Tokens", reset: "X-Ratelimit-Reset-Tokens"},
	}
	anthropicNames = [...]limitNames{
		AnthropicRequests:     {limit: "Anthropic-Ratelimit-Requests-Limit", remaining: "Anthropic-Ratelimit-Requests-Remaining", reset: "Anthropic-Ratelimit-Requests-Reset"},
		AnthropicTokens:       {limit: "Anthropic-Ratelimit-Tokens-Limit", remaining: "Anthropic-Ratelimit-Tokens-Remaining", reset: "Anthropic-Ratelimit-Tokens-Reset"},
		AnthropicInputTokens:  {limit: "Anthropic-Ratelimit-Input-Tokens-Limit", remaining: "Anthropic-Ratelimit-Input-Tokens-Remaining", reset: "Anthropic-Ratelimit-Input-Tokens-Reset"},
		AnthropicOutputTokens: {limit: "Anthropic-Ratelimit-Output-Tokens-Limit", remaining: "Anthropic-Ratelimit-Output-Tokens-Remaining", reset: "Anthropic-Ratelimit-Output-Tokens-Reset"},
	}
)

// Write sets v's headers in h, each value written exactly (Retry-After in
// decimal seconds, retry-after-ms in decimal milliseconds, OpenAI's resets
// as Go durations such as "6ms" or "1m2s", Anthropic's as RFC 3339 times
// with the fraction of a second they have), so that Read of h reads what
// ReadValues reads of v. Headers v does not send are left as they are.
func (v *Headers) Write(h http.Header) {
	if v.HasPreciseRetryAfter {
		h.Set(HeaderRetryAfterMs, formatDecimal(v.PreciseRetryAfter, time.Millisecond))
	}
	if v.HasRetryAfter {
		h.Set(HeaderRetryAfter, formatDecimal(v.RetryAfter, time.Second))
	}
	for i, l := range v.OpenAI {
		if l.Sent {
			l.write(h, openAINames[i], l.Reset.String())
		}
	}
	for i, l := range v.Anthropic {
		if l.Sent {
			l.write(h, anthropicNames[i], l.ResetAt.UTC().Format(time.RFC3339Nano))
		}
	}
}

// write sets l's headers, named by n, in h, its reset written as reset.
func (l *Limit) write(h http.Header, n limitNames, reset string) {
	h.Set(n.limit, strconv.FormatInt(l.Limit, 10))
	h.Set(n.remaining, strconv.FormatInt(l.Remaining, 10))
	h.Set(n.reset, reset)
}

// formatDecimal writes d in unit (a power of ten of nanoseconds) as an
// exact decimal number: "3", "1.5", "-0.25".
func formatDecimal(d, unit time.Duration) string {
	mag := uint64(d)
	if d < 0 {
		mag = -mag // exact for math.MinInt64 too, in uint64
	}
	s := strconv.FormatUint(mag/uint64(unit), 10)
	if frac := mag % uint64(unit); frac != 0 {
		digits := len(strconv.FormatUint(uint64(unit), 10)) - 1
		f := strconv.FormatUint(frac, 10)
		s += "." + strings.TrimRight(strings.Repeat("0", digits-len(f))+f, "0")
	}
	if d < 0 {
		s = "-" + s
	}
	return s
}

// reading is what an answer's headers say once parsed at the time the
// answer arrived: the one form both Read (from text) and ReadValues (from
// Headers) reach, from which RetryDelay's and Quota's rules take their
// figures.
type reading struct {
	precise, retry       time.Duration // not negative
	hasPrecise, hasRetry bool
	openAI               [len(openAINames)]limitReading
	anthropic            [len(anthropicNames)]limitReading
}

// limitReading is what one limit's headers say.
type limitReading struct {
	// reset is the time left until the limit resets, not negative; hasReset
	// says the reset header parses.
	reset    time.Duration
	hasReset bool
	// drained says the remaining count is 0 or less, absent or unreadable:
	// RetryDelay's test of whether the limit is the one that binds.
	drained bool
	// remaining is the remaining count, not negative, when it parses as a
	// whole number (hasRemaining): Quota's reading of it.
	remaining    int64
	hasRemaining bool
	// limit is the published limit when it parses as a positive whole
	// number, else 0.
	limit int64
}

// parse reads h at now. The retry headers are read only when retry is set
// (an answer other than 2xx).
func parse(h http.Header, now time.Time, retry bool) reading {
	var r reading
	if retry {
		r.precise, r.hasPrecise = parseDecimal(h.Get(HeaderRetryAfterMs), time.Millisecond)
		r.retry, r.hasRetry = parseRetryAfter(h.Get(HeaderRetryAfter), now)
	}
	for i, n := range openAINames {
		r.openAI[i] = parseLimit(h, n, parseResetDuration)
	}
	for i, n := range anthropicNames {
		r.anthropic[i] = parseLimit(h, n, func(v string) (time.Duration, bool) {
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				return 0, false
			}
			return nonNegative(t.Sub(now)), true
		})
	}
	return r
}

// parseLimit reads the headers named n, the reset with parseReset (given
// a trimmed value that is not empty).
func parseLimit(h http.Header, n limitNames, parseReset func(string) (time.Duration, bool)) limitReading {
	var l limitReading
	if v := strings.TrimSpace(h.Get(n.reset)); v != "" {
		l.reset, l.hasReset = parseReset(v)
	}
	remaining := strings.TrimSpace(h.Get(n.remaining))
	f, err := strconv.ParseFloat(remaining, 64)
	l.drained = err != nil || math.IsNaN(f) || f <= 0
	if n, err := strconv.ParseInt(remaining, 10, 64); err == nil {
		l.remaining, l.hasRemaining = max(n, 0), true
	}
	if n, err := strconv.ParseInt(strings.TrimSpace(h.Get(n.limit)), 10, 64); err == nil && n > 0 {
		l.limit = n
	}
	return l
}

// reading is what the headers v describes say when read at now, as parse
// reads them once written (Write).
func (v *Headers) reading(now time.Time, retry bool) reading {
	var r reading
	if retry {
		r.precise, r.hasPrecise = nonNegative(v.PreciseRetryAfter), v.HasPreciseRetryAfter
		r.retry, r.hasRetry = nonNegative(v.RetryAfter), v.HasRetryAfter
	}
	for i := range v.OpenAI {
		r.openAI[i] = v.OpenAI[i].reading(v.OpenAI[i].Reset)
	}
	for i := range v.Anthropic {
		r.anthropic[i] = v.Anthropic[i].reading(v.Anthropic[i].ResetAt.Sub(now))
	}
	return r
}

// reading is what l's headers say, reset being its reset from now.
func (l *Limit) reading(reset time.Duration) limitReading {
	if !l.Sent {
		return limitReading{drained: true}
	}
	r := limitReading{reset: nonNegative(reset), hasReset: true, drained: l.Remaining <= 0,
		remaining: max(l.Remaining, 0), hasRemaining: true}
	if l.Limit > 0 {
		r.limit = l.Limit
	}
	return r
}
