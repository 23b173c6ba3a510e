package fakeapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/simbench/simbench/internal/satmath"
)

// endpoint is what a path means for a service.
type endpoint uint8

const (
	epGeneric endpoint = iota
	epChat
	epEmbeddings
	epMessages
	epCountTokens
	epModels
	// epUnknown is a /v1/... path a provider-style service does not answer.
	epUnknown
)

// method is the HTTP method an endpoint answers.
func (ep endpoint) method() string {
	if ep == epModels {
		return http.MethodGet
	}
	return http.MethodPost
}

// route maps a path within a service to its endpoint; ok is false for a
// provider endpoint called with another method than its own. On a
// provider-style service, paths under /v1 that are not its endpoints are
// epUnknown (404); other paths are generic tool paths.
func route(api APIStyle, method, path string) (ep endpoint, ok bool) {
	switch {
	case api == APIOpenAI && path == "/v1/chat/completions":
		ep = epChat
	case api == APIOpenAI && path == "/v1/embeddings":
		ep = epEmbeddings
	case api == APIAnthropic && path == "/v1/messages":
		ep = epMessages
	case api == APIAnthropic && path == "/v1/messages/count_tokens":
		ep = epCountTokens
	case api != APIGeneric && path == "/v1/models":
		ep = epModels
	case api != APIGeneric && (path == "/v1" || strings.HasPrefix(path, "/v1/")):
		return epUnknown, true
	default:
		return epGeneric, true
	}
	return ep, method == ep.method()
}

// knownPaths lists a service's provider endpoints, for 404 messages; the
// last entry is always "/*", the generic tool paths.
func knownPaths(api APIStyle) []string {
	switch api {
	case APIOpenAI:
		return []string{"/v1/chat/completions", "/v1/embeddings", "/v1/models", "/*"}
	case APIAnthropic:
		return []string{"/v1/messages", "/v1/messages/count_tokens", "/v1/models", "/*"}
	}
	return []string{"/*"}
}

