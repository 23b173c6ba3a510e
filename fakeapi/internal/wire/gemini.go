package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/simbench/simbench/sched/satmath"
)

// The Gemini API shape (spec.APIGemini): POST
// /v1beta/models/{model}:generateContent and :streamGenerateContent
// (server-sent events, as ?alt=sse asks; the /v1/ paths too), GET
// /v1beta/models. A request is {"contents":[{"role","parts":[{"text"} |
// {"functionCall"} | {"functionResponse"}]}], "systemInstruction",
// "tools":[{"functionDeclarations"}], "toolConfig", "generationConfig":
// {"maxOutputTokens"}}; an answer {"candidates":[{"content":{"parts",
// "role":"model"},"finishReason"}],"usageMetadata","modelVersion",
// "responseId"}. Errors are google.rpc.Status,
// {"error":{"code":429,"message","status":"RESOURCE_EXHAUSTED",
// "details":[…]}}: a rate limit's 429 holds a google.rpc.QuotaFailure
// naming the quota, and the retry delay as a google.rpc.RetryInfo (the
// service states it in the body only: spec.Config.WithDefaults). An
// overload or outage is a 503 UNAVAILABLE.

// geminiShape is the Gemini API provider shape.
type geminiShape struct{}

// geminiRoutes are the Gemini shape's own paths, in the order a 404 names
// them.
var geminiRoutes = []providerRoute{
	{"/v1beta/models/{model}:generateContent", EpGenerate},
	{"/v1beta/models/{model}:streamGenerateContent", EpStreamGenerate},
	{"/v1beta/models", EpModels},
	{"/v1/models/{model}:generateContent", EpGenerate},
	{"/v1/models/{model}:streamGenerateContent", EpStreamGenerate},
}

func (geminiShape) routes() []providerRoute { return geminiRoutes }

// QuotaFailureType is the @type of the google.rpc.QuotaFailure detail of
// a Gemini-shaped 429, which names the quota that refused it.
const QuotaFailureType = "type.googleapis.com/google.rpc.QuotaFailure"

// errorBody is a google.rpc.Status; a rate limit's 429 holds a
// QuotaFailure naming the limit's quota (ErrorBody adds the RetryInfo).
func (geminiShape) errorBody(status int, message string, extra map[string]any) (v any, e map[string]any) {
	e = map[string]any{"code": status, "message": message, "status": googleStatus(status)}
	if limit, ok := extra["limit"].(string); ok && status == http.StatusTooManyRequests {
		metric, id := geminiQuota(limit)
		e["details"] = []any{map[string]any{"@type": QuotaFailureType, "violations": []any{map[string]any{
			"quotaMetric": "generativelanguage.googleapis.com/" + metric, "quotaId": id}}}}
	}
	return map[string]any{"error": e}, e
}

// googleStatus is the canonical google.rpc.Code name of an HTTP status.
func googleStatus(status int) string {
	switch status {
	case 400, 413:
		return "INVALID_ARGUMENT"
	case 401:
		return "UNAUTHENTICATED"
	case 403:
		return "PERMISSION_DENIED"
	case 404:
		return "NOT_FOUND"
	case 405:
		return "UNIMPLEMENTED"
	case 408, 504:
		return "DEADLINE_EXCEEDED"
	case 409:
		return "ABORTED"
	case 429:
		return "RESOURCE_EXHAUSTED"
	case 503, 529:
		return "UNAVAILABLE"
	}
	return "INTERNAL"
}

// geminiQuota is the quota metric and id a 429 of limit (a Limit* name)
// names, as the Gemini API's per-minute quotas are called.
func geminiQuota(limit string) (metric, id string) {
	switch limit {
	case LimitTPM, LimitITPM:
		return "generate_content_input_token_count", "GenerateContentInputTokensPerModelPerMinute"
	case LimitOTPM:
		return "generate_content_output_token_count", "GenerateContentOutputTokensPerModelPerMinute"
	case LimitRPS:
		return "generate_content_requests", "GenerateRequestsPerSecondPerProjectPerModel"
	case LimitConcurrency:
		return "generate_content_concurrent_requests", "GenerateContentConcurrentRequestsPerProjectPerModel"
	}
	return "generate_content_requests", "GenerateRequestsPerMinutePerProjectPerModel"
}

func (geminiShape) ErrorExtra(map[string]any, string) {}

// Status answers an overload with 503 UNAVAILABLE, as the Gemini API
// does; the rest is the model's Status.
func (geminiShape) Status(kind, _ string, model int) int {
	if kind == KindOverloaded {
		return http.StatusServiceUnavailable
	}
	return model
}

