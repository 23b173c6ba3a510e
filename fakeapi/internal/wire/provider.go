package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/simbench/simbench/spec"
)

// Endpoint is what a path means for a service.
type Endpoint uint8

const (
	// EpGeneric is a tool path: any path outside the provider's own
	// endpoints, the only kind of request that can be a write.
	EpGeneric Endpoint = iota
	// EpChat is OpenAI's POST /v1/chat/completions.
	EpChat
	// EpEmbeddings is OpenAI's POST /v1/embeddings.
	EpEmbeddings
	// EpMessages is Anthropic's POST /v1/messages.
	EpMessages
	// EpCountTokens is Anthropic's POST /v1/messages/count_tokens.
	EpCountTokens
	// EpModels is GET /v1/models, the model list, in either provider's shape.
	EpModels
	// EpResponses is OpenAI's POST /v1/responses.
	EpResponses
	// EpUnknown is a /v1/... path a provider-style service does not answer.
	EpUnknown
	// EpGenerate is the Gemini API's POST
	// /v1beta/models/{model}:generateContent.
	EpGenerate
	// EpStreamGenerate is the Gemini API's POST
	// /v1beta/models/{model}:streamGenerateContent, always streamed.
	EpStreamGenerate
	// EpConverse is the Bedrock runtime's POST /model/{modelId}/converse.
	EpConverse
	// EpConverseStream is the Bedrock runtime's POST
	// /model/{modelId}/converse-stream, always streamed.
	EpConverseStream
)

// Method is the HTTP method an endpoint answers: GET for EpModels, POST
// for every other.
func (ep Endpoint) Method() string {
	if ep == EpModels {
		return http.MethodGet
	}
	return http.MethodPost
}

// Provider is one API shape a service speaks (spec.APIStyle): its own
// paths, the answers and streams of its endpoints, its error bodies and
// statuses, its request-id headers and how an official SDK finds it. Each
// shape is one file: openai.go (with responses.go and embeddings.go),
// anthropic.go and generic.go; the rest of the server asks the service's
// Provider (ProviderOf) and holds no arm per shape. Request reading
// (DecodeRequest) is per endpoint, and an endpoint belongs to one shape.
// The rate-limit headers follow the service's header style
// (spec.HeaderStyle, fakeapi's headers.go), which a scenario sets apart from the
// shape. A Provider whose endpoints require query parameters also
// implements queryChecker (azure.go).
//
// Adding an error shape to a Provider touches its errorBody (and status,
// if the status differs); adding a Provider is one file (azure.go,
// gemini.go), an entry in providers and a value of spec.APIStyle, and an
// Endpoint when it answers a request no other shape does (gemini.go).
type Provider interface {
	// routes lists the provider's own paths and their endpoints, in the
	// order a 404 names them.
	routes() []providerRoute
	// errorBody is the JSON value of an error with status and message in
	// the provider's shape, and the error object within it (where
	// errorBody adds a retry delay's details); extra is errorBody's.
	errorBody(status int, message string, extra map[string]any) (v any, e map[string]any)
	// ErrorExtra adds to extra what the provider's error bodies to request
	// requestID carry beside the error.
	ErrorExtra(extra map[string]any, requestID string)
	// Status is the HTTP Status of the answer to a decision of kind,
	// refused by limit (their names, as Kind* and Limit* spell them), that
	// the model answers with Status model (0: none).
	Status(kind, limit string, model int) int
	// OutageStatus is the status of a refusal during an outage.
	OutageStatus() int
	// QuotaStatus is the status of a refusal for spent credit.
	QuotaStatus() int
	// QuotaMessage words a refusal for spent credit by service.
	QuotaMessage(service string) string
	// ContextMessage words a refusal of a prompt of tokens input tokens
	// beyond a context window of window tokens.
	ContextMessage(window, tokens int64) string
	// LevelPhrase names, in a 429's message, the level of nested limits
	// that refused it: level is "key", "project" or "organization" and
	// scope its name (the API key, the project, the service).
	LevelPhrase(level, scope string) string
	// SetRequestID adds to h the request-id headers the provider sends
	// besides X-Request-Id.
	SetRequestID(h http.Header, id string)
	// checkFields checks the fields endpoint ep (one of the provider's
	// routes, or EpGeneric) requires of body b, and decodes into d what
	// the endpoint asks for beyond tokens and tools (an embedding).
	checkFields(ep Endpoint, b *reqBody, d *Decoded) error
	// modelsBody is the JSON value of GET /v1/models listing model,
	// created at created.
	modelsBody(model string, created time.Time) any
	// okBody is the JSON value of a successful answer of endpoint ep, one
	// of the provider's routes other than EpModels and EpCountTokens.
	okBody(ep Endpoint, a *answerArgs) any
	// streamEvents adds to groups the events of a streamed answer of
	// endpoint ep (ep.Generates()).
	streamEvents(ep Endpoint, groups *sseGroups, a *answerArgs)
	// CallPrefix begins the ids of the fake model's tool calls.
	CallPrefix() string
	// SmallestRequest is the smallest model request the provider answers:
	// its path ("" for a tool service, whose every path is a tool's) and
	// JSON body, what a load that only counts admissions sends.
	SmallestRequest() (path, body string)
	// SDK returns the base URL an official SDK takes for a service at url,
	// and the prefix of the SDK's environment variables ("OPENAI":
	// OPENAI_BASE_URL, OPENAI_API_KEY; "" for none).
	SDK(url string) (base, env string)
}

