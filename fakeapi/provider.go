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

	"github.com/simbench/simbench/sched/satmath"
	"github.com/simbench/simbench/spec"
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
func route(api spec.APIStyle, method, path string) (ep endpoint, ok bool) {
	switch {
	case api == spec.APIOpenAI && path == "/v1/chat/completions":
		ep = epChat
	case api == spec.APIOpenAI && path == "/v1/embeddings":
		ep = epEmbeddings
	case api == spec.APIOpenAI && path == "/v1/responses":
		ep = epResponses
	case api == spec.APIAnthropic && path == "/v1/messages":
		ep = epMessages
	case api == spec.APIAnthropic && path == "/v1/messages/count_tokens":
		ep = epCountTokens
	case api != spec.APIGeneric && path == "/v1/models":
		ep = epModels
	case api != spec.APIGeneric && (path == "/v1" || strings.HasPrefix(path, "/v1/")):
		return epUnknown, true
	default:
		return epGeneric, true
	}
	return ep, method == ep.method()
}

// knownPaths lists a service's provider endpoints, for 404 messages; the
// last entry is always "/*", the generic tool paths.
func knownPaths(api spec.APIStyle) []string {
	switch api {
	case spec.APIOpenAI:
		return []string{"/v1/chat/completions", "/v1/responses", "/v1/embeddings", "/v1/models", "/*"}
	case spec.APIAnthropic:
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
	// Thread is the message-threads beta's continuation, which the fake
	// service refuses (see errUnsupportedThread).
	Thread json.RawMessage `json:"thread"`
}

// ThreadsBeta is the anthropic-beta value of the message-threads beta,
// whose thread continuation the fake service does not implement.
const ThreadsBeta = "message-threads-2026-08-12"

// errUnsupportedThread refuses a messages request that continues a thread:
// answering it as a fresh conversation would silently change the client's
// loop (it sends only the tool results), so it gets a 400 that names the
// beta instead.
var errUnsupportedThread = errors.New("thread: the message-threads beta (anthropic-beta: " + ThreadsBeta +
	") is not supported by this fake service, so a thread cannot be continued; send the whole conversation in messages without the beta")

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
	// and its conversation; reply is the fake model's answer, set before
	// the model decides on the request.
	agent agentRequest
	reply reply
	// answer is the output tokens of the fake model's answer (see
	// AgentConfig.answerTokens), set with reply.
	answer int64
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
	b, err := parseBody(ep, body)
	if err != nil {
		return d, err
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
	if err := decodeFields(ep, &b, &d); err != nil {
		return d, err
	}
	if d.input, d.output, err = tokenCounts(ep, &b, tokensHeader, outputHeader, defaultOutput); err != nil {
		return d, err
	}
	if b.Resource != nil {
		d.resource, d.hasResource = *b.Resource, true
	}
	return d, nil
}

// parseBody parses a request body, which must be a JSON object (or empty,
// for a generic tool).
func parseBody(ep endpoint, body []byte) (reqBody, error) {
	var b reqBody
	trimmed := bytes.TrimSpace(body)
	switch {
	case len(trimmed) == 0 && ep == epGeneric:
	case len(trimmed) == 0:
		return b, errors.New("the request body is empty; send a JSON object")
	case trimmed[0] != '{':
		return b, errors.New("the request body is not a JSON object")
	default:
		if err := json.Unmarshal(trimmed, &b); err != nil {
			return b, fmt.Errorf("the request body is not valid JSON: %v", err)
		}
	}
	return b, nil
}

// decodeFields checks the fields endpoint ep requires of body b and
// decodes into d what an embeddings request asks for and what a generating
// request says about tools.
func decodeFields(ep endpoint, b *reqBody, d *decoded) error {
	switch ep {
	case epChat:
		if len(b.Messages) == 0 {
			return errors.New("messages is required")
		}
	case epEmbeddings:
		if len(b.Input) == 0 {
			return errors.New("input is required")
		}
		e, err := decodeEmbed(b.Input, b.EncodingFormat, b.Dimensions)
		if err != nil {
			return err
		}
		d.embed = e
	case epMessages, epCountTokens:
		if len(b.Thread) > 0 && string(b.Thread) != "null" {
			return errUnsupportedThread
		}
		if len(b.Messages) == 0 {
			return errors.New("messages is required")
		}
		if b.MaxTokens == nil && ep == epMessages {
			return errors.New("max_tokens is required")
		}
	case epResponses:
		if len(b.Input) == 0 && b.PreviousResponseID == "" {
			return errors.New("input is required")
		}
	}
	if ep.generates() {
		a, err := decodeAgent(ep, b)
		if err != nil {
			return err
		}
		d.agent = a
	}
	return nil
}

// tokenCounts returns the input and output tokens of a request to ep with
// body b (see decodeRequest); on an error, the counts found so far.
func tokenCounts(ep endpoint, b *reqBody, tokensHeader, outputHeader string, defaultOutput int64) (in, out int64, err error) {
	prompt := len(b.Messages) + len(b.Input) + len(b.System) + len(b.Prompt) + len(b.Instructions) + len(b.Tools)
	in = int64(prompt+3) / 4
	switch ep {
	case epChat, epMessages, epResponses:
		out = defaultOutput
		if b.MaxCompletionTokens != nil {
			out = *b.MaxCompletionTokens
		} else if b.MaxTokens != nil {
			out = *b.MaxTokens
		} else if b.MaxOutputTokens != nil {
			out = *b.MaxOutputTokens
		}
	case epGeneric:
		if b.Tokens != nil {
			in = *b.Tokens
		}
		if b.OutputTokens != nil {
			out = *b.OutputTokens
		}
		if outputHeader != "" {
			n, err := strconv.ParseInt(strings.TrimSpace(outputHeader), 10, 64)
			if err != nil || n < 0 {
				return in, out, fmt.Errorf("%s %q is not a non-negative integer", OutputTokensHeader, outputHeader)
			}
			out = n
		}
	}
	if tokensHeader != "" {
		n, err := strconv.ParseInt(strings.TrimSpace(tokensHeader), 10, 64)
		if err != nil || n < 0 {
			return in, out, fmt.Errorf("%s %q is not a non-negative integer", TokensHeader, tokensHeader)
		}
		in = n
	}
	return in, out, nil
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
		return genericBody(id, service, path, in+out)
	}
	b, _ := json.Marshal(v) // plain maps and strings: cannot fail
	return append(b, '\n')
}

