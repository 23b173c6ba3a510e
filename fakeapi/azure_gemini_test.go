package fakeapi

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/simbench/simbench/fakeapi/internal/wire"
	"github.com/simbench/simbench/spec"
)

// postRead is post, with the body read.
func postRead(t *testing.T, c *http.Client, url, body string, header ...string) (int, http.Header, []byte) {
	t.Helper()
	res := post(t, c, url, body, header...)
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, res.Header, b
}

// decodeJSON decodes b into a map, failing the test when it is not a JSON
// object.
func decodeJSON(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return m
}

// limitedService is a service of api whose request limit admits one request
// a minute; text answers are 5 tokens.
func limitedService(name string, api spec.APIStyle) ServiceConfig {
	return ServiceConfig{Config: spec.Config{Name: name, API: api, RPM: 1, Burst: 1, TPM: 1_000_000},
		Agent: AgentConfig{Answer: spec.Dist[float64]{Kind: spec.DistConstant, Value: 5}}}
}

// An Azure OpenAI deployment's chat completion under the service's prefix
// is OpenAI's; without api-version it is Azure's 400; an unknown path under
// /openai/ and a rate limit's 429 are Azure's {"error":{"code","message"}},
// the 429 with OpenAI's retry-after and retry-after-ms.
func TestAzureShape(t *testing.T) {
	var clk manualClock
	s, c := startServer(t, ServerConfig{Clock: clk.now, Services: []ServiceConfig{limitedService("oai", spec.APIAzure)}})
	base := s.URL("oai") + "/openai/deployments/gpt4/chat/completions"
	const body = `{"messages":[{"role":"user","content":"hi"}]}`

	status, _, b := postRead(t, c, base, body, "Api-Key", "k")
	if e := decodeJSON(t, b)["error"].(map[string]any); status != 400 || e["code"] != "MissingApiVersionParameter" {
		t.Fatalf("without api-version: %d %s", status, b)
	}
	status, _, b = postRead(t, c, base+"?api-version="+wire.AzureAPIVersion, body, "Api-Key", "k")
	m := decodeJSON(t, b)
	choices, _ := m["choices"].([]any)
	if status != 200 || len(choices) != 1 || m["object"] != "chat.completion" {
		t.Fatalf("chat completion: %d %s", status, b)
	}
	msg := choices[0].(map[string]any)["message"].(map[string]any)
	if msg["content"] != strings.Join(wire.Answer(5), "") {
		t.Fatalf("answer %q", msg["content"])
	}
	status, h, b := postRead(t, c, base+"?api-version="+wire.AzureAPIVersion, body, "Api-Key", "k")
	e := decodeJSON(t, b)["error"].(map[string]any)
	if status != 429 || e["code"] != "429" || !strings.Contains(e["message"].(string), "requests per min (RPM)") || len(e) != 2 {
		t.Fatalf("429: %d %s", status, b)
	}
	// A minute a request, one taken at time 0: the next in 60 s.
	if h.Get("Retry-After") != "60" || h.Get("Retry-After-Ms") != "60000" || h.Get("X-Ratelimit-Limit-Requests") != "1" {
		t.Fatalf("429 headers %v", h)
	}
	status, _, b = postRead(t, c, s.URL("oai")+"/openai/deployments/gpt4/completions?api-version=1", body)
	if e := decodeJSON(t, b)["error"].(map[string]any); status != 404 || e["code"] != "404" {
		t.Fatalf("unknown path: %d %s", status, b)
	}
	// A tool path is still a tool's, which needs no api-version (the
	// request limit, spent, refuses it).
	if status, _, b = postRead(t, c, s.URL("oai")+"/tools/search", `{}`); status != 429 {
		t.Fatalf("tool path: %d %s", status, b)
	}
}

// sseData returns the data of each server-sent event in body.
func sseData(t *testing.T, body []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(string(body)))
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, decodeJSON(t, []byte(d)))
		} else if sc.Text() != "" {
			t.Fatalf("line %q in a Gemini stream", sc.Text())
		}
	}
	return out
}

// candidate returns the first candidate of a GenerateContentResponse.
func candidate(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	cs, _ := m["candidates"].([]any)
	if len(cs) != 1 {
		t.Fatalf("candidates of %v", m)
	}
	return cs[0].(map[string]any)
}