// providerRoute is one of a provider's own paths and its endpoint. A
// segment of path may be a parameter: "{name}" matches any one non-empty
// segment without a colon, "{*name}" any one non-empty segment, colons
// included (Bedrock's model ids, "anthropic.claude-3-haiku-…-v1:0"), and
// "{name}:verb" any segment that ends in ":verb" after a non-empty name
// (the Gemini API's "{model}:generateContent").
type providerRoute struct {
	path string
	ep   Endpoint
}

// matches reports whether path is the route's.
func (r providerRoute) matches(path string) bool {
	if !strings.Contains(r.path, "{") {
		return r.path == path
	}
	pattern := r.path
	for pattern != "" || path != "" {
		var p, x string
		p, pattern, _ = strings.Cut(strings.TrimPrefix(pattern, "/"), "/")
		x, path, _ = strings.Cut(strings.TrimPrefix(path, "/"), "/")
		if !strings.HasPrefix(p, "{") {
			if p != x {
				return false
			}
			continue
		}
		_, verb, _ := strings.Cut(p, "}")
		name, ok := strings.CutSuffix(x, verb)
		if !ok || name == "" || verb == "" && !strings.HasPrefix(p, "{*") && strings.Contains(name, ":") {
			return false
		}
	}
	return true
}

// queryChecker is a Provider whose endpoints refuse some queries (Azure
// OpenAI's required api-version).
type queryChecker interface {
	// checkQuery returns the status and JSON value of the refusal of a
	// request to endpoint ep with query q, or status 0 to accept it.
	checkQuery(ep Endpoint, q url.Values) (status int, body any)
}

// CheckQuery returns the status and body of API style api's refusal of a
// request to endpoint ep with query q, or status 0 when the provider takes
// the query (every provider but those implementing queryChecker does, and
// every provider on a tool path or an unknown one).
func CheckQuery(api spec.APIStyle, ep Endpoint, q url.Values) (status int, body []byte) {
	qc, ok := ProviderOf(api).(queryChecker)
	if !ok || ep == EpGeneric || ep == EpUnknown { // a tool's path, or a 404
		return 0, nil
	}
	status, v := qc.checkQuery(ep, q)
	if status == 0 {
		return 0, nil
	}
	b, _ := json.Marshal(v) // plain maps and strings: cannot fail
	return status, append(b, '\n')
}

// providers are the shapes by API style.
var providers = map[spec.APIStyle]Provider{
	spec.APIOpenAI:    openAIShape{},
	spec.APIAnthropic: anthropicShape{},
	spec.APIGeneric:   genericShape{},
	spec.APIAzure:     azureShape{},
	spec.APIGemini:    geminiShape{},
	spec.APIBedrock:   bedrockShape{},
}

// ProviderOf returns the shape of API style api (a validated style; the
// generic shape for any other).
func ProviderOf(api spec.APIStyle) Provider {
	if p, ok := providers[api]; ok {
		return p
	}
	return genericShape{}
}

// answerArgs is what an admitted request's answer is rendered from.
type answerArgs struct {
	// id is the request's number, model the model answering.
	id, model string
	// created is the wall-clock time of the decision.
	created time.Time
	// in and out are the input and output tokens of its usage.
	in, out int64
	// dec is the decoded request with the fake model's reply.
	dec *Decoded
	// pieces are the text answer's pieces, for a stream.
	pieces answerPieces
}

// RouteOf maps a path within a service to its endpoint; ok is false for a
// provider endpoint called with another method than its own. On a
// provider-shaped service (one with routes), an API path (apiPath) that is
// not one of its routes is epUnknown (404); other paths are generic tool
// paths.
func RouteOf(api spec.APIStyle, method, path string) (ep Endpoint, ok bool) {
	p := ProviderOf(api)
	for _, r := range p.routes() {
		if r.matches(path) {
			return r.ep, method == r.ep.Method()
		}
	}
	if len(p.routes()) > 0 && apiPath(path) {
		return EpUnknown, true
	}
	return EpGeneric, true
}

