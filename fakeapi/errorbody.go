package fakeapi

import (
	"fmt"
	"time"

	"github.com/simbench/simbench/fakeapi/internal/wire"
	"github.com/simbench/simbench/spec"
)

// The error bodies and messages of rejections; each API style's shape is
// its provider's errorBody (package wire: openai.go, anthropic.go,
// generic.go).

// limitPhrases word each Limit in a rejection message.
var limitPhrases = [numLimits]string{"", "requests per second (RPS)", "requests per min (RPM)", "tokens per min (TPM)", "concurrent requests",
	"input tokens per minute", "output tokens per minute", "requests per day (RPD)", "tokens per day (TPD)"}

// tokenLimitMessage words a 429 of the input- or output-token limit as
// Anthropic does: the limit per minute that the request would exceed, at
// level (levelPhrase).
func tokenLimitMessage(service, level string, d *Decision) string {
	q := d.InputTokenQuota
	if d.Limit == LimitOTPM {
		q = d.OutputTokenQuota
	}
	msg := fmt.Sprintf("This request would exceed the rate limit of %d %s%s on service %s (remaining %d)", q.Limit, limitPhrases[d.Limit], level, service, q.Remaining)
	if d.HasRetryAfter {
		msg += fmt.Sprintf(". Please try again in %v", d.RetryAfter)
	}
	return msg + "."
}

// dailyMessage words a 429 of a spent daily quota: that it is the daily
// limit, its figures, and how long until it resets (the true wait, which
// the retry delay rounds or, on a lying service, shortens or leaves out).
func dailyMessage(c *ServiceConfig, d *Decision) string {
	q := d.DailyQuota
	zone := c.Daily.Zone
	if zone == "" {
		zone = spec.DefaultTimezone
	}
	reset := c.Daily.Reset
	if reset == "" {
		reset = spec.DefaultDailyReset
	}
	msg := fmt.Sprintf("Daily quota exceeded for %s on service %s: Limit %d, Remaining %d. The daily limit resets at %s %s, in %v",
		limitPhrases[d.Limit], c.Name, q.Limit, q.Remaining, reset, zone, RoundUp(q.Reset, time.Second))
	if d.HasRetryAfter {
		msg += fmt.Sprintf(". Please try again in %v", d.RetryAfter)
	}
	return msg + "."
}

// levelPhrase names the level of nested limits that refused d in the
// provider's words, after a space ("" on a service without projects, whose
// messages stay as they were).
func levelPhrase(c *ServiceConfig, d *Decision) string {
	if d.Level == LevelNone {
		return ""
	}
	return " " + wire.ProviderOf(c.API).LevelPhrase(d.Level.String(), d.Scope)
}

// rejectMessage explains a rejection by service c the way providers do,
// naming the limit.
func rejectMessage(c *ServiceConfig, d *Decision, bodyErr error) string {
	service := c.Name
	switch d.Kind {
	case KindRateLimited:
		level := levelPhrase(c, d)
		if d.Limit == LimitITPM || d.Limit == LimitOTPM {
			return tokenLimitMessage(service, level, d)
		}
		if d.Daily() {
			return dailyMessage(c, d)
		}
		q := d.Requests
		if d.Limit == LimitTPM {
			q = d.TokenQuota
		}
		if d.Limit == LimitRPS && d.Requests.Limit > 0 {
			// The headers publish a per-second limit per minute.
			q.Limit /= 60
			if c.RPM > 0 && d.Level == LevelNone {
				// The quota is then the per-minute limit's: its figures
				// are not the per-second limit's, which the body names.
				// (Under nested limits it is the refusing level's
				// per-second limit's.)
				q.Limit = 0
			}
		}
		msg := fmt.Sprintf("Rate limit reached for %s%s on service %s", limitPhrases[d.Limit], level, service)
		if d.Limit != LimitConcurrency && q.Limit > 0 {
			msg += fmt.Sprintf(": Limit %d, Remaining %d", q.Limit, q.Remaining)
			if d.Limit == LimitTPM {
				msg += fmt.Sprintf(", Requested %d", d.Tokens)
			}
		}
		if d.HasRetryAfter {
			msg += fmt.Sprintf(". Please try again in %v", d.RetryAfter)
		}
		return msg + "."
	case KindOverloaded:
		return "The server is overloaded. Please retry your request after a brief wait."
	case KindUnauthorized:
		return "Incorrect or missing API key. Send Authorization: Bearer KEY or x-api-key: KEY."
	case KindTooLarge:
		if d.Limit == LimitITPM || d.Limit == LimitOTPM {
			return fmt.Sprintf("Request too large: it asks for more %s than the rate limit of service %s allows in one minute, so it can never be admitted.", limitPhrases[d.Limit], service)
		}
		if d.Limit == LimitTPM || d.Limit == LimitTPD {
			return fmt.Sprintf("Request too large for %s on service %s: Requested %d, which can never be admitted.", limitPhrases[d.Limit], service, d.Tokens)
		}
		return "Request body too large."
	case KindConflict:
		return fmt.Sprintf("Conflict on service %s: another write to this resource was in progress and commits first; retry the write, after a backoff.", service)
	case KindQuotaExhausted:
		return wire.ProviderOf(c.API).QuotaMessage(service)
	case KindContextTooLong:
		return wire.ProviderOf(c.API).ContextMessage(c.Faults.ContextWindow, d.InputTokens)
	case KindBadRequest:
		if bodyErr != nil {
			return bodyErr.Error()
		}
		return "Bad request."
	}
	return "The server had an error while processing your request."
}

// rejectionBody is the body of the answer with status to request id, which
// service c rejected at once with decision d; seen is d with its delays in
// real time (d itself in virtual time), bodyErr why the body did not
// decode.
func rejectionBody(c *ServiceConfig, id string, status int, d, seen *Decision, bodyErr error) []byte {
	extra := errorExtra(c.API, d.Kind, "req_"+id)
	if d.Kind == KindRateLimited || d.Kind == KindTooLarge && (d.Limit == LimitTPM || d.Limit == LimitTPD) {
		extra["limit"] = d.Limit.String()
		if d.HasRetryAfter {
			extra["retry_after_ms"] = RoundUp(seen.RetryAfter, time.Millisecond).Milliseconds()
			if d.RetryIn != "" {
				extra["retry_delay"] = seen.RetryAfter
			}
		}
	}
	return wire.ErrorBody(c.API, status, rejectMessage(c, d, bodyErr), extra)
}

// RejectionBody is the JSON body service c sends with status for decision
// d, an immediate rejection (a 429, an overload, a spent credit, a context
// too long): what a simulator reads, as a live client reads the server's
// answer, when the body says more than the status and headers do.
func (d *Decision) RejectionBody(c *ServiceConfig, status int) []byte {
	return rejectionBody(c, "sim", status, d, d, nil)
}

// errorExtra is the extra fields of errorBody for a decision of kind k
// answered to request requestID.
func errorExtra(api spec.APIStyle, k Kind, requestID string) map[string]any {
	extra := map[string]any{"kind": k.String()}
	wire.ProviderOf(api).ErrorExtra(extra, requestID)
	return extra
}