// genericBody is a generic tool's answer, {"ok":true,"id":…,"service":…,
// "path":…,"tokens":…} and a newline, as encoding/json writes it: built
// without reflection, since it is most of what a tool call costs the
// server beyond net/http.
func genericBody(id, service, path string, tokens int64) []byte {
	b := make([]byte, 0, 64+len(id)+len(service)+len(path))
	b = append(b, `{"ok":true,"id":`...)
	b = appendJSONString(b, id)
	b = append(b, `,"service":`...)
	b = appendJSONString(b, service)
	b = append(b, `,"path":`...)
	b = appendJSONString(b, path)
	b = append(b, `,"tokens":`...)
	b = strconv.AppendInt(b, tokens, 10)
	return append(b, "}\n"...)
}

// appendJSONString appends s to b as encoding/json writes a string: quoted
// as it is when every byte is printable ASCII that needs no escape, by
// encoding/json itself otherwise.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string: cannot fail
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
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

// answerHead is how the fake model's answer begins ("simbench: ok"), in the
// pieces (tokens) a stream sends.
var answerHead = []string{"simbench", ":", " ok"}

// maxAnswerPieces caps the tokens of a text answer, whatever the output
// tokens a request is charged for.
const maxAnswerPieces = 4096

// answer returns the fake model's text answer to a request of out output
// tokens, as the pieces a stream sends (one per token): answerHead, then
// " ok" until the answer has out tokens (at most maxAnswerPieces).
func answer(out int64) []string {
	p := make([]string, 0, int(streamedAnswer(out)))
	for _, piece := range streamedAnswer(out).all() {
		p = append(p, piece)
	}
	return p
}

// modelsBody lists the service's model as the provider's /v1/models does.
func modelsBody(api spec.APIStyle, model string, created time.Time) []byte {
	var v any
	if api == spec.APIAnthropic {
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
