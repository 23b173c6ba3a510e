package fakeapi

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/simbench/simbench/fakeapi/internal/wire"
	"github.com/simbench/simbench/spec"
)

// sseEvent is one server-sent event: its event name ("" when the stream
// names none) and its data lines joined by newlines.
type sseEvent struct {
	name, data string
}

// readSSE parses a text/event-stream body as the SSE specification says:
// fields up to a colon, one optional space after it, events ended by a
// blank line, comments (lines starting with a colon) ignored.
func readSSE(t *testing.T, r io.Reader) []sseEvent {
	t.Helper()
	var out []sseEvent
	var cur sseEvent
	var data []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if data != nil || cur.name != "" {
				cur.data = strings.Join(data, "\n")
				out = append(out, cur)
			}
			cur, data = sseEvent{}, nil
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			cur.name = value
		case "data":
			data = append(data, value)
		default:
			t.Fatalf("unknown SSE field in %q", line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if data != nil {
		t.Fatalf("stream ends inside an event: %q", data)
	}
	return out
}

// post sends body to url with the header pairs and returns the response,
// its body unread.
func post(t *testing.T, c *http.Client, url, body string, header ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return res
}

func TestServeStreamChatCompletion(t *testing.T) {
	s, c := startServer(t, ServerConfig{Services: []ServiceConfig{{Config: spec.Config{Name: "llm", RPM: 600, TPM: 1_000_000,
		Latency: spec.Dist[time.Duration]{Kind: spec.DistConstant, Value: 20 * time.Millisecond}}}}})
	body := `{"model":"gpt-x","messages":[{"role":"user","content":"hi"}],"max_tokens":7,"stream":true,"stream_options":{"include_usage":true}}`
	res := post(t, c, s.URL("llm")+"/v1/chat/completions", body)
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") || res.Header.Get("X-Ratelimit-Limit-Requests") != "600" {
		t.Fatalf("status %d, header %v", res.StatusCode, res.Header)
	}
	events := readSSE(t, res.Body)
	if n := len(events); n < 4 || events[n-1].data != "[DONE]" {
		t.Fatalf("events = %q, want chunks then [DONE]", events)
	}
	var text strings.Builder
	finishes, usages := 0, 0
	for i, e := range events[:len(events)-1] {
		var ch struct {
			ID, Object, Model string
			Choices           []struct {
				Index        int
				Delta        struct{ Role, Content string }
				FinishReason *string `json:"finish_reason"`
			}
			Usage *struct {
				PromptTokens     int64 `json:"prompt_tokens"`
				CompletionTokens int64 `json:"completion_tokens"`
				TotalTokens      int64 `json:"total_tokens"`
			}
		}
		if err := json.Unmarshal([]byte(e.data), &ch); err != nil || e.name != "" {
			t.Fatalf("event %d %q: %v", i, e, err)
		}
		if ch.Object != "chat.completion.chunk" || ch.Model != "gpt-x" || ch.ID != events0ID(t, events) {
			t.Fatalf("chunk %d = %+v", i, ch)
		}
		if i == 0 && (len(ch.Choices) != 1 || ch.Choices[0].Delta.Role != "assistant") {
			t.Fatalf("first chunk %+v does not open the assistant's message", ch)
		}
		for _, c := range ch.Choices {
			text.WriteString(c.Delta.Content)
			if c.FinishReason != nil {
				finishes++
				if *c.FinishReason != "length" { // the drawn answer, cut at max_tokens 7
					t.Fatalf("finish_reason %q", *c.FinishReason)
				}
			}
		}
		if ch.Usage != nil {
			usages++
			if i != len(events)-2 || len(ch.Choices) != 0 || ch.Usage.CompletionTokens != 7 || ch.Usage.TotalTokens != ch.Usage.PromptTokens+7 {
				t.Fatalf("usage chunk %d of %d: %+v", i, len(events), ch)
			}
		}
	}
	// The answer streams one content delta per completion token.
	if text.String() != "simbench: ok ok ok ok ok" || finishes != 1 || usages != 1 {
		t.Fatalf("text %q, %d finish reasons, %d usage chunks", text.String(), finishes, usages)
	}
	eventually(t, "the stream counted as completed", func() bool { return s.Stats().Services["llm"].Completed == 1 })
}

