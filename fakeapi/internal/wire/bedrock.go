package wire

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"net/http"
	"strings"
	"time"

	"github.com/simbench/simbench/sched/satmath"
	"github.com/simbench/simbench/spec"
)

// The Amazon Bedrock runtime shape (spec.APIBedrock): POST
// /model/{modelId}/converse, the Converse API, and /converse-stream, its
// answer as an AWS event stream (streamEvents), with its messages of
// content blocks ({"text"}, {"toolUse"}, {"toolResult"}), system blocks,
// inferenceConfig.maxTokens and toolConfig (toolSpec tools and a
// toolChoice of auto, any or tool). Its errors are {"message":…} with the
// error's name in the x-amzn-ErrorType header (ErrorType), which the AWS
// SDKs read: a rate limit's 429 is a ThrottlingException, an overload or
// outage a 503 ServiceUnavailableException. Bedrock sends no rate-limit
// headers; the AWS SDKs retry a throttling error after their own backoff.

// bedrockShape is the Amazon Bedrock runtime provider shape.
type bedrockShape struct{}

// bedrockRoutes are the Bedrock shape's own paths, in the order a 404
// names them.
var bedrockRoutes = []providerRoute{
	{"/model/{*modelId}/converse", EpConverse},
	{"/model/{*modelId}/converse-stream", EpConverseStream},
}

func (bedrockShape) routes() []providerRoute { return bedrockRoutes }

// ErrorTypeHeader is the header naming a Bedrock error's type.
const ErrorTypeHeader = "X-Amzn-Errortype"

// errorTyper is a Provider that names its errors in a header
// (ErrorTypeHeader) rather than in the body.
type errorTyper interface {
	// errorType is the name of an error answered with status.
	errorType(status int) string
}

// ErrorType returns the x-amzn-ErrorType value of an answer with status
// in API style api, "" for a success or a provider that names its errors
// in the body.
func ErrorType(api spec.APIStyle, status int) string {
	et, ok := ProviderOf(api).(errorTyper)
	if !ok || status < 400 {
		return ""
	}
	return et.errorType(status)
}

// errorType names an error by its status as the Bedrock runtime does.
func (bedrockShape) errorType(status int) string {
	switch status {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
		return "ValidationException"
	case http.StatusUnauthorized, http.StatusForbidden:
		return "AccessDeniedException"
	case http.StatusNotFound:
		return "ResourceNotFoundException"
	case http.StatusRequestTimeout:
		return "ModelTimeoutException"
	case http.StatusTooManyRequests:
		return "ThrottlingException"
	case http.StatusServiceUnavailable, 529:
		return "ServiceUnavailableException"
	}
	return "InternalServerException"
}

// errorBody is {"message":…}; the error's name is in ErrorTypeHeader.
func (bedrockShape) errorBody(_ int, message string, _ map[string]any) (v any, e map[string]any) {
	e = map[string]any{"message": message}
	return e, e
}

func (bedrockShape) ErrorExtra(map[string]any, string) {}

// Status answers an overload with 503 ServiceUnavailableException; the
// rest is the model's Status.
func (bedrockShape) Status(kind, _ string, model int) int {
	if kind == KindOverloaded {
		return http.StatusServiceUnavailable
	}
	return model
}

func (bedrockShape) OutageStatus() int { return http.StatusServiceUnavailable }

// QuotaStatus: a spent quota is a ThrottlingException too.
func (bedrockShape) QuotaStatus() int { return http.StatusTooManyRequests }

func (bedrockShape) QuotaMessage(service string) string { return spentCreditMessage(service) }

// ContextMessage is a ValidationException's message for a prompt past the
// model's context window.
func (bedrockShape) ContextMessage(window, tokens int64) string {
	return fmt.Sprintf("Input is too long for requested model: %d input tokens exceed the model's %d.", tokens, window)
}

// LevelPhrase names the level of nested limits that refused a 429; a
// project is an AWS account.
func (bedrockShape) LevelPhrase(level, scope string) string {
	return levelPhrase(level, scope, "account")
}

// SetRequestID adds x-amzn-RequestId, the AWS request id.
func (bedrockShape) SetRequestID(h http.Header, id string) { h.Set("X-Amzn-Requestid", id) }