func (geminiShape) OutageStatus() int { return http.StatusServiceUnavailable }

// QuotaStatus: a spent quota is a 429 RESOURCE_EXHAUSTED too.
func (geminiShape) QuotaStatus() int { return http.StatusTooManyRequests }

func (geminiShape) QuotaMessage(service string) string { return spentCreditMessage(service) }

// ContextMessage is the Gemini API's message for a prompt past the
// model's input limit.
func (geminiShape) ContextMessage(window, tokens int64) string {
	return fmt.Sprintf("The input token count (%d) exceeds the maximum number of tokens allowed (%d).", tokens, window)
}

// LevelPhrase names the level of nested limits that refused a 429; a
// project is a Google Cloud project.
func (geminiShape) LevelPhrase(level, scope string) string {
	return levelPhrase(level, scope, "project")
}

func (geminiShape) SetRequestID(http.Header, string) {}

// geminiContent is one turn of a request's contents.
type geminiContent struct {
	Role  string          `json:"role"`
	Parts json.RawMessage `json:"parts"`
}

// checkFields requires contents and turns the request into the fields
// the other shapes' requests fill (reqBody): contents into messages (role
// and content, the parts), systemInstruction into system, the function
// declarations into chat-style tools, toolConfig into a tool_choice and
// generationConfig.maxOutputTokens into max_output_tokens. A request to
// :streamGenerateContent is streamed.
func (geminiShape) checkFields(ep Endpoint, b *reqBody, d *Decoded) error {
	if ep != EpGenerate && ep != EpStreamGenerate {
		return nil
	}
	var contents []geminiContent
	if len(b.Contents) == 0 || string(b.Contents) == "null" {
		return errors.New("* GenerateContentRequest.contents: contents is not specified")
	}
	if err := json.Unmarshal(b.Contents, &contents); err != nil {
		return fmt.Errorf("contents is not an array of Content: %v", err)
	}
	msgs := make([]any, len(contents))
	for i, c := range contents {
		msgs[i] = map[string]any{"role": c.Role, "content": c.Parts}
	}
	b.Messages = mustJSON(msgs)
	b.System = b.SystemInstruction
	tools, err := geminiTools(b.Tools)
	if err != nil {
		return err
	}
	b.Tools = tools
	if b.ToolChoice, err = geminiChoice(b.ToolConfig); err != nil {
		return err
	}
	var gc struct {
		MaxOutputTokens *int64 `json:"maxOutputTokens"`
	}
	if len(b.GenerationConfig) > 0 {
		if err := json.Unmarshal(b.GenerationConfig, &gc); err != nil {
			return fmt.Errorf("generationConfig: %v", err)
		}
	}
	if gc.MaxOutputTokens != nil && *gc.MaxOutputTokens < 0 {
		return fmt.Errorf("generationConfig.maxOutputTokens must not be negative (got %d)", *gc.MaxOutputTokens)
	}
	b.MaxOutputTokens = gc.MaxOutputTokens
	d.Stream = ep == EpStreamGenerate
	return nil
}

