package httptool

import (
	"math"
	"net/http"
	"strings"
	"time"
)

// Header names read by RetryDelay, in the order they are consulted.
const (
	// HeaderRetryAfterMs is a delay in milliseconds (decimals allowed), sent
	// by OpenAI and Azure OpenAI.
	HeaderRetryAfterMs = "Retry-After-Ms"
	// HeaderRetryAfter is RFC 9110's delay: whole (or, leniently, decimal)
	// seconds, or an HTTP-date.
	HeaderRetryAfter = "Retry-After"
)

// RetryDelay returns the delay, measured from now (the time the response
// arrived), that the headers ask a client to wait before retrying, and
// whether they give one. It is a pure function.
//
// Sources are consulted in order and the first usable one wins:
//
//  1. retry-after-ms: milliseconds, decimals allowed ("1500", "20.5").
//  2. Retry-After: seconds, integer or decimal ("30", "1.5"), or an
//     HTTP-date, taken relative to now.
//  3. OpenAI's x-ratelimit-reset-requests and x-ratelimit-reset-tokens:
//     durations in Go syntax ("6ms", "1m2s", "1.5s"; a bare number is
//     seconds). Of those whose x-ratelimit-remaining-* is 0 or absent the
//     larger wins; when every parsed reset has a positive remaining count
//     (a request larger than what is left) the larger of all wins.
//  4. Anthropic's anthropic-ratelimit-{requests,tokens,input-tokens,
//     output-tokens}-reset: RFC 3339 timestamps relative to now, chosen by
//     the same rule with the matching -remaining headers.
//
// A value that does not parse is ignored, so the next source applies, and
// with none the scheduler's backoff policy does. Negative delays (a date in
// the past) become 0. Delays too large for a time.Duration saturate at
// math.MaxInt64; the caller decides what is too long.
func RetryDelay(h http.Header, now time.Time) (time.Duration, bool) {
	r := parse(h, now, true)
	return r.retryDelay()
}

// retryDelay applies RetryDelay's order of sources to r.
func (r *reading) retryDelay() (time.Duration, bool) {
	if r.hasPrecise {
		return r.precise, true
	}
	if r.hasRetry {
		return r.retry, true
	}
	if d, ok := largestReset(r.openAI[:]); ok {
		return d, true
	}
	return largestReset(r.anthropic[:])
}

// parseRetryAfter reads Retry-After as decimal seconds or an HTTP-date.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if d, ok := parseDecimal(v, time.Second); ok {
		return d, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return nonNegative(t.Sub(now)), true
}

// parseResetDuration reads an OpenAI reset value: a Go duration, or a bare
// decimal number of seconds.
func parseResetDuration(v string) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if d, ok := parseDecimal(v, time.Second); ok {
		return d, true
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, false
	}
	return nonNegative(d), true
}

// largestReset applies the remaining-count rule documented on RetryDelay.
func largestReset(ls []limitReading) (time.Duration, bool) {
	var (
		bound, all       time.Duration
		hasBound, hasAny bool
	)
	for _, l := range ls {
		if !l.hasReset {
			continue
		}
		if !hasAny || l.reset > all {
			all, hasAny = l.reset, true
		}
		if l.drained && (!hasBound || l.reset > bound) {
			bound, hasBound = l.reset, true
		}
	}
	if hasBound {
		return bound, true
	}
	return all, hasAny
}

// parseDecimal reads a plain decimal number ("12", "1.5", ".5", "-3") in the
// given unit. Anything else (exponents, "inf", units, spaces inside) is
// rejected. Negative values become 0; values too large saturate.
func parseDecimal(v string, unit time.Duration) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if !isDecimal(v) {
		return 0, false
	}
	suffix := "s"
	if unit == time.Millisecond {
		suffix = "ms"
	}
	d, err := time.ParseDuration(v + suffix)
	if err != nil {
		// The syntax is valid, so the value overflowed a Duration.
		if v[0] == '-' {
			return 0, true
		}
		return math.MaxInt64, true
	}
	return nonNegative(d), true
}

// isDecimal reports whether s is [+-]digits[.digits] with at least one digit.
func isDecimal(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	digits, dot := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && !dot:
			dot = true
		default:
			return false
		}
	}
	return digits > 0
}

func nonNegative(d time.Duration) time.Duration {
	return max(d, 0)
}