// checkFields requires messages and turns the Converse request into the
// fields the other shapes' requests fill (reqBody): its messages and
// system blocks are read as they are, toolConfig.tools into chat-style
// tools, toolConfig.toolChoice into a tool_choice and
// inferenceConfig.maxTokens into max_tokens. A request to
// converse-stream is streamed.
func (bedrockShape) checkFields(ep Endpoint, b *reqBody, d *Decoded) error {
	if ep != EpConverse && ep != EpConverseStream {
		return nil
	}
	d.Stream = ep == EpConverseStream
	if len(b.Messages) == 0 || string(b.Messages) == "null" {
		return errors.New("1 validation error detected: Value null at 'messages' failed to satisfy constraint: Member must not be null")
	}
	var tc struct {
		Tools []struct {
			ToolSpec *struct {
				Name        string `json:"name"`
				InputSchema struct {
					JSON json.RawMessage `json:"json"`
				} `json:"inputSchema"`
			} `json:"toolSpec"`
		} `json:"tools"`
		ToolChoice *struct {
			Auto *struct{} `json:"auto"`
			Any  *struct{} `json:"any"`
			Tool *struct {
				Name string `json:"name"`
			} `json:"tool"`
		} `json:"toolChoice"`
	}
	if len(b.ToolConfig) > 0 && string(b.ToolConfig) != "null" {
		if err := json.Unmarshal(b.ToolConfig, &tc); err != nil {
			return fmt.Errorf("toolConfig: %v", err)
		}
	}
	var tools []any
	for _, t := range tc.Tools {
		if t.ToolSpec == nil {
			continue // a cache point, not a tool
		}
		fn := map[string]any{"name": t.ToolSpec.Name}
		if len(t.ToolSpec.InputSchema.JSON) > 0 {
			fn["parameters"] = t.ToolSpec.InputSchema.JSON
		}
		tools = append(tools, map[string]any{"type": "function", "function": fn})
	}
	b.Tools = nil
	if len(tools) > 0 {
		b.Tools = mustJSON(tools)
	}
	b.ToolChoice = nil
	if c := tc.ToolChoice; c != nil {
		switch {
		case c.Tool != nil:
			b.ToolChoice = mustJSON(map[string]any{"type": "function", "function": map[string]any{"name": c.Tool.Name}})
		case c.Any != nil:
			b.ToolChoice = json.RawMessage(`"required"`)
		}
	}
	var ic struct {
		MaxTokens *int64 `json:"maxTokens"`
	}
	if len(b.InferenceConfig) > 0 && string(b.InferenceConfig) != "null" {
		if err := json.Unmarshal(b.InferenceConfig, &ic); err != nil {
			return fmt.Errorf("inferenceConfig: %v", err)
		}
	}
	if ic.MaxTokens != nil && *ic.MaxTokens < 1 {
		return fmt.Errorf("inferenceConfig.maxTokens must be at least 1 (got %d)", *ic.MaxTokens)
	}
	b.MaxTokens = ic.MaxTokens
	return nil
}

// modelsBody: the Bedrock runtime lists no models (that is the control
// plane's ListFoundationModels).
func (bedrockShape) modelsBody(string, time.Time) any { return nil }

// bedrockStop is a Converse answer's stopReason.
func bedrockStop(dec *Decoded) string {
	switch {
	case len(dec.Reply.Calls) > 0:
		return "tool_use"
	case dec.Truncated:
		return "max_tokens"
	}
	return "end_turn"
}

// bedrockUsage is a Converse answer's usage.
func bedrockUsage(in, out int64) map[string]any {
	return map[string]any{"inputTokens": in, "outputTokens": out, "totalTokens": satmath.Add(in, out)}
}

// bedrockContent is the content blocks of an answer: its text, or a
// toolUse block per call.
func bedrockContent(a *answerArgs) []any {
	calls := a.dec.Reply.Calls
	if len(calls) == 0 {
		return []any{map[string]any{"text": strings.Join(Answer(a.out), "")}}
	}
	blocks := make([]any, len(calls))
	for i, c := range calls {
		blocks[i] = map[string]any{"toolUse": map[string]any{"toolUseId": c.ID, "name": c.Name, "input": json.RawMessage(c.Args)}}
	}
	return blocks
}

// okBody renders a ConverseResponse: the assistant message, its
// stopReason, usage and metrics (a latency of 0: the fake's latency is
// the model's, reported nowhere else either).
func (bedrockShape) okBody(ep Endpoint, a *answerArgs) any {
	if ep != EpConverse {
		return nil
	}
	return map[string]any{
		"output":     map[string]any{"message": map[string]any{"role": "assistant", "content": bedrockContent(a)}},
		"stopReason": bedrockStop(a.dec),
		"usage":      bedrockUsage(a.in, a.out),
		"metrics":    map[string]any{"latencyMs": 0},
	}
}