// events0ID returns the id of the first chunk of an OpenAI stream.
func events0ID(t *testing.T, events []sseEvent) string {
	var v struct{ ID string }
	if err := json.Unmarshal([]byte(events[0].data), &v); err != nil || !strings.HasPrefix(v.ID, "chatcmpl-") {
		t.Fatalf("first chunk %q", events[0].data)
	}
	return v.ID
}

func TestServeStreamOpenAISDK(t *testing.T) {
	s, _ := startServer(t, ServerConfig{Services: []ServiceConfig{{Config: spec.Config{Name: "llm", TPM: 1_000_000}}}})
	client := openai.NewClient(option.WithBaseURL(s.URL("llm")+"/v1"), option.WithAPIKey("sk-test"))
	stream := client.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
		Model:         openai.ChatModel("gpt-4o-mini"),
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hello")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	})
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if len(acc.Choices) != 1 || acc.Choices[0].Message.Content != strings.Join(wire.Answer(spec.DefaultOutputTokens), "") || acc.Choices[0].FinishReason != "stop" || acc.Usage.CompletionTokens != spec.DefaultOutputTokens {
		t.Fatalf("accumulated %+v", acc.ChatCompletion)
	}
}

func TestServeStreamAnthropicMessages(t *testing.T) {
	s, c := startServer(t, ServerConfig{Services: []ServiceConfig{{Config: spec.Config{Name: "claude", Headers: spec.HeadersAnthropic, RPM: 50, TPM: 100_000,
		Latency: spec.Dist[time.Duration]{Kind: spec.DistConstant, Value: 20 * time.Millisecond}}}}})
	res := post(t, c, s.URL("claude")+"/v1/messages", `{"model":"claude-x","max_tokens":9,"stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") || res.Header.Get("Request-Id") == "" {
		t.Fatalf("status %d, header %v", res.StatusCode, res.Header)
	}
	events := readSSE(t, res.Body)
	var names []string
	var text strings.Builder
	var outTokens int64 = -1
	for _, e := range events {
		names = append(names, e.name)
		var v struct {
			Type    string
			Message struct {
				ID, Model string
				Usage     struct {
					InputTokens int64 `json:"input_tokens"`
				}
			}
			Delta struct {
				Type, Text string
				StopReason string `json:"stop_reason"`
			}
			Usage struct {
				OutputTokens int64 `json:"output_tokens"`
			}
		}
		if err := json.Unmarshal([]byte(e.data), &v); err != nil || v.Type != e.name {
			t.Fatalf("event %q: type %q, %v", e, v.Type, err)
		}
		switch e.name {
		case "message_start":
			if !strings.HasPrefix(v.Message.ID, "msg_") || v.Message.Model != "claude-x" || v.Message.Usage.InputTokens <= 0 {
				t.Fatalf("message_start %s", e.data)
			}
		case "content_block_delta":
			if v.Delta.Type != "text_delta" {
				t.Fatalf("delta %s", e.data)
			}
			text.WriteString(v.Delta.Text)
		case "message_delta":
			if v.Delta.StopReason != "max_tokens" { // the drawn answer, cut at max_tokens 9
				t.Fatalf("message_delta %s", e.data)
			}
			outTokens = v.Usage.OutputTokens
		}
	}
	want := "message_start content_block_start ping" + strings.Repeat(" content_block_delta", 9) + " content_block_stop message_delta message_stop"
	if strings.Join(names, " ") != want || text.String() != "simbench: ok ok ok ok ok ok ok" || outTokens != 9 {
		t.Fatalf("events %v, text %q, output tokens %d", names, text.String(), outTokens)
	}
}

func TestServeStreamLimitedBeforeItStarts(t *testing.T) {
	var clk manualClock
	for _, api := range []spec.HeaderStyle{spec.HeadersOpenAI, spec.HeadersAnthropic} {
		s, c := startServer(t, ServerConfig{Clock: clk.now, Services: []ServiceConfig{{Config: spec.Config{Name: "llm", Headers: api, RPS: 1, Burst: 1}}}})
		path, body := "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"stream":true}`
		if api == spec.HeadersAnthropic {
			path, body = "/v1/messages", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":5,"stream":true}`
		}
		if res := post(t, c, s.URL("llm")+path, body); res.StatusCode != 200 {
			t.Fatalf("%s first: %d", api, res.StatusCode)
		}
		res := post(t, c, s.URL("llm")+path, body)
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != 429 || res.Header.Get("Content-Type") != "application/json" || res.Header.Get("Retry-After") != "1" || !json.Valid(b) {
			t.Fatalf("%s second: %d %v %s", api, res.StatusCode, res.Header, b)
		}
	}
}

