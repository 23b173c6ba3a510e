package wire

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/simbench/simbench/sched/satmath"
)

// The OpenAI shape (spec.APIOpenAI): POST /v1/chat/completions,
// /v1/responses (responses.go) and /v1/embeddings (embeddings.go), GET
// /v1/models; errors as {"error":{"message","type","param","code"}}; a
// request too large for the token limit is a 429 of type "tokens" and an
// overload a 503, as OpenAI answers them.

// openAIShape is the OpenAI provider shape.
type openAIShape struct{}

// openAIRoutes are the OpenAI shape's own paths, in the order a 404 names
// them.
var openAIRoutes = []providerRoute{
	{"/v1/chat/completions", EpChat}, {"/v1/responses", EpResponses}, {"/v1/embeddings", EpEmbeddings}, {"/v1/models", EpModels},
}

func (openAIShape) routes() []providerRoute { return openAIRoutes }

// errorBody is OpenAI's error: a 429 of a token limit has type "tokens",
// an overload the code "overloaded", a spent credit type and code
// "insufficient_quota", a context too long the code
// "context_length_exceeded" and param "messages".
func (openAIShape) errorBody(status int, message string, extra map[string]any) (v any, e map[string]any) {
	kind, _ := extra["kind"].(string)
	typ, code := openAIType(status)
	var param any
	if l := extra["limit"]; status == http.StatusTooManyRequests && (l == LimitTPM || l == LimitITPM || l == LimitOTPM) {
		typ = "tokens"
	}
	switch kind {
	case KindOverloaded:
		code = "overloaded" // OpenAI answers an overload 503 with it
	case KindQuotaExhausted:
		typ, code = kind, kind // as OpenAI sends insufficient_quota
	case KindContextTooLong:
		code, param = kind, "messages"
	}
	e = map[string]any{"message": message, "type": typ, "param": param, "code": code}
	return map[string]any{"error": e}, e
}

// openAIType is the OpenAI error type and code of a status.
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

func (openAIShape) ErrorExtra(map[string]any, string) {}

// Status answers a request too large for the token limit with 429 (type
// tokens) and an overload with 503, as OpenAI does; the rest is the
// model's Status.
func (openAIShape) Status(kind, limit string, model int) int {
	switch {
	case kind == KindTooLarge && limit == LimitTPM:
		return http.StatusTooManyRequests
	case kind == KindOverloaded:
		return http.StatusServiceUnavailable
	}
	return model
}

func (openAIShape) OutageStatus() int { return http.StatusServiceUnavailable }

// QuotaStatus is OpenAI's 429 insufficient_quota.
func (openAIShape) QuotaStatus() int { return http.StatusTooManyRequests }

func (openAIShape) QuotaMessage(service string) string { return spentCreditMessage(service) }

// ContextMessage is OpenAI's context_length_exceeded message.
func (openAIShape) ContextMessage(window, tokens int64) string {
	return fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.", window, tokens)
}

func (openAIShape) SetRequestID(http.Header, string) {}

// checkFields requires a chat completion's messages, a response's input
// (or previous_response_id) and an embedding's input, which it decodes.
func (openAIShape) checkFields(ep Endpoint, b *reqBody, d *Decoded) error {
	switch ep {
	case EpChat:
		if len(b.Messages) == 0 {
			return errors.New("messages is required")
		}
	case EpEmbeddings:
		if len(b.Input) == 0 {
			return errors.New("input is required")
		}
		e, err := decodeEmbed(b.Input, b.EncodingFormat, b.Dimensions)
		if err != nil {
			return err
		}
		d.embed = e
	case EpResponses:
		if len(b.Input) == 0 && b.PreviousResponseID == "" {
			return errors.New("input is required")
		}
	}
	return nil
}

func (openAIShape) modelsBody(model string, created time.Time) any {
	return map[string]any{"object": "list", "data": []any{map[string]any{
		"id": model, "object": "model", "created": created.Unix(), "owned_by": "simbench"}}}
}

