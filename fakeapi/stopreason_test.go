package fakeapi

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/simbench/simbench/fakeapi/internal/wire"
	"github.com/simbench/simbench/spec"
)

// countTokens counts the tokens of a fake answer's text as the fake's
// vocabulary defines them, independently of how the server builds it:
// "simbench", ":" and " ok" are one token each, and nothing else is a
// token (ok false).
func countTokens(text string) (n int64, ok bool) {
	for text != "" {
		var found bool
		for _, tok := range []string{"simbench", ":", " ok"} {
			if rest, cut := strings.CutPrefix(text, tok); cut {
				text, found = rest, true
				n++
				break
			}
		}
		if !found {
			return n, false
		}
	}
	return n, true
}

// llmAnswer is what a client reads of a text answer: its text, the
// pieces a stream sent it in (0 when not streamed), its stop reason and
// the output tokens its usage reports.
type llmAnswer struct {
	text   string
	pieces int64
	stop   string
	usage  int64
}

// askLLM sends a text request of the api's shape to service at base with
// content as the user's message, maxTokens (0: none) and stream, and reads
// the answer as an SDK would.
func askLLM(t *testing.T, c *http.Client, base string, api spec.APIStyle, content string, maxTokens int64, stream bool) llmAnswer {
	t.Helper()
	msg, _ := json.Marshal(content)
	body := `{"model":"m","messages":[{"role":"user","content":` + string(msg) + `}]`
	if maxTokens > 0 {
		body += fmt.Sprintf(`,"max_tokens":%d`, maxTokens)
	}
	if stream {
		body += `,"stream":true,"stream_options":{"include_usage":true}`
	}
	path := "/v1/chat/completions"
	if api == spec.APIAnthropic {
		path = "/v1/messages"
	}
	res := post(t, c, base+path, body+"}")
	if res.StatusCode != 200 {
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("status %d: %s", res.StatusCode, b)
	}
	var a llmAnswer
	if !stream {
		var v struct {
			Choices []struct {
				FinishReason string `json:"finish_reason"`
				Message      struct{ Content string }
			}
			Content    []struct{ Text string }
			StopReason string `json:"stop_reason"`
			Usage      struct {
				CompletionTokens int64 `json:"completion_tokens"`
				OutputTokens     int64 `json:"output_tokens"`
			}
		}
		if err := json.NewDecoder(res.Body).Decode(&v); err != nil {
			t.Fatal(err)
		}
		if api == spec.APIAnthropic {
			return llmAnswer{text: v.Content[0].Text, stop: v.StopReason, usage: v.Usage.OutputTokens}
		}
		return llmAnswer{text: v.Choices[0].Message.Content, stop: v.Choices[0].FinishReason, usage: v.Usage.CompletionTokens}
	}
	var text strings.Builder
	for _, e := range readSSE(t, res.Body) {
		if e.data == "[DONE]" {
			continue
		}
		var v struct {
			Choices []struct {
				Delta        struct{ Content string }
				FinishReason *string `json:"finish_reason"`
			}
			Delta struct {
				Type, Text string
				StopReason string `json:"stop_reason"`
			}
			Usage *struct {
				CompletionTokens int64 `json:"completion_tokens"`
				OutputTokens     int64 `json:"output_tokens"`
			}
		}
		if err := json.Unmarshal([]byte(e.data), &v); err != nil {
			t.Fatalf("event %q: %v", e.data, err)
		}
		for _, ch := range v.Choices {
			if ch.Delta.Content != "" {
				text.WriteString(ch.Delta.Content)
				a.pieces++
			}
			if ch.FinishReason != nil {
				a.stop = *ch.FinishReason
			}
		}
		switch e.name {
		case "content_block_delta":
			text.WriteString(v.Delta.Text)
			a.pieces++
		case "message_delta":
			a.stop = v.Delta.StopReason
		}
		if v.Usage != nil {
			a.usage = v.Usage.CompletionTokens + v.Usage.OutputTokens
		}
	}
	a.text = text.String()
	return a
}