// streamEvents adds ConverseStream's events to groups, each an AWS
// event-stream message (eventFrame): messageStart; for a text answer a
// contentBlockDelta a piece, for tool calls a contentBlockStart (its id
// and name), contentBlockDelta (its input, as a JSON string) and
// contentBlockStop each; then contentBlockStop (text), messageStop with
// the stopReason, and metadata with the usage.
func (bedrockShape) streamEvents(ep Endpoint, groups *sseGroups, a *answerArgs) {
	if ep != EpConverseStream {
		return
	}
	last := groups.n - 1
	groups.frame(0, "messageStart", map[string]any{"role": "assistant"})
	if calls := a.dec.Reply.Calls; len(calls) > 0 {
		for i, c := range calls {
			groups.frame(i, "contentBlockStart", map[string]any{"contentBlockIndex": i,
				"start": map[string]any{"toolUse": map[string]any{"toolUseId": c.ID, "name": c.Name}}})
			groups.frame(i, "contentBlockDelta", map[string]any{"contentBlockIndex": i,
				"delta": map[string]any{"toolUse": map[string]any{"input": string(c.Args)}}})
			groups.frame(i, "contentBlockStop", map[string]any{"contentBlockIndex": i})
		}
	} else {
		for i, p := range a.pieces.all() {
			groups.frame(i, "contentBlockDelta", map[string]any{"contentBlockIndex": 0, "delta": map[string]any{"text": p}})
		}
		groups.frame(last, "contentBlockStop", map[string]any{"contentBlockIndex": 0})
	}
	groups.frame(last, "messageStop", map[string]any{"stopReason": bedrockStop(a.dec)})
	groups.frame(last, "metadata", map[string]any{"usage": bedrockUsage(a.in, a.out), "metrics": map[string]any{"latencyMs": 0}})
}

// EventStreamContentType is the Content-Type of an AWS event stream.
const EventStreamContentType = "application/vnd.amazon.eventstream"

// StreamContentType is the Content-Type of a streamed answer in API style
// api: server-sent events, or Bedrock's AWS event stream.
func StreamContentType(api spec.APIStyle) string {
	if api == spec.APIBedrock {
		return EventStreamContentType
	}
	return "text/event-stream; charset=utf-8"
}

// appendEventFrame appends to b one message of the AWS event-stream
// framing, all integers big-endian: its total length and its headers'
// length (4 bytes each), the CRC-32 (IEEE) of those 8 bytes, the headers,
// the payload, and the CRC-32 of all before it. The headers are
// :event-type (event), :content-type (application/json) and
// :message-type (event), each a 1-byte name length, the name, type 7
// (a string), a 2-byte value length and the value.
func appendEventFrame(b []byte, event string, payload []byte) []byte {
	var h []byte
	for _, kv := range [...][2]string{{":event-type", event}, {":content-type", "application/json"}, {":message-type", "event"}} {
		h = append(h, byte(len(kv[0])))
		h = append(h, kv[0]...)
		h = append(h, 7)
		h = binary.BigEndian.AppendUint16(h, uint16(len(kv[1])))
		h = append(h, kv[1]...)
	}
	start := len(b)
	b = binary.BigEndian.AppendUint32(b, uint32(12+len(h)+len(payload)+4))
	b = binary.BigEndian.AppendUint32(b, uint32(len(h)))
	b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[start:start+8]))
	b = append(b, h...)
	b = append(b, payload...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[start:]))
}

// CallPrefix is "call": Bedrock's own ids begin "tooluse", which the
// server does not read back as its calls' round.
func (bedrockShape) CallPrefix() string { return "call" }

// SmallestRequest is a one-message Converse request for 16 tokens.
func (bedrockShape) SmallestRequest() (path, body string) {
	return "/model/simbench-gateway/converse",
		`{"messages":[{"role":"user","content":[{"text":"hi"}]}],"inferenceConfig":{"maxTokens":16}}`
}

// SDK: BedrockRuntimeClient takes the URL itself as its endpoint and
// appends /model/…; it reads AWS_ENDPOINT_URL_BEDROCK_RUNTIME, not a base
// URL, so no prefix.
func (bedrockShape) SDK(url string) (base, env string) { return url, "" }
