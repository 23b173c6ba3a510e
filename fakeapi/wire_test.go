package fakeapi

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/simbench/simbench/spec"
)

// updateWire rewrites testdata/wire.golden from the server's answers.
var updateWire = flag.Bool("update-wire", false, "rewrite testdata/wire.golden")

// wireCase is one request of the wire-compatibility test.
type wireCase struct {
	name, service, method, path, body string
	header                            []string
}

// wireServices are the services the wire test sends to, one set per API
// style: a plain one, one with a request limit of 1 per minute (its
// second request is a 429), one failing every request (5xx), one in an
// outage, one whose credit is spent after the first request and one with a
// context window of 1 token. Text answers are 5 tokens, short of every
// request's max_tokens.
func wireServices() []ServiceConfig {
	var out []ServiceConfig
	for _, st := range []struct {
		prefix  string
		api     spec.APIStyle
		headers spec.HeaderStyle
	}{{"oai", spec.APIOpenAI, spec.HeadersOpenAI}, {"ant", spec.APIAnthropic, spec.HeadersAnthropic}, {"gen", spec.APIGeneric, spec.HeadersStandard}} {
		base := func(name string) ServiceConfig {
			return ServiceConfig{Config: spec.Config{Name: st.prefix + name, API: st.api, Headers: st.headers, RPM: 600, TPM: 1_000_000,
				Latency: spec.Dist[time.Duration]{Kind: spec.DistConstant}},
				Agent: AgentConfig{Answer: spec.Dist[float64]{Kind: spec.DistConstant, Value: 5}}}
		}
		plain, limited, failing, down, broke, narrow := base(""), base("429"), base("err"), base("down"), base("quota"), base("ctx")
		limited.RPM, limited.Burst = 1, 1
		if st.api == spec.APIGeneric {
			limited.Faults.RetryDelayBody = spec.RetryDelayBesides
		}
		failing.Faults.ErrorRate = 1
		down.Events = []spec.Event{{At: 0, For: time.Hour, Outage: true}}
		broke.Faults.Credit = 1
		narrow.Faults.ContextWindow = 1
		out = append(out, plain, limited, failing, down, broke, narrow)
	}
	return out
}

// wireCases are the requests of the wire test, sent in order.
func wireCases() []wireCase {
	const chat = `{"model":"gpt-w","messages":[{"role":"user","content":"hello"}],"max_tokens":20`
	const msgs = `{"model":"claude-w","messages":[{"role":"user","content":"hello"}],"max_tokens":20`
	const oaiTools = `,"tools":[{"type":"function","function":{"name":"search","parameters":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}}}]`
	const antTools = `,"tools":[{"name":"search","input_schema":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}}]`
	const resp = `{"model":"gpt-w","input":"hello","max_output_tokens":20`
	var cs []wireCase
	add := func(name, service, method, path, body string, header ...string) {
		cs = append(cs, wireCase{name, service, method, path, body, header})
	}
	// OpenAI shape.
	add("chat answer", "oai", "POST", "/v1/chat/completions", chat+`}`)
	add("chat stream", "oai", "POST", "/v1/chat/completions", chat+`,"stream":true,"stream_options":{"include_usage":true}}`)
	add("chat stream without usage", "oai", "POST", "/v1/chat/completions", chat+`,"stream":true}`)
	add("chat tool call", "oai", "POST", "/v1/chat/completions", `{"model":"gpt-w","messages":[{"role":"user","content":"find a"}],"max_tokens":200`+oaiTools+`}`)
	add("chat tool call stream", "oai", "POST", "/v1/chat/completions", `{"model":"gpt-w","messages":[{"role":"user","content":"find b"}],"max_tokens":200,"stream":true`+oaiTools+`}`)
	add("responses answer", "oai", "POST", "/v1/responses", resp+`}`)
	add("responses stream", "oai", "POST", "/v1/responses", resp+`,"stream":true}`)
	add("embeddings", "oai", "POST", "/v1/embeddings", `{"model":"e","input":"hello","dimensions":4}`)
	add("models", "oai", "GET", "/v1/models", "")
	add("tool path", "oai", "POST", "/tools/search", `{"q":"x"}`)
	add("400 no messages", "oai", "POST", "/v1/chat/completions", `{"model":"gpt-w"}`)
	add("400 not json", "oai", "POST", "/v1/chat/completions", `{"model":`)
	add("404 unknown /v1 path", "oai", "POST", "/v1/completions", chat+`}`)
	add("405 GET chat", "oai", "GET", "/v1/chat/completions", "")
	add("any key without keys configured", "oai", "POST", "/v1/chat/completions", chat+`}`, "Authorization", "Bearer nobody")
	add("admitted before 429", "oai429", "POST", "/v1/chat/completions", chat+`}`)
	add("429", "oai429", "POST", "/v1/chat/completions", chat+`}`)
	add("5xx fault", "oaierr", "POST", "/v1/chat/completions", chat+`}`)
	add("outage", "oaidown", "POST", "/v1/chat/completions", chat+`}`)
	add("credit spent 1", "oaiquota", "POST", "/v1/chat/completions", chat+`}`)
	add("credit spent 2", "oaiquota", "POST", "/v1/chat/completions", chat+`}`)
	add("context too long", "oaictx", "POST", "/v1/chat/completions", chat+`}`)
	// Anthropic shape.
	add("messages answer", "ant", "POST", "/v1/messages", msgs+`}`)
	add("messages stream", "ant", "POST", "/v1/messages", msgs+`,"stream":true}`)
	add("messages tool call", "ant", "POST", "/v1/messages", `{"model":"claude-w","messages":[{"role":"user","content":"find a"}],"max_tokens":200`+antTools+`}`)
	add("messages tool call stream", "ant", "POST", "/v1/messages", `{"model":"claude-w","messages":[{"role":"user","content":"find b"}],"max_tokens":200,"stream":true`+antTools+`}`)
	add("count tokens", "ant", "POST", "/v1/messages/count_tokens", `{"model":"claude-w","messages":[{"role":"user","content":"hello"}]}`)
	add("models", "ant", "GET", "/v1/models", "", "X-Api-Key", "k")
	add("tool path", "ant", "POST", "/tools/search", `{"q":"x"}`)
	add("400 no max_tokens", "ant", "POST", "/v1/messages", `{"model":"claude-w","messages":[{"role":"user","content":"hello"}]}`)
	add("400 thread", "ant", "POST", "/v1/messages", `{"model":"claude-w","messages":[{"role":"user","content":"x"}],"max_tokens":5,"thread":{"id":"t"}}`)
	add("404 unknown /v1 path", "ant", "POST", "/v1/complete", msgs+`}`)
	add("405 GET messages", "ant", "GET", "/v1/messages", "")
	add("admitted before 429", "ant429", "POST", "/v1/messages", msgs+`}`)
	add("429", "ant429", "POST", "/v1/messages", msgs+`}`)
	add("5xx fault", "anterr", "POST", "/v1/messages", msgs+`}`)
	add("outage", "antdown", "POST", "/v1/messages", msgs+`}`)
	add("credit spent 1", "antquota", "POST", "/v1/messages", msgs+`}`)
	add("credit spent 2", "antquota", "POST", "/v1/messages", msgs+`}`)
	add("context too long", "antctx", "POST", "/v1/messages", msgs+`}`)
	// Generic tool shape.
	add("tool answer", "gen", "POST", "/tools/search", `{"q":"x","tokens":7,"output_tokens":3}`)
	add("tool answer, empty body", "gen", "GET", "/resources/doc-1", "")
	add("tool /v1 path", "gen", "POST", "/v1/chat/completions", chat+`}`)
	add("400 not json", "gen", "POST", "/tools/search", `[1]`)
	add("400 bad header", "gen", "POST", "/tools/search", `{}`, TokensHeader, "x")
	add("admitted before 429", "gen429", "POST", "/tools/search", `{}`)
	add("429 with retry delay in the body", "gen429", "POST", "/tools/search", `{}`)
	add("5xx fault", "generr", "POST", "/tools/search", `{}`)
	add("outage", "gendown", "POST", "/tools/search", `{}`)
	add("credit spent 1", "genquota", "POST", "/tools/search", `{"tokens":5}`)
	add("credit spent 2", "genquota", "POST", "/tools/search", `{"tokens":5}`)
	add("context too long", "genctx", "POST", "/tools/search", `{"tokens":5}`)
	// The shared listener's own 404.
	add("no such service", "", "POST", "/nosuch/v1/chat/completions", chat+`}`)
	return cs
}