func TestServeStreamCancelledMidStream(t *testing.T) {
	for _, keep := range []bool{false, true} {
		st := streamCancelledMidStream(t, keep)
		// As for a request not streamed: the service stops, or it keeps
		// generating for nobody and all its tokens are wasted.
		if keep && (st.Wasted != 1 || st.WastedTokens != st.TokensAccepted || st.CancelledByClient != 0 || st.Completed != 0) {
			t.Errorf("keep working: stats %+v, want the stream wasted with its tokens", st)
		}
		if !keep && (st.CancelledByClient != 1 || st.Wasted != 0 || st.WastedTokens != 0 || st.Completed != 0) {
			t.Errorf("stats %+v, want the stream cancelled and nothing wasted", st)
		}
	}
}

// streamCancelledMidStream cancels a stream after its first line and
// returns the service's stats once the request ended.
func streamCancelledMidStream(t *testing.T, keepWorking bool) Stats {
	t.Helper()
	// 1.5 s of latency over the answer's pieces: the first events arrive
	// at once, the last ones later; the client cancels in between.
	s, c := startServer(t, ServerConfig{Services: []ServiceConfig{{Config: spec.Config{Name: "llm", TPM: 1_000_000, KeepWorkingOnDisconnect: keepWorking,
		Latency: spec.Dist[time.Duration]{Kind: spec.DistConstant, Value: 1500 * time.Millisecond}}}}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", s.URL("llm")+"/v1/chat/completions",
		strings.NewReader(`{"messages":[{"role":"user","content":"hi"}],"max_tokens":30,"stream":true}`))
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	line, err := bufio.NewReader(res.Body).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "data: {") {
		t.Fatalf("first line %q, %v", line, err)
	}
	cancel()
	eventually(t, "the request ended", func() bool { return s.Stats().Services["llm"].InFlight == 0 })
	return s.Stats().Services["llm"]
}

