package httptool

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"time"
	"unicode/utf8"
)

// maxMessage bounds the body text quoted in a StatusError, in bytes.
const maxMessage = 200

// bodyInfo is what the adapter reads from a response body.
type bodyInfo struct {
	tokens   int64
	hasUsage bool
	// code and typ are the provider's error code and type ("" when absent).
	code, typ string
	// message is the provider's error message, or the body's text when the
	// body carries none, trimmed for an error string.
	message string
	// retryDelay is the error's google.rpc.RetryInfo retryDelay, when
	// hasRetryDelay.
	retryDelay    time.Duration
	hasRetryDelay bool
}

// envelope holds the fields of interest of an OpenAI- or Anthropic-style
// body. Raw fields are decoded one by one so that one odd field (a numeric
// code, a string error) does not hide the others.
type envelope struct {
	Usage   json.RawMessage `json:"usage"`
	Error   json.RawMessage `json:"error"`
	Message json.RawMessage `json:"message"`
	Detail  json.RawMessage `json:"detail"`
}

type usage struct {
	TotalTokens  *float64 `json:"total_tokens"`
	InputTokens  *float64 `json:"input_tokens"`
	OutputTokens *float64 `json:"output_tokens"`
}

type errorObject struct {
	Message json.RawMessage `json:"message"`
	Type    json.RawMessage `json:"type"`
	Code    json.RawMessage `json:"code"`
	Details json.RawMessage `json:"details"`
}

// detail is one entry of a Google-style error's details: a RetryInfo when
// its @type is retryInfoType.
type detail struct {
	Type       string `json:"@type"`
	RetryDelay string `json:"retryDelay"`
}

// retryInfoType is the @type of a google.rpc.RetryInfo detail.
const retryInfoType = "type.googleapis.com/google.rpc.RetryInfo"

// retryInfo returns the retryDelay of the first RetryInfo in details (a
// JSON array) that parses: protobuf's JSON Duration, decimal seconds with
// the suffix "s" ("13s", "1.5s"). Details of another shape give none.
func retryInfo(raw json.RawMessage) (time.Duration, bool) {
	var details []detail
	if len(raw) == 0 || json.Unmarshal(raw, &details) != nil {
		return 0, false
	}
	for _, dt := range details {
		if dt.Type != retryInfoType {
			continue
		}
		if v, ok := strings.CutSuffix(strings.TrimSpace(dt.RetryDelay), "s"); ok {
			if d, ok := parseDecimal(v, time.Second); ok {
				return d, true
			}
		}
	}
	return 0, false
}

// inspect reads usage and error details from body. A body that is not a
// JSON object yields only its trimmed text as the message.
func inspect(body []byte) bodyInfo {
	var info bodyInfo
	trimmed := bytes.TrimSpace(body)
	var env envelope
	if len(trimmed) == 0 || trimmed[0] != '{' || json.Unmarshal(trimmed, &env) != nil {
		info.message = trimMessage(string(body))
		return info
	}
	info.tokens, info.hasUsage = readUsage(env.Usage)
	if s, ok := jsonString(env.Error); ok {
		info.message = s
	} else {
		var eo errorObject
		if json.Unmarshal(env.Error, &eo) == nil {
			info.message, _ = jsonString(eo.Message)
			info.typ, _ = jsonString(eo.Type)
			info.code, _ = jsonString(eo.Code)
		}
		info.retryDelay, info.hasRetryDelay = retryInfo(eo.Details)
	}
	if info.message == "" {
		info.message, _ = jsonString(env.Message)
	}
	if info.message == "" {
		info.message, _ = jsonString(env.Detail)
	}
	if info.message == "" {
		info.message = string(trimmed)
	}
	info.message = trimMessage(info.message)
	return info
}

// readUsage returns usage.total_tokens (OpenAI) or usage.input_tokens +
// usage.output_tokens (Anthropic). Counts must be whole and non-negative.
func readUsage(raw json.RawMessage) (int64, bool) {
	var u usage
	if len(raw) == 0 || json.Unmarshal(raw, &u) != nil {
		return 0, false
	}
	if n, ok := count(u.TotalTokens); ok {
		return n, true
	}
	in, okIn := count(u.InputTokens)
	out, okOut := count(u.OutputTokens)
	if !okIn && !okOut {
		return 0, false
	}
	if (okIn && u.OutputTokens != nil && !okOut) || (okOut && u.InputTokens != nil && !okIn) {
		return 0, false
	}
	return in + out, true
}

// count converts a JSON token count, rejecting fractions, negatives and
// values beyond float64's exact integers.
func count(f *float64) (int64, bool) {
	if f == nil {
		return 0, false
	}
	v := *f
	if v < 0 || v > 1<<53 || v != math.Trunc(v) {
		return 0, false
	}
	return int64(v), true
}

// jsonString decodes a JSON string, or renders a JSON number as text (some
// providers send numeric error codes).
func jsonString(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String(), true
	}
	return "", false
}

// trimMessage collapses whitespace and cuts s to maxMessage bytes on a rune
// boundary, marking the cut with an ellipsis. Invalid UTF-8 is replaced.
func trimMessage(s string) string {
	s = strings.Join(strings.Fields(strings.ToValidUTF8(s, "\uFFFD")), " ")
	if len(s) <= maxMessage {
		return s
	}
	cut := maxMessage
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// isQuotaExhausted reports whether an error body says the account's quota is
// spent (OpenAI's insufficient_quota), as opposed to a rate limit.
func (b *bodyInfo) isQuotaExhausted() bool {
	return b.code == "insufficient_quota" || b.typ == "insufficient_quota"
}

// isContextTooLong reports whether an error body says the request exceeds the
// model's context: OpenAI's context_length_exceeded, or Anthropic's
// "prompt is too long" message.
func (b *bodyInfo) isContextTooLong() bool {
	return b.code == "context_length_exceeded" || b.typ == "context_length_exceeded" ||
		strings.HasPrefix(b.message, "prompt is too long")
}

// codeOrType returns the provider's error code, else its error type.
func (b *bodyInfo) codeOrType() string {
	if b.code != "" {
		return b.code
	}
	return b.typ
}
