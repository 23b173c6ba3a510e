package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// The Anthropic shape (spec.APIAnthropic): POST /v1/messages and
// /v1/messages/count_tokens, GET /v1/models; errors as
// {"type":"error","error":{"type","message"},"request_id"}; the request id
// also in a request-id header; an overload or outage is a 529, a spent
// credit a 400, as Anthropic answers them.

// ThreadsBeta is the anthropic-beta value of the message-threads beta,
// whose thread continuation the fake service does not implement.
const ThreadsBeta = "message-threads-2026-08-12"

// errUnsupportedThread refuses a messages request that continues a thread:
// answering it as a fresh conversation would silently change the client's
// loop (it sends only the tool results), so it gets a 400 that names the
// beta instead.
var errUnsupportedThread = errors.New("thread: the message-threads beta (anthropic-beta: " + ThreadsBeta +
	") is not supported by this fake service, so a thread cannot be continued; send the whole conversation in messages without the beta")

// anthropicShape is the Anthropic provider shape.
type anthropicShape struct{}

// anthropicRoutes are the Anthropic shape's own paths, in the order a 404
// names them.
var anthropicRoutes = []providerRoute{
	{"/v1/messages", EpMessages}, {"/v1/messages/count_tokens", EpCountTokens}, {"/v1/models", EpModels},
}

func (anthropicShape) routes() []providerRoute { return anthropicRoutes }

// errorBody is Anthropic's error, with extra's "request_id" beside it.
func (anthropicShape) errorBody(status int, message string, extra map[string]any) (v any, e map[string]any) {
	e = map[string]any{"type": anthropicType(status), "message": message}
	m := map[string]any{"type": "error", "error": e}
	if id, ok := extra["request_id"]; ok {
		m["request_id"] = id
	}
	return m, e
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

// ErrorExtra sends the request id beside the error.
func (anthropicShape) ErrorExtra(extra map[string]any, requestID string) {
	extra["request_id"] = requestID
}

func (anthropicShape) Status(_, _ string, model int) int { return model }

func (anthropicShape) OutageStatus() int { return 529 }

// QuotaStatus: Anthropic, which has no insufficient_quota 429, refuses an
// account without credit with 400 invalid_request_error.
func (anthropicShape) QuotaStatus() int { return http.StatusBadRequest }

func (anthropicShape) QuotaMessage(string) string {
	return "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."
}

func (anthropicShape) ContextMessage(window, tokens int64) string {
	return fmt.Sprintf("prompt is too long: %d tokens > %d maximum", tokens, window)
}

// SetRequestID adds Anthropic's request-id header.
func (anthropicShape) SetRequestID(h http.Header, id string) { h.Set("Request-Id", id) }

// checkFields refuses a thread continuation (errUnsupportedThread) and
// requires messages, and a message's max_tokens.
func (anthropicShape) checkFields(ep Endpoint, b *reqBody, _ *Decoded) error {
	if ep != EpMessages && ep != EpCountTokens {
		return nil
	}
	if len(b.Thread) > 0 && string(b.Thread) != "null" {
		return errUnsupportedThread
	}
	if len(b.Messages) == 0 {
		return errors.New("messages is required")
	}
	if b.MaxTokens == nil && ep == EpMessages {
		return errors.New("max_tokens is required")
	}
	return nil
}

func (anthropicShape) modelsBody(model string, created time.Time) any {
	return map[string]any{
		"data": []any{map[string]any{"type": "model", "id": model, "display_name": model,
			"created_at": created.UTC().Format(time.RFC3339)}},
		"has_more": false, "first_id": model, "last_id": model,
	}
}

// okBody renders a message: a text block of the answer or a tool_use
// block per call of a.dec.reply.
func (anthropicShape) okBody(ep Endpoint, a *answerArgs) any {
	if ep != EpMessages {
		return nil
	}
	calls := a.dec.Reply.Calls
	content, stop := []any{map[string]any{"type": "text", "text": strings.Join(Answer(a.out), "")}}, messageStop(a.dec)
	if len(calls) > 0 {
		content, stop = make([]any, len(calls)), "tool_use"
		for i, c := range calls {
			content[i] = toolUseBlock(c, true)
		}
	}
	return map[string]any{
		"id": "msg_" + a.id, "type": "message", "role": "assistant", "model": a.model,
		"content": content, "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": a.in, "output_tokens": a.out},
	}
}

// messageStop is a message's stop_reason without tool use: "max_tokens"
// when the answer stopped at the request's max_tokens, else "end_turn".
func messageStop(dec *Decoded) string {
	if dec.Truncated {
		return "max_tokens"
	}
	return "end_turn"
}

// toolUseBlock is an Anthropic tool_use content block; a streamed block
// starts with an empty input that input_json_delta events fill.
func toolUseBlock(c ToolCall, withInput bool) map[string]any {
	input := json.RawMessage("{}")
	if withInput {
		input = c.Args
	}
	return map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": input}
}

func (anthropicShape) streamEvents(ep Endpoint, groups *sseGroups, a *answerArgs) {
	if ep == EpMessages {
		messageEvents(groups, a.pieces, a.id, a.model, a.in, a.out, a.dec)
	}
}

// messageEvents adds the events of a streamed Anthropic message to groups:
// the message start, a text block of the answer's pieces or a tool_use
// block per call of dec.reply, the stop reason and the usage.
func messageEvents(groups *sseGroups, pieces answerPieces, id, model string, in, out int64, dec *Decoded) {
	calls := dec.Reply.Calls
	last := groups.n - 1 // the last piece
	stop := messageStop(dec)
	groups.event(0, "message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_" + id, "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": in, "output_tokens": 1},
	}})
	if len(calls) == 0 {
		groups.event(0, "content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "text", "text": ""}})
		groups.event(0, "ping", map[string]any{"type": "ping"})
		for i, p := range pieces.all() {
			groups.event(i, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
				"delta": map[string]any{"type": "text_delta", "text": p}})
		}
		groups.event(last, "content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	} else {
		stop = "tool_use"
		for i, c := range calls {
			groups.event(i, "content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": toolUseBlock(c, false)})
			if i == 0 {
				groups.event(0, "ping", map[string]any{"type": "ping"})
			}
			for _, p := range append([]string{""}, argPieces(c.Args)...) {
				groups.event(i, "content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "input_json_delta", "partial_json": p}})
			}
			groups.event(i, "content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
		}
	}
	groups.event(last, "message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": out}})
	groups.event(last, "message_stop", map[string]any{"type": "message_stop"})
}

func (anthropicShape) CallPrefix() string { return "toolu" }

// SmallestRequest is a one-message request for 16 tokens.
func (anthropicShape) SmallestRequest() (path, body string) {
	return "/v1/messages", `{"model":"simbench-gateway","messages":[{"role":"user","content":"hi"}],"max_tokens":16}`
}

// SDK: the Anthropic SDKs take the URL itself and append /v1/messages.
func (anthropicShape) SDK(url string) (base, env string) { return url, "ANTHROPIC" }

// LevelPhrase names the level of nested limits that refused a 429; a
// project is an Anthropic workspace.
func (anthropicShape) LevelPhrase(level, scope string) string {
	return levelPhrase(level, scope, "workspace")
}