// wallTimes are the figures of an answer that follow the wall clock (the
// server's start): Unix seconds ("created") and RFC 3339 times.
var wallTimes = regexp.MustCompile(`("created(?:_at)?":\s?)([0-9]+)|[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z`)

// sinceStart writes the wall-clock times in s as whole seconds after
// start ("<start+Ns>"), which the model's clock standing still makes
// deterministic.
func sinceStart(s string, start time.Time) string {
	return wallTimes.ReplaceAllStringFunc(s, func(m string) string {
		if sub := wallTimes.FindStringSubmatch(m); sub[1] != "" {
			n, _ := strconv.ParseInt(sub[2], 10, 64)
			return fmt.Sprintf("%s<start+%ds>", sub[1], n-start.Unix())
		}
		t, _ := time.Parse(time.RFC3339, m)
		return fmt.Sprintf("<start+%ds>", t.Unix()-start.Unix())
	})
}

// TestWireCompat pins the bytes every provider shape sends for a
// representative set of requests: status, headers (but Date) and body,
// with wall-clock times written as seconds after the server's start. The model's clock stands
// still, so every figure but those is deterministic. The shapes' code may
// be rearranged only if this test stays green unchanged.
func TestWireCompat(t *testing.T) {
	var clock manualClock
	s, c := startServer(t, ServerConfig{Clock: clock.now, Seed: 7, Services: wireServices()})
	var b strings.Builder
	for _, tc := range wireCases() {
		url := s.URL(tc.service) + tc.path
		if tc.service == "" {
			url = strings.TrimSuffix(s.URL("oai"), "/oai") + tc.path
		}
		req, err := http.NewRequest(tc.method, url, strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		if tc.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		for i := 0; i+1 < len(tc.header); i += 2 {
			req.Header.Set(tc.header[i], tc.header[i+1])
		}
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "=== %s: %s %s %s\n%d\n", tc.name, tc.method, tc.service, tc.path, res.StatusCode)
		keys := make([]string, 0, len(res.Header))
		for k := range res.Header {
			if k != "Date" {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "%s: %s\n", k, sinceStart(strings.Join(res.Header[k], ", "), s.start))
		}
		fmt.Fprintf(&b, "\n%s\n", sinceStart(string(body), s.start))
	}
	const golden = "testdata/wire.golden"
	if *updateWire {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("the wire differs from %s at line %d:\n got %q\nwant %q", golden, i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("the wire differs from %s in length: %d lines, want %d", golden, len(gl), len(wl))
	}
}