// reqBody holds the fields of a request body that the server reads.
type reqBody struct {
	Model               string          `json:"model"`
	Messages            json.RawMessage `json:"messages"`
	Input               json.RawMessage `json:"input"`
	System              json.RawMessage `json:"system"`
	Prompt              json.RawMessage `json:"prompt"`
	MaxTokens           *int64          `json:"max_tokens"`
	MaxCompletionTokens *int64          `json:"max_completion_tokens"`
	Tokens              *int64          `json:"tokens"`
	Resource            *string         `json:"resource"`
	Stream              bool            `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	EncodingFormat string `json:"encoding_format"`
	Dimensions     *int   `json:"dimensions"`
}

// decoded is what the server learns from a request.
type decoded struct {
	model         string
	input, output int64
	resource      string
	hasResource   bool
	// stream asks for server-sent events; includeUsage for OpenAI's final
	// usage chunk.
	stream, includeUsage bool
	// embed is what an embeddings request asks for.
	embed embedRequest
}

// TokensHeader overrides the input-token estimate of a request.
const TokensHeader = "X-Simbench-Tokens"

// ClientHeader tells clients sharing one API key apart for early-retry accounting.
const ClientHeader = "X-Simbench-Client"

// decodeRequest reads the fields the model needs from a body. Input tokens
// are estimated as one per four bytes of the prompt fields (messages, input,
// system, prompt) unless tokensHeader (or a generic body's "tokens") gives
// them; output tokens are max_completion_tokens, max_tokens, or
// defaultOutput for chat and messages, 0 for embeddings and generic tools.
func decodeRequest(ep endpoint, body []byte, tokensHeader string, defaultOutput int64) (decoded, error) {
	var d decoded
	var b reqBody
	trimmed := bytes.TrimSpace(body)
	switch {
	case len(trimmed) == 0 && ep == epGeneric:
	case len(trimmed) == 0:
		return d, errors.New("the request body is empty; send a JSON object")
	case trimmed[0] != '{':
		return d, errors.New("the request body is not a JSON object")
	default:
		if err := json.Unmarshal(trimmed, &b); err != nil {
			return d, fmt.Errorf("the request body is not valid JSON: %v", err)
		}
	}
	if b.Stream && ep != epChat && ep != epMessages {
		return d, errors.New("stream is supported on chat completions and messages only; send stream: false")
	}
	d.stream = b.Stream
	d.includeUsage = b.StreamOptions != nil && b.StreamOptions.IncludeUsage
	d.model = b.Model
	for _, p := range []*int64{b.MaxTokens, b.MaxCompletionTokens, b.Tokens} {
		if p != nil && *p < 0 {
			return d, fmt.Errorf("token counts must not be negative (got %d)", *p)
		}
	}
	switch ep {
	case epChat:
		if len(b.Messages) == 0 {
			return d, errors.New("messages is required")
		}
	case epEmbeddings:
		if len(b.Input) == 0 {
			return d, errors.New("input is required")
		}
		e, err := decodeEmbed(b.Input, b.EncodingFormat, b.Dimensions)
		if err != nil {
			return d, err
		}
		d.embed = e
	case epMessages, epCountTokens:
		if len(b.Messages) == 0 {
			return d, errors.New("messages is required")
		}
		if b.MaxTokens == nil && ep == epMessages {
			return d, errors.New("max_tokens is required")
		}
	}
	prompt := len(b.Messages) + len(b.Input) + len(b.System) + len(b.Prompt)
	d.input = int64(prompt+3) / 4
	switch ep {
	case epChat, epMessages:
		d.output = defaultOutput
		if b.MaxCompletionTokens != nil {
			d.output = *b.MaxCompletionTokens
		} else if b.MaxTokens != nil {
			d.output = *b.MaxTokens
		}
	case epGeneric:
		if b.Tokens != nil {
			d.input = *b.Tokens
		}
	}
	if tokensHeader != "" {
		n, err := strconv.ParseInt(strings.TrimSpace(tokensHeader), 10, 64)
		if err != nil || n < 0 {
			return d, fmt.Errorf("%s %q is not a non-negative integer", TokensHeader, tokensHeader)
		}
		d.input = n
	}
	if b.Resource != nil {
		d.resource, d.hasResource = *b.Resource, true
	}
	return d, nil
}

// okBody renders a successful response of the endpoint's real shape.
func okBody(ep endpoint, service, path, id, model string, created time.Time, in, out int64, dec *decoded) []byte {
	var v any
	switch ep {
	case epChat:
		v = map[string]any{
			"id": "chatcmpl-" + id, "object": "chat.completion", "created": created.Unix(), "model": model,
			"choices": []any{map[string]any{
				"index": 0, "finish_reason": "stop", "logprobs": nil,
				"message": map[string]any{"role": "assistant", "content": answerText, "refusal": nil},
			}},
			"usage": map[string]any{"prompt_tokens": in, "completion_tokens": out, "total_tokens": satmath.Add(in, out)},
		}
	case epEmbeddings:
		v = map[string]any{
			"object": "list", "model": model,
			"data":  dec.embed.data(),
			"usage": map[string]any{"prompt_tokens": in, "total_tokens": in},
		}
	case epMessages:
		v = map[string]any{
			"id": "msg_" + id, "type": "message", "role": "assistant", "model": model,
			"content":     []any{map[string]any{"type": "text", "text": answerText}},
			"stop_reason": "end_turn", "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": in, "output_tokens": out},
		}
	default:
		v = struct {
			OK      bool   `json:"ok"`
			ID      string `json:"id"`
			Service string `json:"service"`
			Path    string `json:"path"`
			Tokens  int64  `json:"tokens"`
		}{true, id, service, path, in + out}
	}
	b, _ := json.Marshal(v) // plain maps and strings: cannot fail
	return append(b, '\n')
}

// answerText is what the fake model answers; answerPieces is the same text
// in the pieces a stream sends.
const answerText = "simbench: ok"

var answerPieces = []string{"simbench", ":", " ok"}

// streamBody renders a streamed response as groups of server-sent events,
// one group per piece of the answer; the server sends each group at once.
// Chat completions follow OpenAI's chunks (a role chunk, content deltas, a
// chunk with finish_reason, a usage chunk when includeUsage, then
// "data: [DONE]"); messages follow Anthropic's events (message_start,
// content_block_start, ping, content_block_delta..., content_block_stop,
// message_delta with usage, message_stop).
func streamBody(ep endpoint, id, model string, created time.Time, in, out int64, includeUsage bool) [][]byte {
	groups := make([][]byte, len(answerPieces))
	event := func(g int, name string, v any) {
		b, _ := json.Marshal(v) // plain maps and strings: cannot fail
		if name != "" {
			groups[g] = append(groups[g], "event: "+name+"\n"...)
		}
		groups[g] = append(groups[g], "data: "...)
		groups[g] = append(groups[g], b...)
		groups[g] = append(groups[g], "\n\n"...)
	}
	last := len(groups) - 1
	switch ep {
	case epChat:
		chunk := func(delta map[string]any, finish any) map[string]any {
			c := map[string]any{
				"id": "chatcmpl-" + id, "object": "chat.completion.chunk", "created": created.Unix(), "model": model,
				"system_fingerprint": nil,
				"choices":            []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}},
			}
			if includeUsage {
				c["usage"] = nil
			}
			return c
		}
		event(0, "", chunk(map[string]any{"role": "assistant", "content": "", "refusal": nil}, nil))
		for i, p := range answerPieces {
			event(i, "", chunk(map[string]any{"content": p}, nil))
		}
		event(last, "", chunk(map[string]any{}, "stop"))
		if includeUsage {
			u := chunk(nil, nil)
			u["choices"] = []any{}
			u["usage"] = map[string]any{"prompt_tokens": in, "completion_tokens": out, "total_tokens": satmath.Add(in, out)}
			event(last, "", u)
		}
		groups[last] = append(groups[last], "data: [DONE]\n\n"...)
	case epMessages:
		event(0, "message_start", map[string]any{"type": "message_start", "message": map[string]any{
			"id": "msg_" + id, "type": "message", "role": "assistant", "model": model, "content": []any{},
			"stop_reason": nil, "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": in, "output_tokens": 1},
		}})
		event(0, "content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "text", "text": ""}})
		event(0, "ping", map[string]any{"type": "ping"})
		for i, p := range answerPieces {
			event(i, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
				"delta": map[string]any{"type": "text_delta", "text": p}})
		}
		event(last, "content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
		event(last, "message_delta", map[string]any{"type": "message_delta",
			"delta": map[string]any{"stop_reason": "end_turn", "stop_sequence": nil},
			"usage": map[string]any{"output_tokens": out}})
		event(last, "message_stop", map[string]any{"type": "message_stop"})
	}
	return groups
}

// modelsBody lists the service's model as the provider's /v1/models does.
func modelsBody(api APIStyle, model string, created time.Time) []byte {
	var v any
	if api == APIAnthropic {
		v = map[string]any{
			"data": []any{map[string]any{"type": "model", "id": model, "display_name": model,
				"created_at": created.UTC().Format(time.RFC3339)}},
			"has_more": false, "first_id": model, "last_id": model,
		}
	} else {
		v = map[string]any{"object": "list", "data": []any{map[string]any{
			"id": model, "object": "model", "created": created.Unix(), "owned_by": "simbench"}}}
	}
	b, _ := json.Marshal(v)
	return append(b, '\n')
}

// errorBody renders an error in the API style's shape. extra fields are
// added to the error object (generic style only), except "request_id",
// which Anthropic style sends beside the error, and "limit", which makes an
// OpenAI-style 429 of the token limit type "tokens".
func errorBody(api APIStyle, status int, message string, extra map[string]any) []byte {
	var v any
	switch api {
	case APIAnthropic:
		m := map[string]any{"type": "error", "error": map[string]any{"type": anthropicType(status), "message": message}}
		if id, ok := extra["request_id"]; ok {
			m["request_id"] = id
		}
		v = m
	case APIOpenAI:
		typ, code := openAIType(status)
		if l := extra["limit"]; status == http.StatusTooManyRequests && (l == LimitTPM.String() || l == LimitITPM.String() || l == LimitOTPM.String()) {
			typ = "tokens"
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
			q.Limit, q.Remaining = q.Limit/60, q.Remaining/60
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