// A Gemini generateContent answer, its stream, a function call, a 429 as
// RESOURCE_EXHAUSTED with QuotaFailure and RetryInfo (and no Retry-After:
// the delay is in the body only) and an unknown method's 404 NOT_FOUND.
func TestGeminiShape(t *testing.T) {
	var clk manualClock
	plain := limitedService("gem", spec.APIGemini)
	plain.RPM, plain.Burst = 600, 0
	s, c := startServer(t, ServerConfig{Clock: clk.now, Services: []ServiceConfig{plain, limitedService("gem429", spec.APIGemini)}})
	const contents = `"contents":[{"role":"user","parts":[{"text":"hello"}]}]`

	status, _, b := postRead(t, c, s.URL("gem")+"/v1beta/models/gemini-2.5-flash:generateContent", `{`+contents+`}`, "X-Goog-Api-Key", "k")
	m := decodeJSON(t, b)
	cand := candidate(t, m)
	parts := cand["content"].(map[string]any)["parts"].([]any)
	usage := m["usageMetadata"].(map[string]any)
	if status != 200 || len(parts) != 1 || parts[0].(map[string]any)["text"] != strings.Join(wire.Answer(5), "") || cand["finishReason"] != "STOP" {
		t.Fatalf("answer: %d %s", status, b)
	}
	if usage["candidatesTokenCount"] != 5.0 || usage["totalTokenCount"] != usage["promptTokenCount"].(float64)+5 {
		t.Fatalf("usage %v", usage)
	}

	// Cut at maxOutputTokens 3, streamed: one chunk a token, the last
	// with MAX_TOKENS and the whole usage.
	status, h, b := postRead(t, c, s.URL("gem")+"/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
		`{`+contents+`,"generationConfig":{"maxOutputTokens":3}}`)
	chunks := sseData(t, b)
	if status != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/event-stream") || len(chunks) != 3 {
		t.Fatalf("stream: %d %v %s", status, h, b)
	}
	var text strings.Builder
	for i, ch := range chunks {
		cand := candidate(t, ch)
		text.WriteString(cand["content"].(map[string]any)["parts"].([]any)[0].(map[string]any)["text"].(string))
		if _, ok := cand["finishReason"]; ok != (i == 2) {
			t.Fatalf("chunk %d: %v", i, ch)
		}
	}
	if text.String() != strings.Join(wire.Answer(3), "") || candidate(t, chunks[2])["finishReason"] != "MAX_TOKENS" ||
		chunks[2]["usageMetadata"].(map[string]any)["candidatesTokenCount"] != 3.0 {
		t.Fatalf("streamed %q, last chunk %v", text.String(), chunks[2])
	}

	// A function call, named by toolConfig.
	status, _, b = postRead(t, c, s.URL("gem")+"/v1beta/models/gemini-2.5-flash:generateContent", `{`+contents+
		`,"tools":[{"functionDeclarations":[{"name":"search","parameters":{"type":"OBJECT","properties":{"q":{"type":"STRING"}},"required":["q"]}}]}]`+
		`,"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["search"]}}}`)
	parts = candidate(t, decodeJSON(t, b))["content"].(map[string]any)["parts"].([]any)
	fc, _ := parts[0].(map[string]any)["functionCall"].(map[string]any)
	if status != 200 || fc["name"] != "search" || !strings.HasPrefix(fc["id"].(string), "call_sb") {
		t.Fatalf("function call: %d %s", status, b)
	}
	if args, _ := json.Marshal(fc["args"]); string(args) != `{"q":""}` {
		t.Fatalf("args %s, want the OpenAPI schema's required string", args)
	}

	postRead(t, c, s.URL("gem429")+"/v1beta/models/m:generateContent", `{`+contents+`}`)
	clk.advance(20500 * time.Millisecond)
	status, h, b = postRead(t, c, s.URL("gem429")+"/v1beta/models/m:generateContent", `{`+contents+`}`)
	e := decodeJSON(t, b)["error"].(map[string]any)
	details, _ := e["details"].([]any)
	if status != 429 || e["code"] != 429.0 || e["status"] != "RESOURCE_EXHAUSTED" || len(details) != 2 || h.Get("Retry-After") != "" {
		t.Fatalf("429: %d %v %s", status, h, b)
	}
	qf, ri := details[0].(map[string]any), details[1].(map[string]any)
	v := qf["violations"].([]any)[0].(map[string]any)
	// 60 s a request, the last at 0: 39.5 s left, in whole seconds up.
	if qf["@type"] != wire.QuotaFailureType || v["quotaId"] != "GenerateRequestsPerMinutePerProjectPerModel" ||
		ri["@type"] != RetryInfoType || ri["retryDelay"] != "40s" {
		t.Fatalf("429 details %v", details)
	}

	status, _, b = postRead(t, c, s.URL("gem")+"/v1beta/models/m:countTokens", `{`+contents+`}`)
	if e := decodeJSON(t, b)["error"].(map[string]any); status != 404 || e["status"] != "NOT_FOUND" || e["code"] != 404.0 {
		t.Fatalf("unknown method: %d %s", status, b)
	}
	status, _, b = postRead(t, c, s.URL("gem")+"/v1beta/models/m:generateContent", `{}`)
	if e := decodeJSON(t, b)["error"].(map[string]any); status != 400 || e["status"] != "INVALID_ARGUMENT" {
		t.Fatalf("no contents: %d %s", status, b)
	}
}

// serve prints the URL each new shape's SDK takes: their variables share
// no one prefix, so none is named.
func TestSummaryNamesTheSDKBaseURL(t *testing.T) {
	s, _ := startServer(t, ServerConfig{Services: []ServiceConfig{
		{Config: spec.Config{Name: "az", API: spec.APIAzure}}, {Config: spec.Config{Name: "gem", API: spec.APIGemini}}}})
	var sum strings.Builder
	s.Summary(&sum)
	for _, want := range []string{"az           " + s.URL("az") + "  (azure SDK base URL: " + s.URL("az") + ")\n",
		"gem          " + s.URL("gem") + "  (gemini SDK base URL: " + s.URL("gem") + ")\n"} {
		if !strings.Contains(sum.String(), want) {
			t.Errorf("Summary:\n%s\nmissing %q", sum.String(), want)
		}
	}
}