// apiPath reports whether path is under a provider API's prefix rather
// than a tool path: its first segment is a version ("v1", "v1beta",
// "v2alpha1", as OpenAI, Anthropic and Gemini paths begin), "openai"
// (Azure OpenAI's /openai/deployments/…) or "model" (Bedrock's
// /model/ID/converse).
func apiPath(path string) bool {
	seg, _, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	switch seg {
	case "openai", "model":
		return true
	}
	v, ok := strings.CutPrefix(seg, "v")
	if !ok || v == "" || v[0] < '0' || v[0] > '9' {
		return false
	}
	v = strings.TrimLeft(v, "0123456789")
	for _, pre := range []string{"alpha", "beta"} {
		if rest, ok := strings.CutPrefix(v, pre); ok {
			v = strings.TrimLeft(rest, "0123456789")
		}
	}
	return v == ""
}

// KnownPaths lists a service's provider endpoints, for 404 messages; the
// last entry is always "/*", the generic tool paths.
func KnownPaths(api spec.APIStyle) []string {
	var out []string
	for _, r := range ProviderOf(api).routes() {
		out = append(out, strings.ReplaceAll(r.path, "{*", "{"))
	}
	return append(out, "/*")
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
	// The Gemini API's request (gemini.go), which its checkFields turns
	// into the fields above.
	Contents          json.RawMessage `json:"contents"`
	SystemInstruction json.RawMessage `json:"systemInstruction"`
	ToolConfig        json.RawMessage `json:"toolConfig"`
	GenerationConfig  json.RawMessage `json:"generationConfig"`
	// The Bedrock runtime's Converse request (bedrock.go) adds its
	// inferenceConfig; its toolConfig is the field above.
	InferenceConfig json.RawMessage `json:"inferenceConfig"`
}

// Decoded is what the server learns from a request.
type Decoded struct {
	// Model is the body's "model" ("" when it names none).
	Model string
	// Input is the request's input tokens (TokensHeader, else a tool
	// body's tokens, else a quarter of the prompt fields' bytes); Output its output tokens: a provider request's output limit
	// (max_tokens and the like, else the service's default), a tool
	// request's OutputTokensHeader or output_tokens.
	Input, Output int64
	// Resource is the body's "resource", the key a write is known by, and
	// HasResource says the body had one.
	Resource    string
	HasResource bool
	// Stream asks for server-sent events; includeUsage for OpenAI's final
	// usage chunk.
	Stream, includeUsage bool
	// embed is what an embeddings request asks for.
	embed embedRequest
	// Agent is what a chat, messages or responses request says about tools
	// and its conversation; Reply is the fake model's answer, set before
	// the model decides on the request.
	Agent AgentRequest
	Reply Reply
	// Answer is the output tokens of the fake model's Answer (see
	// fakeapi's answerTokens), set with Reply.
	Answer int64
	// MaxSet says the request named its output limit (max_tokens,
	// max_completion_tokens or max_output_tokens); Truncated, set with
	// reply, that the text answer stopped at it, which the answer's stop
	// reason says (OpenAI's finish_reason "length", Anthropic's
	// stop_reason "max_tokens").
	MaxSet, Truncated bool
}

// generates reports whether the endpoint answers with generated text (or
// tool calls), streamed on request.
func (ep Endpoint) Generates() bool {
	switch ep {
	case EpChat, EpMessages, EpResponses, EpGenerate, EpStreamGenerate, EpConverse, EpConverseStream:
		return true
	}
	return false
}

// TokensHeader overrides the input-token estimate of a request.
const TokensHeader = "X-Simbench-Tokens"

// OutputTokensHeader gives a generic request's output tokens (0 without
// it or a body's "output_tokens"): the tokens the service generates at its
// tokens per second and charges against its output-token limit.
const OutputTokensHeader = "X-Simbench-Output-Tokens"

// ClientHeader tells clients sharing one API key apart for early-retry accounting.
const ClientHeader = "X-Simbench-Client"

// DecodeRequest reads the fields the model needs from a body. Input tokens
// are estimated as one per four bytes of the prompt fields (messages, input,
// system, prompt) unless tokensHeader (or a generic body's "tokens") gives
// them; output tokens are max_completion_tokens, max_tokens, or
// defaultOutput for chat and messages, 0 for embeddings, and for generic
// tools outputHeader or the body's "output_tokens" (0 without them).
func DecodeRequest(api spec.APIStyle, ep Endpoint, body []byte, tokensHeader, outputHeader string, defaultOutput int64) (Decoded, error) {
	var d Decoded
	b, err := parseBody(ep, body)
	if err != nil {
		return d, err
	}
	if b.Stream && !ep.Generates() {
		return d, errors.New("stream is supported on chat completions, responses and messages only; send stream: false")
	}
	d.Stream = b.Stream
	d.includeUsage = b.StreamOptions != nil && b.StreamOptions.IncludeUsage
	d.Model = b.Model
	for _, p := range []*int64{b.MaxTokens, b.MaxCompletionTokens, b.MaxOutputTokens, b.Tokens, b.OutputTokens} {
		if p != nil && *p < 0 {
			return d, fmt.Errorf("token counts must not be negative (got %d)", *p)
		}
	}
	if err := decodeFields(api, ep, &b, &d); err != nil {
		return d, err
	}
	d.MaxSet = b.MaxCompletionTokens != nil || b.MaxTokens != nil || b.MaxOutputTokens != nil
	if d.Input, d.Output, err = tokenCounts(ep, &b, tokensHeader, outputHeader, defaultOutput); err != nil {
		return d, err
	}
	if b.Resource != nil {
		d.Resource, d.HasResource = *b.Resource, true
	}
	return d, nil
}

