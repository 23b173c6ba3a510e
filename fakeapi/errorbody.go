package fakeapi

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/simbench/simbench/spec"
)

// The error bodies and messages of rejections, in each API style.

// errorBody renders an error in the API style's shape. extra fields are
// added to the error object (generic style only), except "request_id",
// which Anthropic style sends beside the error, "limit", which makes an
// OpenAI-style 429 of the token limit type "tokens", and "kind", which
// gives an OpenAI-style overload (503) the code "overloaded".
func errorBody(api spec.APIStyle, status int, message string, extra map[string]any) []byte {
	var v any
	switch api {
	case spec.APIAnthropic:
		m := map[string]any{"type": "error", "error": map[string]any{"type": anthropicType(status), "message": message}}
		if id, ok := extra["request_id"]; ok {
			m["request_id"] = id
		}
		v = m
	case spec.APIOpenAI:
		typ, code := openAIType(status)
		if l := extra["limit"]; status == http.StatusTooManyRequests && (l == LimitTPM.String() || l == LimitITPM.String() || l == LimitOTPM.String()) {
			typ = "tokens"
		}
		if extra["kind"] == KindOverloaded.String() {
			code = "overloaded" // OpenAI answers an overload 503 with it
		}
		v = map[string]any{"error": map[string]any{"message": message, "type": typ, "param": nil, "code": code}}
	default:
		e := map[string]any{"type": anthropicType(status), "message": message, "status": status}
		for k, x := range extra {
			e[k] = x
		}
		v = map[string]any{"error": e}
	}
	b, _ := json.Marshal(v)
	return append(b, '\n')
}

// anthropicType is the Anthropic error type of a status.
func anthropicType(status int) string {
	switch status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 404:
		return "not_found_error"
	case 405:
		return "invalid_request_error"
	case 409:
		return "conflict_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	}
	return "api_error"
}

func openAIType(status int) (typ string, code any) {
	switch status {
	case 400, 404, 405:
		return "invalid_request_error", nil
	case 401:
		return "invalid_request_error", "invalid_api_key"
	case 409:
		return "invalid_request_error", "conflict"
	case 413:
		return "invalid_request_error", "request_too_large"
	case 429:
		return "requests", "rate_limit_exceeded"
	case 529:
		return "server_error", "overloaded"
	}
	return "server_error", nil
}

// limitPhrases word each Limit in a rejection message.
var limitPhrases = [numLimits]string{"", "requests per second (RPS)", "requests per min (RPM)", "tokens per min (TPM)", "concurrent requests",
	"input tokens per minute", "output tokens per minute"}

// tokenLimitMessage words a 429 of the input- or output-token limit as
// Anthropic does: the limit per minute that the request would exceed.
func tokenLimitMessage(service string, d *Decision) string {
	q := d.InputTokenQuota
	if d.Limit == LimitOTPM {
		q = d.OutputTokenQuota
	}
	msg := fmt.Sprintf("This request would exceed the rate limit of %d %s on service %s (remaining %d)", q.Limit, limitPhrases[d.Limit], service, q.Remaining)
	if d.HasRetryAfter {
		msg += fmt.Sprintf(". Please try again in %v", d.RetryAfter)
	}
	return msg + "."
}

// rejectMessage explains a rejection the way providers do, naming the limit.
func rejectMessage(service string, d *Decision, bodyErr error) string {
	switch d.Kind {
	case KindRateLimited:
		if d.Limit == LimitITPM || d.Limit == LimitOTPM {
			return tokenLimitMessage(service, d)
		}
		q := d.Requests
		if d.Limit == LimitTPM {
			q = d.TokenQuota
		}
		if d.Limit == LimitRPS && d.Requests.Limit > 0 {
			// The headers publish a per-second limit per minute.
			q.Limit /= 60
		}
		msg := fmt.Sprintf("Rate limit reached for %s on service %s", limitPhrases[d.Limit], service)
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
		if d.Limit == LimitTPM {
			return fmt.Sprintf("Request too large for %s on service %s: Requested %d, which can never be admitted.", limitPhrases[LimitTPM], service, d.Tokens)
		}
		return "Request body too large."
	case KindConflict:
		return fmt.Sprintf("Conflict on service %s: another write to this resource was in progress and commits first; retry the write, after a backoff.", service)
	case KindBadRequest:
		if bodyErr != nil {
			return bodyErr.Error()
		}
		return "Bad request."
	}
	return "The server had an error while processing your request."
}
