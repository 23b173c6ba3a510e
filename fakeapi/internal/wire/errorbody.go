package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/simbench/simbench/spec"
)

// ErrorBody renders an error in the API style's shape (provider.ErrorBody).
// extra holds what the shapes read: "kind" (the decision's Kind),
// "limit" (the Limit of a 429), "request_id" (which the Anthropic shape
// sends beside the error), "retry_after_ms", and "retry_delay", a
// time.Duration sent in every style as Google APIs send one:
// error.details[] holding a google.rpc.RetryInfo with retryDelay in seconds
// ("1.5s"). The generic shape puts the other fields in the error object.
func ErrorBody(api spec.APIStyle, status int, message string, extra map[string]any) []byte {
	v, e := ProviderOf(api).errorBody(status, message, extra)
	if d, ok := extra["retry_delay"].(time.Duration); ok {
		details, _ := e["details"].([]any) // the provider's own, if any (gemini.go)
		e["details"] = append(details, map[string]any{"@type": RetryInfoType, "retryDelay": strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"})
	}
	// Without HTML escaping, as providers send "prompt is too long: N tokens > W".
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v) //nolint:errcheck // maps of strings and numbers always encode
	return b.Bytes()
}

// RetryInfoType is the @type of the google.rpc.RetryInfo detail in which
// an error body carries its retry delay (spec.Faults.RetryDelayBody).
const RetryInfoType = "type.googleapis.com/google.rpc.RetryInfo"

// spentCreditMessage words a refusal for spent credit by service as
// OpenAI does.
func spentCreditMessage(service string) string {
	return fmt.Sprintf("You exceeded your current quota on service %s, please check your plan and billing details. Waiting does not help: retry after adding credit.", service)
}