// parseBody parses a request body, which must be a JSON object (or empty,
// for a generic tool).
func parseBody(ep Endpoint, body []byte) (reqBody, error) {
	var b reqBody
	trimmed := bytes.TrimSpace(body)
	switch {
	case len(trimmed) == 0 && ep == EpGeneric:
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

// decodeFields checks the fields endpoint ep of API style api requires of
// body b (provider.checkFields) and decodes into d what a generating
// request says about tools.
func decodeFields(api spec.APIStyle, ep Endpoint, b *reqBody, d *Decoded) error {
	if err := ProviderOf(api).checkFields(ep, b, d); err != nil {
		return err
	}
	if ep.Generates() {
		a, err := decodeAgent(ep, b)
		if err != nil {
			return err
		}
		d.Agent = a
	}
	return nil
}

// tokenCounts returns the input and output tokens of a request to ep with
// body b (see DecodeRequest); on an error, the counts found so far.
func tokenCounts(ep Endpoint, b *reqBody, tokensHeader, outputHeader string, defaultOutput int64) (in, out int64, err error) {
	prompt := len(b.Messages) + len(b.Input) + len(b.System) + len(b.Prompt) + len(b.Instructions) + len(b.Tools)
	in = int64(prompt+3) / 4
	switch {
	case ep.Generates():
		out = defaultOutput
		if b.MaxCompletionTokens != nil {
			out = *b.MaxCompletionTokens
		} else if b.MaxTokens != nil {
			out = *b.MaxTokens
		} else if b.MaxOutputTokens != nil {
			out = *b.MaxOutputTokens
		}
	case ep == EpGeneric:
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

// OKBody renders a successful response of the endpoint's real shape (for
// chat, messages and responses, the text answer or dec.reply's tool calls),
// or a generic tool's answer.
func OKBody(api spec.APIStyle, ep Endpoint, service, path, id, model string, created time.Time, in, out int64, dec *Decoded) []byte {
	if ep == EpGeneric {
		return genericBody(id, service, path, in+out)
	}
	v := ProviderOf(api).okBody(ep, &answerArgs{id: id, model: model, created: created, in: in, out: out, dec: dec})
	b, _ := json.Marshal(v) // plain maps and strings: cannot fail
	return append(b, '\n')
}

// answerHead is how the fake model's answer begins ("simbench: ok"), in the
// pieces (tokens) a stream sends.
var answerHead = []string{"simbench", ":", " ok"}

// MaxAnswerPieces caps the tokens of a text answer (fakeapi's answerTokens
// draws no longer one), so that the answer's pieces are as many as its
// usage reports.
const MaxAnswerPieces = 4096

// answer returns the fake model's text answer to a request of out output
// tokens, as the pieces a stream sends (one per token): the first out of
// answerHead, then " ok" until the answer has out tokens (at most
// maxAnswerPieces). The fake's tokens are these pieces: "simbench", ":"
// and each " ok" are one token each.
func Answer(out int64) []string {
	p := make([]string, 0, int(streamedAnswer(out)))
	for _, piece := range streamedAnswer(out).all() {
		p = append(p, piece)
	}
	return p
}

// ModelsBody lists the service's model as the provider's /v1/models does.
func ModelsBody(api spec.APIStyle, model string, created time.Time) []byte {
	b, _ := json.Marshal(ProviderOf(api).modelsBody(model, created))
	return append(b, '\n')
}

// levelPhrase words the level of nested limits that refused a request,
// calling a project project (OpenAI's word; Anthropic's is workspace). An
// API key is named by its last four characters, as providers' dashboards
// show it, never whole.
func levelPhrase(level, scope, project string) string {
	switch level {
	case "key":
		tail := scope
		if r := []rune(scope); len(r) > 4 {
			tail = string(r[len(r)-4:])
		}
		return fmt.Sprintf("for API key ...%s", tail)
	case "project":
		return fmt.Sprintf("in %s %s", project, scope)
	}
	return fmt.Sprintf("in organization %s", scope)
}