// okBody renders a chat completion (the text answer or a.dec.reply's tool
// calls), an embeddings list or a response object.
func (openAIShape) okBody(ep Endpoint, a *answerArgs) any {
	dec, in, out := a.dec, a.in, a.out
	switch ep {
	case EpChat:
		calls := dec.Reply.Calls
		msg := map[string]any{"role": "assistant", "content": strings.Join(Answer(out), ""), "refusal": nil}
		finish := chatFinish(dec)
		if len(calls) > 0 {
			tc := make([]any, len(calls))
			for i, c := range calls {
				tc[i] = map[string]any{"id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": string(c.Args)}}
			}
			msg["content"], msg["tool_calls"], finish = nil, tc, "tool_calls"
		}
		return map[string]any{
			"id": "chatcmpl-" + a.id, "object": "chat.completion", "created": a.created.Unix(), "model": a.model,
			"choices": []any{map[string]any{"index": 0, "finish_reason": finish, "logprobs": nil, "message": msg}},
			"usage":   map[string]any{"prompt_tokens": in, "completion_tokens": out, "total_tokens": satmath.Add(in, out)},
		}
	case EpEmbeddings:
		return map[string]any{
			"object": "list", "model": a.model,
			"data":  dec.embed.data(),
			"usage": map[string]any{"prompt_tokens": in, "total_tokens": in},
		}
	case EpResponses:
		return responseObject(a.id, a.model, a.created, responseStatus(dec), responseOutput(a.id, out, dec, true), in, out, dec)
	}
	return nil
}

func (openAIShape) streamEvents(ep Endpoint, groups *sseGroups, a *answerArgs) {
	switch ep {
	case EpChat:
		chatEvents(groups, a.pieces, a.id, a.model, a.created, a.in, a.out, a.dec)
	case EpResponses:
		responseEvents(groups, a.pieces, a.id, a.model, a.created, a.in, a.out, a.dec)
	}
}

// chatFinish is a chat completion's finish_reason without tool calls:
// "length" when the answer stopped at the request's max_tokens, else
// "stop".
func chatFinish(dec *Decoded) string {
	if dec.Truncated {
		return "length"
	}
	return "stop"
}

// chatEvents adds the chunks of a streamed chat completion to groups: the
// answer's pieces or dec.reply's tool calls, the finish, and the usage
// chunk when dec asks for it.
func chatEvents(groups *sseGroups, pieces answerPieces, id, model string, created time.Time, in, out int64, dec *Decoded) {
	calls := dec.Reply.Calls
	last := groups.n - 1 // the last piece
	chunk := func(delta map[string]any, finish any) map[string]any {
		c := map[string]any{
			"id": "chatcmpl-" + id, "object": "chat.completion.chunk", "created": created.Unix(), "model": model,
			"system_fingerprint": nil,
			"choices":            []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}},
		}
		if dec.includeUsage {
			c["usage"] = nil
		}
		return c
	}
	finish := chatFinish(dec)
	if len(calls) == 0 {
		groups.event(0, "", chunk(map[string]any{"role": "assistant", "content": "", "refusal": nil}, nil))
		for i, p := range pieces.all() {
			groups.event(i, "", chunk(map[string]any{"content": p}, nil))
		}
	} else {
		finish = "tool_calls"
		groups.event(0, "", chunk(map[string]any{"role": "assistant", "content": nil, "refusal": nil}, nil))
		for i, c := range calls {
			groups.event(i, "", chunk(map[string]any{"tool_calls": []any{map[string]any{
				"index": i, "id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": ""}}}}, nil))
			for _, p := range argPieces(c.Args) {
				groups.event(i, "", chunk(map[string]any{"tool_calls": []any{map[string]any{
					"index": i, "function": map[string]any{"arguments": p}}}}, nil))
			}
		}
	}
	groups.event(last, "", chunk(map[string]any{}, finish))
	if dec.includeUsage {
		u := chunk(nil, nil)
		u["choices"] = []any{}
		u["usage"] = map[string]any{"prompt_tokens": in, "completion_tokens": out, "total_tokens": satmath.Add(in, out)}
		groups.event(last, "", u)
	}
	groups.raw("data: [DONE]\n\n")
}

func (openAIShape) CallPrefix() string { return "call" }

// SmallestRequest is a one-message request for 16 tokens.
func (openAIShape) SmallestRequest() (path, body string) {
	return "/v1/chat/completions", `{"model":"simbench-gateway","messages":[{"role":"user","content":"hi"}],"max_tokens":16}`
}

// SDK: the OpenAI SDKs take URL+"/v1" and append /chat/completions,
// /responses, ...
func (openAIShape) SDK(url string) (base, env string) { return url + "/v1", "OPENAI" }

// LevelPhrase names the level of nested limits that refused a 429; a
// project is an OpenAI project.
func (openAIShape) LevelPhrase(level, scope string) string {
	return levelPhrase(level, scope, "project")
}
