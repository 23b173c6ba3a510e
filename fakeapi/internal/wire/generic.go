package wire

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// The generic tool shape (spec.APIGeneric): every path is a JSON tool
// endpoint answering {"ok":true,"id","service","path","tokens"}; errors as
// {"error":{"type","message","status",…}} with the type Anthropic gives the
// status and the rejection's fields (kind, limit, retry_after_ms) inside.
// Every provider-shaped service also answers its paths outside the API's
// own (see apiPath) in this shape.

// genericShape is the generic tool shape.
type genericShape struct{}

// routes: a generic service has no API paths of its own.
func (genericShape) routes() []providerRoute { return nil }

// errorBody puts extra's fields (but retry_delay, which errorBody writes as
// details) in the error, and a spent credit's or a context too long's kind
// as its code.
func (genericShape) errorBody(status int, message string, extra map[string]any) (v any, e map[string]any) {
	kind, _ := extra["kind"].(string)
	e = map[string]any{"type": anthropicType(status), "message": message, "status": status}
	for k, x := range extra {
		if k != "retry_delay" {
			e[k] = x
		}
	}
	if kind == KindQuotaExhausted || kind == KindContextTooLong {
		e["code"] = kind
	}
	return map[string]any{"error": e}, e
}

func (genericShape) ErrorExtra(map[string]any, string) {}

func (genericShape) Status(_, _ string, model int) int { return model }

func (genericShape) OutageStatus() int { return http.StatusServiceUnavailable }

// QuotaStatus is a 429 with kind insufficient_quota.
func (genericShape) QuotaStatus() int { return http.StatusTooManyRequests }

func (genericShape) QuotaMessage(service string) string { return spentCreditMessage(service) }

// ContextMessage words a context too long as OpenAI does.
func (genericShape) ContextMessage(window, tokens int64) string {
	return openAIShape{}.ContextMessage(window, tokens)
}

func (genericShape) SetRequestID(http.Header, string) {}

// checkFields: a generic tool takes any JSON object.
func (genericShape) checkFields(Endpoint, *reqBody, *Decoded) error { return nil }

// modelsBody: a generic service routes no /v1/models; nil.
func (genericShape) modelsBody(string, time.Time) any { return nil }

// okBody: a generic service generates nothing (genericBody answers its
// paths); nil.
func (genericShape) okBody(Endpoint, *answerArgs) any { return nil }

func (genericShape) streamEvents(Endpoint, *sseGroups, *answerArgs) {}

func (genericShape) CallPrefix() string { return "call" }

// SmallestRequest is an empty JSON object to the tool's root path.
func (genericShape) SmallestRequest() (path, body string) { return "", `{}` }

// SDK: no official SDK; the URL itself.
func (genericShape) SDK(url string) (base, env string) { return url, "" }

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

// LevelPhrase names the level of nested limits that refused a 429; a
// project is a project.
func (genericShape) LevelPhrase(level, scope string) string {
	return levelPhrase(level, scope, "project")
}