func TestServeAnthropicBaseURL(t *testing.T) {
	s, c := startServer(t, ServerConfig{Services: []ServiceConfig{{Config: spec.Config{Name: "claude", Headers: spec.HeadersAnthropic, RPM: 50}}}})
	var sum strings.Builder
	s.Summary(&sum)
	base := s.URL("claude")
	if !strings.Contains(sum.String(), "ANTHROPIC_BASE_URL="+base+")") {
		t.Fatalf("summary %q does not print the root as the SDK base URL", sum.String())
	}
	// The SDK appends /v1/messages to the base URL it is given.
	ok := do(t, c, "POST", base+"/v1/messages", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":5}`)
	if ok.status != 200 || ok.body["content"] == nil {
		t.Fatalf("%s/v1/messages: %d %v", base, ok.status, ok.body)
	}
	// Given the old .../v1, it would send to /v1/v1/messages.
	r := do(t, c, "POST", base+"/v1/v1/messages", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":5}`)
	e, _ := r.body["error"].(map[string]any)
	if r.status != 404 || r.body["type"] != "error" || e["type"] != "not_found_error" || !strings.Contains(e["message"].(string), "/claude/v1/v1/messages") {
		t.Fatalf("doubled path: %d %v", r.status, r.body)
	}
	if st := s.Stats().Services["claude"]; st.Arrived != 1 {
		t.Fatalf("arrived %d, want only the good call", st.Arrived)
	}
}

func TestServeUnknownProviderPaths(t *testing.T) {
	s, c := startServer(t, ServerConfig{Services: []ServiceConfig{
		{Config: spec.Config{Name: "llm", RPM: 1, TPM: 100, ModelName: "gpt-fake"}},
		{Config: spec.Config{Name: "claude", Headers: spec.HeadersAnthropic, RPM: 1, TPM: 100}},
	}})
	for _, tc := range []struct{ service, method, path, errType string }{
		{"llm", "POST", "/v1/audio/speech", "invalid_request_error"},
		{"llm", "POST", "/v1/completions", "invalid_request_error"},
		{"llm", "GET", "/v1/models/gpt-fake/x", "invalid_request_error"},
		{"claude", "POST", "/v1/complete", "not_found_error"},
		{"claude", "POST", "/v1/v1/messages", "not_found_error"},
		// Another provider's paths: Azure OpenAI, Gemini, Bedrock.
		{"llm", "POST", "/openai/deployments/gpt4/chat/completions?api-version=2024-10-21", "invalid_request_error"},
		{"llm", "POST", "/v1beta/models/gemini-2.5-flash:generateContent", "invalid_request_error"},
		{"claude", "POST", "/v1beta/models/gemini-2.5-flash:streamGenerateContent", "not_found_error"},
		{"claude", "POST", "/model/anthropic.claude-3/converse", "not_found_error"},
	} {
		r := do(t, c, tc.method, s.URL(tc.service)+tc.path, `{"model":"m","input":"x","messages":[]}`, WriteHeader, "1")
		e, _ := r.body["error"].(map[string]any)
		path, _, _ := strings.Cut(tc.path, "?")
		if r.status != 404 || e["type"] != tc.errType || !strings.Contains(e["message"].(string), path) || r.body["ok"] != nil {
			t.Errorf("%s %s: %d %v", tc.service, tc.path, r.status, r.body)
		}
	}
	models := do(t, c, "GET", s.URL("llm")+"/v1/models", "")
	if data, _ := models.body["data"].([]any); models.status != 200 || len(data) != 1 || data[0].(map[string]any)["id"] != "gpt-fake" {
		t.Errorf("models: %d %v", models.status, models.body)
	}
	count := do(t, c, "POST", s.URL("claude")+"/v1/messages/count_tokens", `{"model":"m","messages":[{"role":"user","content":"four score and seven"}]}`)
	if n, _ := count.body["input_tokens"].(float64); count.status != 200 || n <= 0 {
		t.Errorf("count_tokens: %d %v", count.status, count.body)
	}
	st := s.Stats()
	for _, name := range []string{"llm", "claude"} {
		if x := st.Services[name]; x.Arrived != 0 || x.TokensAccepted != 0 || x.WriteRaces != 0 {
			t.Errorf("%s: %+v; want nothing spent", name, x)
		}
	}
	if st.NotFound != 9 { // every path above
		t.Errorf("not found %d, want 9", st.NotFound)
	}
}

func TestServeModelsAndCountTokensNeedAKey(t *testing.T) {
	s, c := startServer(t, ServerConfig{Services: []ServiceConfig{{Config: spec.Config{Name: "claude", Headers: spec.HeadersAnthropic, Keys: []spec.Key{{Key: "sk-1"}}}}}})
	for _, path := range []string{"/v1/models", "/v1/messages/count_tokens"} {
		method := "GET"
		if path != "/v1/models" {
			method = "POST"
		}
		body := `{"messages":[{"role":"user","content":"hi"}]}`
		if r := do(t, c, method, s.URL("claude")+path, body); r.status != 401 {
			t.Errorf("%s without a key: %d", path, r.status)
		}
		if r := do(t, c, method, s.URL("claude")+path, body, "X-Api-Key", "sk-1"); r.status != 200 {
			t.Errorf("%s with a key: %d %v", path, r.status, r.body)
		}
	}
	if st := s.Stats().Services["claude"]; st.Arrived != 0 {
		t.Errorf("arrived %d, want none", st.Arrived)
	}
}

// retryCall sends a chat call as a Stainless SDK marks them.
func retryCall(t *testing.T, c *http.Client, url string, attempt int) response {
	return do(t, c, "POST", url, chatBody, StainlessRetryHeader, strconv.Itoa(attempt))
}

func TestServeEarlyRetriesParallelClients(t *testing.T) {
	var clk manualClock
	s, c := startServer(t, ServerConfig{Clock: clk.now, Services: []ServiceConfig{{Config: spec.Config{Name: "llm", RPS: 2, Burst: 2, TPM: 1_000_000}}}})
	url := s.URL("llm") + "/v1/chat/completions"
	// Eight callers on one key send at once, as hey or parallel SDK calls
	// do: two are admitted, six are told to wait. None of them is a retry.
	var wg sync.WaitGroup
	var mu sync.Mutex
	var delays []time.Duration
	for range 8 {
		wg.Go(func() {
			r := retryCall(t, c, url, 0)
			if r.status == 429 {
				ms, _ := strconv.Atoi(r.header.Get("Retry-After-Ms"))
				mu.Lock()
				delays = append(delays, time.Duration(ms)*time.Millisecond)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	// Plain parallel requests with no marker are first attempts too.
	for range 8 {
		wg.Go(func() { do(t, c, "POST", url, chatBody) })
	}
	wg.Wait()
	if st := s.Stats().Services["llm"]; len(delays) != 6 || st.EarlyRetries != 0 || st.RateLimited != 14 {
		t.Fatalf("delays %v, stats %+v", delays, st)
	}
	// Each retries once its own delay has passed: the first is admitted, the
	// rest are told to wait again, later than the delays the others were
	// given. None is early: each honoured its own delay.
	if slicesMax(delays) != delays[0] || delays[0] != 500*time.Millisecond {
		t.Fatalf("delays %v, want 500 ms each", delays)
	}
	clk.advance(delays[0])
	statuses := map[int]int{}
	for range delays {
		statuses[retryCall(t, c, url, 1).status]++
	}
	if st := s.Stats().Services["llm"]; statuses[200] != 1 || statuses[429] != 5 || st.EarlyRetries != 0 {
		t.Fatalf("retries %v, stats %+v; want one admitted and no early retry", statuses, st)
	}
	// A client that retries at once after its 429 is counted.
	clk.advance(time.Hour)
	retryCall(t, c, url, 0)
	retryCall(t, c, url, 0)
	if r := retryCall(t, c, url, 0); r.status != 429 {
		t.Fatalf("third at once: %d", r.status)
	}
	if r := retryCall(t, c, url, 1); r.status != 429 {
		t.Fatalf("immediate retry: %d", r.status)
	}
	if got := s.Stats().Services["llm"].EarlyRetries; got != 1 {
		t.Fatalf("early retries %d, want the immediate retry counted", got)
	}
	// The same with an idempotency key: only a repeat of a limited key counts.
	clk.advance(time.Hour)
	do(t, c, "POST", url, chatBody, IdempotencyHeader, "a")
	do(t, c, "POST", url, chatBody, IdempotencyHeader, "b")
	do(t, c, "POST", url, chatBody, IdempotencyHeader, "c") // limited
	do(t, c, "POST", url, chatBody, IdempotencyHeader, "d") // limited, a new request
	do(t, c, "POST", url, chatBody, IdempotencyHeader, "c") // repeats c at once
	st := s.Stats().Services["llm"]
	if st.EarlyRetries != 2 || st.EarlyRetriesBy["retry_count"] != 1 || st.EarlyRetriesBy["idempotency_key"] != 1 || st.EarlyRetriesBy["client"] != 0 {
		t.Fatalf("early retries %d by %v, want one by retry count and one by idempotency key", st.EarlyRetries, st.EarlyRetriesBy)
	}
}

func slicesMax(ds []time.Duration) time.Duration {
	m := ds[0]
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}

func TestServeEarlyRetriesOpenAISDKParallel(t *testing.T) {
	// Eight goroutines share one key against 20 requests/s with a bucket of
	// one; the SDK retries every 429 after its retry-after-ms.
	s, _ := startServer(t, ServerConfig{Services: []ServiceConfig{{Config: spec.Config{Name: "llm", RPS: 20, Burst: 1, TPM: 10_000_000}}}})
	client := openai.NewClient(option.WithBaseURL(s.URL("llm")+"/v1"), option.WithAPIKey("sk-test"), option.WithMaxRetries(20))
	params := openai.ChatCompletionNewParams{Model: openai.ChatModel("gpt-4o-mini"), Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 2 {
				if _, err := client.Chat.Completions.New(context.Background(), params); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	st := s.Stats().Services["llm"]
	if st.Completed != 16 || st.RateLimited == 0 || st.EarlyRetries != 0 {
		t.Fatalf("stats %+v: want 16 completed, some 429s, no early retries", st)
	}
}

func TestServeWritesDeclaredOnly(t *testing.T) {
	s, c := startServer(t, ServerConfig{Services: []ServiceConfig{
		{Config: spec.Config{Name: "tool", Headers: spec.HeadersStandard, Latency: spec.Dist[time.Duration]{Kind: spec.DistConstant, Value: 300 * time.Millisecond}}, WritePaths: []string{"/tools/commit"}},
		{Config: spec.Config{Name: "llm", TPM: 10_000_000, Latency: spec.Dist[time.Duration]{Kind: spec.DistConstant, Value: 300 * time.Millisecond}}},
	}})
	parallel := func(n int, f func()) {
		var wg sync.WaitGroup
		for range n {
			wg.Go(f)
		}
		wg.Wait()
	}
	// Twenty overlapping read calls, as httptool.PostJSON sends them.
	parallel(20, func() { do(t, c, "POST", s.URL("tool")+"/search", `{"q":"x","resource":"doc"}`) })
	parallel(20, func() { do(t, c, "POST", s.URL("llm")+"/v1/chat/completions", chatBody, WriteHeader, "1") })
	st := s.Stats().Services
	if st["tool"].WriteRaces != 0 || st["llm"].WriteRaces != 0 || st["tool"].PeakConcurrency < 2 || st["llm"].PeakConcurrency < 2 {
		t.Fatalf("reads: tool %+v, llm %+v", st["tool"], st["llm"])
	}
	// Declared writes to one resource that overlap race: by header, and by
	// a path the scenario declares a write.
	parallel(2, func() { do(t, c, "POST", s.URL("tool")+"/save", `{}`, WriteHeader, "doc-1") })
	if got := s.Stats().Services["tool"].WriteRaces; got != 1 {
		t.Fatalf("write races %d, want 1 for two overlapping declared writes", got)
	}
	parallel(2, func() { do(t, c, "POST", s.URL("tool")+"/tools/commit", `{}`) })
	if got := s.Stats().Services["tool"].WriteRaces; got != 2 {
		t.Fatalf("write races %d, want 2 after two overlapping posts to a write path", got)
	}
}

func TestServeProviderLimitHeaders(t *testing.T) {
	var clk manualClock
	s, c := startServer(t, ServerConfig{Clock: clk.now, Services: []ServiceConfig{
		{Config: spec.Config{Name: "rpm", RPM: 6000, Burst: 100}},
		{Config: spec.Config{Name: "rpm60", RPM: 60, Burst: 2}},
		{Config: spec.Config{Name: "rps", RPS: 20}},
		{Config: spec.Config{Name: "tpm", RPM: 1000, TPM: 1000}},
		{Config: spec.Config{Name: "claude", Headers: spec.HeadersAnthropic, TPM: 1000}},
		{Config: spec.Config{Name: "busy", Faults: spec.Faults{Overload: spec.Overload{Every: time.Nanosecond, Length: time.Hour}}}},
		{Config: spec.Config{Name: "busyclaude", Headers: spec.HeadersAnthropic, Faults: spec.Faults{Overload: spec.Overload{Every: time.Nanosecond, Length: time.Hour}}}},
	}})
	clk.advance(time.Second)
	// A burst of 100 under 6000 per minute: after one request the bucket
	// holds 99, and 99 are left.
	r := do(t, c, "POST", s.URL("rpm")+"/v1/chat/completions", chatBody)
	if r.header.Get("X-Ratelimit-Limit-Requests") != "6000" || r.header.Get("X-Ratelimit-Remaining-Requests") != "99" {
		t.Errorf("rpm headers %v", r.header)
	}
	// At 60 per minute with a burst of 2, the first answer leaves 1.
	r = do(t, c, "POST", s.URL("rpm60")+"/v1/chat/completions", chatBody)
	if r.header.Get("X-Ratelimit-Limit-Requests") != "60" || r.header.Get("X-Ratelimit-Remaining-Requests") != "1" {
		t.Errorf("rpm60 headers %v", r.header)
	}
	// 20 per second is published as 1200 per minute, of which the
	// second's bucket has 19 left.
	r = do(t, c, "POST", s.URL("rps")+"/v1/chat/completions", chatBody)
	if r.header.Get("X-Ratelimit-Limit-Requests") != "1200" || r.header.Get("X-Ratelimit-Remaining-Requests") != "19" {
		t.Errorf("rps headers %v", r.header)
	}
	// A token-limit 429 is typed tokens.
	do(t, c, "POST", s.URL("tpm")+"/v1/chat/completions", chatBody, TokensHeader, "900")
	r = do(t, c, "POST", s.URL("tpm")+"/v1/chat/completions", chatBody, TokensHeader, "500")
	e, _ := r.body["error"].(map[string]any)
	if r.status != 429 || e["type"] != "tokens" || e["code"] != "rate_limit_exceeded" || !strings.Contains(e["message"].(string), "tokens per min (TPM)") {
		t.Errorf("tpm 429: %d %v", r.status, r.body)
	}
	// Too large for the token limit: 429 tokens for OpenAI, 413 for Anthropic.
	r = do(t, c, "POST", s.URL("tpm")+"/v1/chat/completions", chatBody, TokensHeader, "5000")
	if e, _ := r.body["error"].(map[string]any); r.status != 429 || e["type"] != "tokens" {
		t.Errorf("openai too large: %d %v", r.status, r.body)
	}
	r = do(t, c, "POST", s.URL("claude")+"/v1/messages", `{"messages":[{"role":"user","content":"x"}],"max_tokens":5000}`)
	if e, _ := r.body["error"].(map[string]any); r.status != 413 || e["type"] != "request_too_large" || r.body["request_id"] != r.header.Get("Request-Id") || r.header.Get("Request-Id") == "" {
		t.Errorf("anthropic too large: %d %v %v", r.status, r.header, r.body)
	}
	// Overload: 503 for OpenAI, 529 overloaded_error for Anthropic.
	r = do(t, c, "POST", s.URL("busy")+"/v1/chat/completions", chatBody)
	if e, _ := r.body["error"].(map[string]any); r.status != 503 || e["type"] != "server_error" {
		t.Errorf("openai overload: %d %v", r.status, r.body)
	}
	r = do(t, c, "POST", s.URL("busyclaude")+"/v1/messages", `{"messages":[{"role":"user","content":"x"}],"max_tokens":5}`)
	if e, _ := r.body["error"].(map[string]any); r.status != 529 || e["type"] != "overloaded_error" || r.body["request_id"] == nil {
		t.Errorf("anthropic overload: %d %v", r.status, r.body)
	}
}

func TestServeEmbeddings(t *testing.T) {
	s, c := startServer(t, ServerConfig{Services: []ServiceConfig{{Config: spec.Config{Name: "llm"}}}})
	url := s.URL("llm") + "/v1/embeddings"
	vectors := func(body string) [][]float32 {
		t.Helper()
		r := do(t, c, "POST", url, body)
		data, _ := r.body["data"].([]any)
		if r.status != 200 || len(data) == 0 {
			t.Fatalf("%s: %d %v", body, r.status, r.body)
		}
		out := make([][]float32, len(data))
		for i, d := range data {
			m := d.(map[string]any)
			if m["index"] != float64(i) || m["object"] != "embedding" {
				t.Fatalf("entry %d: %v", i, m)
			}
			switch e := m["embedding"].(type) {
			case string:
				b, err := base64.StdEncoding.DecodeString(e)
				if err != nil || len(b)%4 != 0 {
					t.Fatalf("base64 %q: %v", e, err)
				}
				for j := 0; j < len(b); j += 4 {
					out[i] = append(out[i], math.Float32frombits(binary.LittleEndian.Uint32(b[j:])))
				}
			case []any:
				for _, x := range e {
					out[i] = append(out[i], float32(x.(float64)))
				}
			default:
				t.Fatalf("embedding %T", e)
			}
		}
		return out
	}
	b64 := vectors(`{"model":"m","input":["alpha","beta","alpha"],"encoding_format":"base64","dimensions":64}`)
	flt := vectors(`{"model":"m","input":["alpha","beta","alpha"],"dimensions":64}`)
	if len(b64) != 3 || len(b64[0]) != 64 || fmt.Sprint(b64) != fmt.Sprint(flt) {
		t.Fatalf("base64 %d×%d differs from float", len(b64), len(b64[0]))
	}
	var norm float64
	for _, x := range b64[0] {
		norm += float64(x) * float64(x)
	}
	if math.Abs(norm-1) > 1e-4 || fmt.Sprint(b64[0]) != fmt.Sprint(b64[2]) || fmt.Sprint(b64[0]) == fmt.Sprint(b64[1]) {
		t.Fatalf("vectors: norm %g, equal inputs equal %v, different inputs different %v", norm, fmt.Sprint(b64[0]) == fmt.Sprint(b64[2]), fmt.Sprint(b64[0]) != fmt.Sprint(b64[1]))
	}
	if v := vectors(`{"input":"one string"}`); len(v) != 1 || len(v[0]) != DefaultEmbeddingDimensions {
		t.Fatalf("one input: %d vectors of %d", len(v), len(v[0]))
	}
	if v := vectors(`{"input":[1,2,3]}`); len(v) != 1 {
		t.Fatalf("one token array: %d vectors", len(v))
	}
	if v := vectors(`{"input":[[1,2],[3]],"dimensions":8}`); len(v) != 2 || len(v[1]) != 8 {
		t.Fatalf("two token arrays: %d vectors", len(v))
	}
}

// TestServeRefusesThreadContinuation sends what the Anthropic SDK's beta
// tool runner sends under the message-threads beta after the first
// answer: only the tool results, continuing the thread of the previous
// message. Answering it as a new conversation would end the client's loop
// early without an error; the service must refuse it, naming the beta.
func TestServeRefusesThreadContinuation(t *testing.T) {
	s, c := startServer(t, ServerConfig{Services: []ServiceConfig{{Config: spec.Config{Name: "claude", Headers: spec.HeadersAnthropic}}}})
	body := `{"model":"claude-sonnet-4-5","max_tokens":1024,
		"thread":{"type":"continue","previous_message_id":"msg_1"},
		"tools":[{"name":"lookup","input_schema":{"type":"object"}}],
		"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_sb1","content":"ok"}]}]}`
	r := do(t, c, "POST", s.URL("claude")+"/v1/messages", body, "Anthropic-Beta", ThreadsBeta, "Anthropic-Version", "2023-06-01")
	e, _ := r.body["error"].(map[string]any)
	if r.status != 400 || e["type"] != "invalid_request_error" || !strings.Contains(e["message"].(string), ThreadsBeta) {
		t.Fatalf("thread continuation: %d %v, want a 400 invalid_request_error naming %s", r.status, r.body, ThreadsBeta)
	}
	if got := s.Stats().Services["claude"].Errors["bad_request"]; got != 1 {
		t.Errorf("bad requests counted %d, want 1", got)
	}
}
