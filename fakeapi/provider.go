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
	"unicode/utf8"

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
	epResponses
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
	case api == APIOpenAI && path == "/v1/responses":
		ep = epResponses
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
		return []string{"/v1/chat/completions", "/v1/responses", "/v1/embeddings", "/v1/models", "/*"}
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
	OutputTokens        *int64          `json:"output_tokens"`
	Resource            *string         `json:"resource"`
	Stream              bool            `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	EncodingFormat string `json:"encoding_format"`
	Dimensions     *int   `json:"dimensions"`
	// Tool use (chat completions, messages, responses).
	Tools              json.RawMessage `json:"tools"`
	ToolChoice         json.RawMessage `json:"tool_choice"`
	ParallelToolCalls  *bool           `json:"parallel_tool_calls"`
	PreviousResponseID string          `json:"previous_response_id"`
	Instructions       json.RawMessage `json:"instructions"`
	MaxOutputTokens    *int64          `json:"max_output_tokens"`
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
	// agent is what a chat, messages or responses request says about tools
	// and its conversation; reply is the fake model's answer, set once the
	// request is admitted.
	agent agentRequest
	reply reply
}

// generates reports whether the endpoint answers with generated text (or
// tool calls), streamed on request.
func (ep endpoint) generates() bool {
	return ep == epChat || ep == epMessages || ep == epResponses
}

// TokensHeader overrides the input-token estimate of a request.
const TokensHeader = "X-Simbench-Tokens"

// OutputTokensHeader gives a generic request's output tokens (0 without
// it or a body's "output_tokens"): the tokens the service generates at its
// tokens per second and charges against its output-token limit.
const OutputTokensHeader = "X-Simbench-Output-Tokens"

// ClientHeader tells clients sharing one API key apart for early-retry accounting.
const ClientHeader = "X-Simbench-Client"

// decodeRequest reads the fields the model needs from a body. Input tokens
// are estimated as one per four bytes of the prompt fields (messages, input,
// system, prompt) unless tokensHeader (or a generic body's "tokens") gives
// them; output tokens are max_completion_tokens, max_tokens, or
// defaultOutput for chat and messages, 0 for embeddings, and for generic
// tools outputHeader or the body's "output_tokens" (0 without them).
func decodeRequest(ep endpoint, body []byte, tokensHeader, outputHeader string, defaultOutput int64) (decoded, error) {
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
	if b.Stream && !ep.generates() {
		return d, errors.New("stream is supported on chat completions, responses and messages only; send stream: false")
	}
	d.stream = b.Stream
	d.includeUsage = b.StreamOptions != nil && b.StreamOptions.IncludeUsage
	d.model = b.Model
	for _, p := range []*int64{b.MaxTokens, b.MaxCompletionTokens, b.MaxOutputTokens, b.Tokens, b.OutputTokens} {
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
	case epResponses:
		if len(b.Input) == 0 && b.PreviousResponseID == "" {
			return d, errors.New("input is required")
		}
	}
	if ep.generates() {
		a, err := decodeAgent(ep, &b)
		if err != nil {
			return d, err
		}
		d.agent = a
	}
	prompt := len(b.Messages) + len(b.Input) + len(b.System) + len(b.Prompt) + len(b.Instructions) + len(b.Tools)
	d.input = int64(prompt+3) / 4
	switch ep {
	case epChat, epMessages, epResponses:
		d.output = defaultOutput
		if b.MaxCompletionTokens != nil {
			d.output = *b.MaxCompletionTokens
		} else if b.MaxTokens != nil {
			d.output = *b.MaxTokens
		} else if b.MaxOutputTokens != nil {
			d.output = *b.MaxOutputTokens
		}
	case epGeneric:
		if b.Tokens != nil {
			d.input = *b.Tokens
		}
		if b.OutputTokens != nil {
			d.output = *b.OutputTokens
		}
		if outputHeader != "" {
			n, err := strconv.ParseInt(strings.TrimSpace(outputHeader), 10, 64)
			if err != nil || n < 0 {
				return d, fmt.Errorf("%s %q is not a non-negative integer", OutputTokensHeader, outputHeader)
			}
			d.output = n
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

// okBody renders a successful response of the endpoint's real shape: for
// chat, messages and responses, the text answer or dec.reply's tool calls.
func okBody(ep endpoint, service, path, id, model string, created time.Time, in, out int64, dec *decoded) []byte {
	var v any
	calls := dec.reply.calls
	switch ep {
	case epChat:
		msg := map[string]any{"role": "assistant", "content": strings.Join(answer(out), ""), "refusal": nil}
		finish := "stop"
		if len(calls) > 0 {
			tc := make([]any, len(calls))
			for i, c := range calls {
				tc[i] = map[string]any{"id": c.id, "type": "function", "function": map[string]any{"name": c.name, "arguments": string(c.args)}}
			}
			msg["content"], msg["tool_calls"], finish = nil, tc, "tool_calls"
		}
		v = map[string]any{
			"id": "chatcmpl-" + id, "object": "chat.completion", "created": created.Unix(), "model": model,
			"choices": []any{map[string]any{"index": 0, "finish_reason": finish, "logprobs": nil, "message": msg}},
			"usage":   map[string]any{"prompt_tokens": in, "completion_tokens": out, "total_tokens": satmath.Add(in, out)},
		}
	case epEmbeddings:
		v = map[string]any{
			"object": "list", "model": model,
			"data":  dec.embed.data(),
			"usage": map[string]any{"prompt_tokens": in, "total_tokens": in},
		}
	case epMessages:
		content, stop := []any{map[string]any{"type": "text", "text": strings.Join(answer(out), "")}}, "end_turn"
		if len(calls) > 0 {
			content, stop = make([]any, len(calls)), "tool_use"
			for i, c := range calls {
				content[i] = toolUseBlock(c, true)
			}
		}
		v = map[string]any{
			"id": "msg_" + id, "type": "message", "role": "assistant", "model": model,
			"content": content, "stop_reason": stop, "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": in, "output_tokens": out},
		}
	case epResponses:
		v = responseObject(id, model, created, "completed", responseOutput(id, out, dec, true), in, out, dec)
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

// toolUseBlock is an Anthropic tool_use content block; a streamed block
// starts with an empty input that input_json_delta events fill.
func toolUseBlock(c toolCall, withInput bool) map[string]any {
	input := json.RawMessage("{}")
	if withInput {
		input = c.args
	}
	return map[string]any{"type": "tool_use", "id": c.id, "name": c.name, "input": input}
}

// answerText is how the fake model's answer begins; answerHead is the same
// text in the pieces (tokens) a stream sends.
const answerText = "simbench: ok"

var answerHead = []string{"simbench", ":", " ok"}

// maxAnswerPieces caps the tokens of a text answer, whatever the output
// tokens a request is charged for.
const maxAnswerPieces = 4096

// answer returns the fake model's text answer to a request of out output
// tokens, as the pieces a stream sends (one per token): answerText, then
// " ok" until the answer has out tokens (at most maxAnswerPieces).
func answer(out int64) []string {
	n := int(min(max(out, int64(len(answerHead))), maxAnswerPieces))
	p := make([]string, n)
	copy(p, answerHead)
	for i := len(answerHead); i < n; i++ {
		p[i] = " ok"
	}
	return p
}

// maxStreamGroups caps the groups a stream is sent in: the server flushes
// each group at once and spreads the latency between groups.
const maxStreamGroups = 64

// sseGroups collects a streamed response of n pieces (tokens or tool calls)
// as at most maxStreamGroups groups of server-sent events.
type sseGroups struct {
	groups [][]byte
	n      int
}

func newSSEGroups(n int) *sseGroups {
	return &sseGroups{groups: make([][]byte, min(n, maxStreamGroups)), n: n}
}

// event appends an event of piece i ("" name: a data-only event) to the
// group that piece falls in; pieces fall in groups in order, evenly.
func (s *sseGroups) event(i int, name string, v any) {
	b, _ := json.Marshal(v) // plain maps and strings: cannot fail
	g := i * len(s.groups) / s.n
	if name != "" {
		s.groups[g] = append(s.groups[g], "event: "+name+"\n"...)
	}
	s.groups[g] = append(s.groups[g], "data: "...)
	s.groups[g] = append(s.groups[g], b...)
	s.groups[g] = append(s.groups[g], "\n\n"...)
}

// raw appends bytes to the last group.
func (s *sseGroups) raw(b string) {
	s.groups[len(s.groups)-1] = append(s.groups[len(s.groups)-1], b...)
}

// streamBody renders a streamed response as groups of server-sent events,
// one event per token of the answer, or per tool call of dec.reply. Chat
// completions follow OpenAI's chunks (a role chunk, content or tool_calls
// deltas, a chunk with finish_reason, a usage chunk when includeUsage, then
// "data: [DONE]"); messages follow Anthropic's events (message_start,
// content_block_start, ping, content_block_delta..., content_block_stop,
// message_delta with usage, message_stop); responses follow the Responses
// API's events (see responseEvents).
func streamBody(ep endpoint, id, model string, created time.Time, in, out int64, dec *decoded) [][]byte {
	calls := dec.reply.calls
	pieces := answer(out)
	n := len(pieces)
	if len(calls) > 0 {
		n = len(calls)
	}
	groups := newSSEGroups(n)
	last := n - 1
	switch ep {
	case epChat:
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
		finish := "stop"
		if len(calls) == 0 {
			groups.event(0, "", chunk(map[string]any{"role": "assistant", "content": "", "refusal": nil}, nil))
			for i, p := range pieces {
				groups.event(i, "", chunk(map[string]any{"content": p}, nil))
			}
		} else {
			finish = "tool_calls"
			groups.event(0, "", chunk(map[string]any{"role": "assistant", "content": nil, "refusal": nil}, nil))
			for i, c := range calls {
				groups.event(i, "", chunk(map[string]any{"tool_calls": []any{map[string]any{
					"index": i, "id": c.id, "type": "function", "function": map[string]any{"name": c.name, "arguments": ""}}}}, nil))
				for _, p := range argPieces(c.args) {
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
	case epMessages:
		stop := "end_turn"
		groups.event(0, "message_start", map[string]any{"type": "message_start", "message": map[string]any{
			"id": "msg_" + id, "type": "message", "role": "assistant", "model": model, "content": []any{},
			"stop_reason": nil, "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": in, "output_tokens": 1},
		}})
		if len(calls) == 0 {
			groups.event(0, "content_block_start", map[string]any{"type": "content_block_start", "index": 0,
				"content_block": map[string]any{"type": "text", "text": ""}})
			groups.event(0, "ping", map[string]any{"type": "ping"})
			for i, p := range pieces {
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
				for _, p := range append([]string{""}, argPieces(c.args)...) {
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
	case epResponses:
		responseEvents(groups, pieces, id, model, created, in, out, dec)
	}
	return groups.groups
}

// argPieces splits a tool call's JSON arguments in two, as models stream
// them in several deltas.
func argPieces(args []byte) []string {
	h := len(args) / 2
	for h > 0 && !utf8.RuneStart(args[h]) {
		h-- // split between characters
	}
	if h == 0 {
		return []string{string(args)}
	}
	return []string{string(args[:h]), string(args[h:])}
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