// geminiTools turns a request's tools, [{"functionDeclarations":[{"name",
// "parameters" or "parametersJsonSchema"}]}], into chat completions'
// [{"type":"function","function":{"name","parameters"}}]; the Gemini API's
// own tools (googleSearch, codeExecution) are left out. nil: none.
func geminiTools(raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var tools []struct {
		FunctionDeclarations []struct {
			Name                 string          `json:"name"`
			Parameters           json.RawMessage `json:"parameters"`
			ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema"`
		} `json:"functionDeclarations"`
	}
	if err := json.Unmarshal(raw, &tools); err != nil {
		return nil, fmt.Errorf("tools is not an array of Tool: %v", err)
	}
	var out []any
	for _, t := range tools {
		for _, f := range t.FunctionDeclarations {
			params := f.Parameters
			if len(params) == 0 {
				params = f.ParametersJSONSchema
			}
			fn := map[string]any{"name": f.Name}
			if len(params) > 0 {
				fn["parameters"] = params
			}
			out = append(out, map[string]any{"type": "function", "function": fn})
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return mustJSON(out), nil
}

// geminiChoice turns toolConfig.functionCallingConfig into a chat
// tool_choice: mode NONE "none", ANY "required" (or the one function of
// allowedFunctionNames), AUTO and the rest the model's choice (nil).
func geminiChoice(raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var tc struct {
		FunctionCallingConfig struct {
			Mode                 string   `json:"mode"`
			AllowedFunctionNames []string `json:"allowedFunctionNames"`
		} `json:"functionCallingConfig"`
	}
	if err := json.Unmarshal(raw, &tc); err != nil {
		return nil, fmt.Errorf("toolConfig: %v", err)
	}
	fc := tc.FunctionCallingConfig
	switch strings.ToUpper(fc.Mode) {
	case "NONE":
		return json.RawMessage(`"none"`), nil
	case "ANY":
		if len(fc.AllowedFunctionNames) == 1 {
			return mustJSON(map[string]any{"type": "function", "function": map[string]any{"name": fc.AllowedFunctionNames[0]}}), nil
		}
		return json.RawMessage(`"required"`), nil
	}
	return nil, nil
}

func (geminiShape) modelsBody(model string, _ time.Time) any {
	return map[string]any{"models": []any{map[string]any{
		"name": "models/" + model, "displayName": model,
		"supportedGenerationMethods": []any{"generateContent", "streamGenerateContent"}}}}
}

// geminiFinish is a candidate's finishReason: "MAX_TOKENS" when the
// answer stopped at maxOutputTokens, else "STOP" (also after function
// calls, as the Gemini API says it).
func geminiFinish(dec *Decoded) string {
	if dec.Truncated && len(dec.Reply.Calls) == 0 {
		return "MAX_TOKENS"
	}
	return "STOP"
}

// geminiUsage is a response's usageMetadata.
func geminiUsage(in, out int64) map[string]any {
	return map[string]any{"promptTokenCount": in, "candidatesTokenCount": out, "totalTokenCount": satmath.Add(in, out)}
}

// geminiResponse is a GenerateContentResponse of one candidate with parts;
// finish "" leaves the finishReason out (a stream's chunk before the last).
func geminiResponse(a *answerArgs, parts []any, finish string, usage map[string]any) map[string]any {
	cand := map[string]any{"content": map[string]any{"parts": parts, "role": "model"}, "index": 0}
	if finish != "" {
		cand["finishReason"] = finish
	}
	return map[string]any{"candidates": []any{cand}, "usageMetadata": usage, "modelVersion": a.model, "responseId": a.id}
}

// functionCallParts are the parts of a.dec's tool calls.
func functionCallParts(calls []ToolCall) []any {
	parts := make([]any, len(calls))
	for i, c := range calls {
		parts[i] = map[string]any{"functionCall": map[string]any{"id": c.ID, "name": c.Name, "args": json.RawMessage(c.Args)}}
	}
	return parts
}

// okBody renders a GenerateContentResponse: a text part of the answer or
// a functionCall part per call of a.dec.reply.
func (geminiShape) okBody(ep Endpoint, a *answerArgs) any {
	if ep != EpGenerate {
		return nil
	}
	parts := []any{map[string]any{"text": strings.Join(Answer(a.out), "")}}
	if calls := a.dec.Reply.Calls; len(calls) > 0 {
		parts = functionCallParts(calls)
	}
	return geminiResponse(a, parts, geminiFinish(a.dec), geminiUsage(a.in, a.out))
}

// streamEvents adds a streamed GenerateContentResponse's chunks to groups:
// one per piece of the answer (or per function call, whole, as the Gemini
// API streams them), each with the prompt's usage; the last with the
// finishReason and the whole usage.
func (geminiShape) streamEvents(ep Endpoint, groups *sseGroups, a *answerArgs) {
	if ep != EpStreamGenerate {
		return
	}
	last := groups.n - 1
	partial := map[string]any{"promptTokenCount": a.in, "totalTokenCount": a.in}
	chunk := func(i int, parts []any) {
		if i == last {
			groups.event(i, "", geminiResponse(a, parts, geminiFinish(a.dec), geminiUsage(a.in, a.out)))
			return
		}
		groups.event(i, "", geminiResponse(a, parts, "", partial))
	}
	if calls := a.dec.Reply.Calls; len(calls) > 0 {
		for i, p := range functionCallParts(calls) {
			chunk(i, []any{p})
		}
		return
	}
	if a.pieces == 0 {
		chunk(last, []any{map[string]any{"text": ""}})
		return
	}
	for i, p := range a.pieces.all() {
		chunk(i, []any{map[string]any{"text": p}})
	}
}

func (geminiShape) CallPrefix() string { return "call" }

// SmallestRequest is a one-turn request for 16 tokens.
func (geminiShape) SmallestRequest() (path, body string) {
	return "/v1beta/models/simbench-gateway:generateContent",
		`{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"maxOutputTokens":16}}`
}

// SDK: the Gemini SDKs take the URL itself as their base URL
// (httpOptions.baseUrl, GOOGLE_GEMINI_BASE_URL) and append
// /v1beta/models/…; the key is GEMINI_API_KEY, so no one prefix names
// both.
func (geminiShape) SDK(url string) (base, env string) { return url, "" }