// TestStopReasonAtMaxTokens checks the stop reasons of an answer of 50
// tokens: cut at max_tokens 10 it ends as the providers end it (OpenAI
// finish_reason "length", Anthropic stop_reason "max_tokens"), in a
// stream too; under max_tokens 100 it ends normally; a chat request that
// names no max_tokens ends normally at the service's default length (16).
func TestStopReasonAtMaxTokens(t *testing.T) {
	s, c := startServer(t, ServerConfig{Services: []ServiceConfig{
		{Config: spec.Config{Name: "oai", API: spec.APIOpenAI}, Agent: AgentConfig{Answer: spec.Constant(50.0)}},
		{Config: spec.Config{Name: "ant", API: spec.APIAnthropic, Headers: spec.HeadersAnthropic}, Agent: AgentConfig{Answer: spec.Constant(50.0)}},
	}})
	for _, tc := range []struct {
		service   string
		api       spec.APIStyle
		max       int64
		stop      string
		wantUsage int64
	}{
		{"oai", spec.APIOpenAI, 10, "length", 10},
		{"oai", spec.APIOpenAI, 100, "stop", 50},
		{"oai", spec.APIOpenAI, 0, "stop", spec.DefaultOutputTokens},
		{"ant", spec.APIAnthropic, 10, "max_tokens", 10},
		{"ant", spec.APIAnthropic, 100, "end_turn", 50},
		{"oai", spec.APIOpenAI, 1, "length", 1},
		{"ant", spec.APIAnthropic, 2, "max_tokens", 2},
	} {
		for _, stream := range []bool{false, true} {
			a := askLLM(t, c, s.URL(tc.service), tc.api, "hi", tc.max, stream)
			n, ok := countTokens(a.text)
			if a.stop != tc.stop || a.usage != tc.wantUsage || !ok || n != a.usage || stream && a.pieces != a.usage {
				t.Errorf("%s max_tokens %d stream %v: stop %q, usage %d, text %q (%d tokens, %d pieces); want %q and %d tokens",
					tc.service, tc.max, stream, a.stop, a.usage, a.text, n, a.pieces, tc.stop, tc.wantUsage)
			}
		}
	}
}

// TestAnswerTokensMatchUsage is the oracle of an answer's length: for a
// drawn conversation, the answer's natural length L is read once with a
// max_tokens far above it; then, at a drawn max_tokens m, the text counted
// token by token (countTokens) and a stream's pieces equal the usage
// reported, which is min(L, m), and the stop reason says the answer was
// cut exactly when L > m.
func TestAnswerTokensMatchUsage(t *testing.T) {
	s, c := startServer(t, ServerConfig{Services: []ServiceConfig{
		{Config: spec.Config{Name: "oai", API: spec.APIOpenAI}},
		{Config: spec.Config{Name: "ant", API: spec.APIAnthropic, Headers: spec.HeadersAnthropic}},
	}})
	rapid.Check(t, func(rt *rapid.T) {
		api := rapid.SampledFrom([]spec.APIStyle{spec.APIOpenAI, spec.APIAnthropic}).Draw(rt, "api")
		service := map[spec.APIStyle]string{spec.APIOpenAI: "oai", spec.APIAnthropic: "ant"}[api]
		content := rapid.StringMatching(`[a-z ]{1,12}`).Draw(rt, "content")
		m := rapid.Int64Range(1, 1500).Draw(rt, "max_tokens")
		stream := rapid.Bool().Draw(rt, "stream")
		natural := askLLM(t, c, s.URL(service), api, content, wire.MaxAnswerPieces, false)
		l := natural.usage
		a := askLLM(t, c, s.URL(service), api, content, m, stream)
		n, ok := countTokens(a.text)
		if !ok || n != a.usage || stream && a.pieces != a.usage {
			rt.Fatalf("text %q is %d tokens (%d pieces streamed), usage says %d", a.text, n, a.pieces, a.usage)
		}
		if a.usage != min(l, m) {
			rt.Fatalf("usage %d; want min(natural length %d, max_tokens %d)", a.usage, l, m)
		}
		cutStop := map[spec.APIStyle]string{spec.APIOpenAI: "length", spec.APIAnthropic: "max_tokens"}[api]
		if cut := a.stop == cutStop; cut != (l > m) && l < wire.MaxAnswerPieces {
			rt.Fatalf("stop reason %q for natural length %d at max_tokens %d", a.stop, l, m)
		}
	})
}
