package fakeapi

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/sched/httptool"
	"github.com/simbench/simbench/spec"
)

// countingTransport counts the requests an SDK sends, its retries included.
type countingTransport struct {
	base http.RoundTripper
	n    atomic.Int64
}

func (c *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.base.RoundTrip(req)
}

// longPrompt is about 1,000 input tokens (one per four bytes).
var longPrompt = strings.Repeat("word ", 800)

func openAIFaultClient(s *Server, tr http.RoundTripper) openai.Client {
	return openai.NewClient(option.WithBaseURL(s.URL("llm")+"/v1/"), option.WithAPIKey("sk-test"),
		option.WithHTTPClient(&http.Client{Transport: tr}), option.WithMaxRetries(3))
}

func chatParams(prompt string) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{Model: openai.ChatModel("gpt-4o-mini"),
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(prompt)}}
}

func TestOpenAISDKInsufficientQuota(t *testing.T) {
	var clk manualClock
	s, c := startServer(t, ServerConfig{Clock: clk.now, Services: []ServiceConfig{{Config: spec.Config{Name: "llm", Faults: spec.Faults{Credit: 1}}}}})
	tr := &countingTransport{base: c.Transport}
	client := openAIFaultClient(s, tr)
	ctx := context.Background()
	if _, err := client.Chat.Completions.New(ctx, chatParams("hi")); err != nil {
		t.Fatalf("first completion, within the credit: %v", err)
	}
	_, err := client.Chat.Completions.New(ctx, chatParams("hi"))
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusTooManyRequests || apiErr.Code != "insufficient_quota" || apiErr.Type != "insufficient_quota" {
		t.Fatalf("second completion error = %v, want a 429 insufficient_quota", err)
	}
	if n := tr.n.Load(); n != 2 {
		t.Fatalf("the SDK sent %d requests, want 2: insufficient_quota must not be retried", n)
	}
	st := s.Stats().Services["llm"]
	if st.Errors["insufficient_quota"] != 1 || st.RateLimited != 0 || st.Accepted != 1 {
		t.Fatalf("stats %+v: want one insufficient_quota, no rate limit, one accepted", st)
	}
	// A reset gives the credit back.
	s.Reset()
	if _, err := client.Chat.Completions.New(ctx, chatParams("hi")); err != nil {
		t.Fatalf("completion after a reset: %v", err)
	}
}

func TestOpenAISDKContextLength(t *testing.T) {
	var clk manualClock
	s, c := startServer(t, ServerConfig{Clock: clk.now, Services: []ServiceConfig{{Config: spec.Config{Name: "llm", Faults: spec.Faults{ContextWindow: 100}}}}})
	tr := &countingTransport{base: c.Transport}
	client := openAIFaultClient(s, tr)
	_, err := client.Chat.Completions.New(context.Background(), chatParams(longPrompt))
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || apiErr.Code != "context_length_exceeded" ||
		apiErr.Param != "messages" || !strings.Contains(apiErr.Message, "maximum context length is 100 tokens") {
		t.Fatalf("error = %v, want a 400 context_length_exceeded naming the window", err)
	}
	if n := tr.n.Load(); n != 1 {
		t.Fatalf("the SDK sent %d requests, want 1: a context too long must not be retried", n)
	}
	if st := s.Stats().Services["llm"]; st.Errors["context_length_exceeded"] != 1 || st.Accepted != 0 {
		t.Fatalf("stats %+v: want one context_length_exceeded, nothing accepted", st)
	}
	if _, err := client.Chat.Completions.New(context.Background(), chatParams("short")); err != nil {
		t.Fatalf("a prompt within the window: %v", err)
	}
}

func anthropicFaultClient(s *Server, tr http.RoundTripper) anthropic.Client {
	return anthropicClient(s, "claude", aoption.WithHTTPClient(&http.Client{Transport: tr}), aoption.WithMaxRetries(3))
}

func messageParams(prompt string) anthropic.MessageNewParams {
	return anthropic.MessageNewParams{Model: anthropic.Model("claude-sonnet-4-5"), MaxTokens: 8,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(prompt))}}
}

func TestAnthropicSDKInsufficientCredit(t *testing.T) {
	var clk manualClock
	s, c := startServer(t, ServerConfig{Clock: clk.now, Services: []ServiceConfig{{Config: spec.Config{Name: "claude", API: spec.APIAnthropic,
		Headers: spec.HeadersAnthropic, Faults: spec.Faults{Credit: 1}}}}})
	tr := &countingTransport{base: c.Transport}
	client := anthropicFaultClient(s, tr)
	ctx := context.Background()
	if _, err := client.Messages.New(ctx, messageParams("hi")); err != nil {
		t.Fatalf("first message, within the credit: %v", err)
	}
	_, err := client.Messages.New(ctx, messageParams("hi"))
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || !strings.Contains(apiErr.RawJSON(), "invalid_request_error") ||
		!strings.Contains(apiErr.RawJSON(), "credit balance is too low") {
		t.Fatalf("second message error = %v, want a 400 invalid_request_error about the credit balance", err)
	}
	if n := tr.n.Load(); n != 2 {
		t.Fatalf("the SDK sent %d requests, want 2: a spent credit must not be retried", n)
	}
	if st := s.Stats().Services["claude"]; st.Errors["insufficient_quota"] != 1 {
		t.Fatalf("stats %+v: want one insufficient_quota", st)
	}
}

func TestAnthropicSDKPromptTooLong(t *testing.T) {
	var clk manualClock
	s, c := startServer(t, ServerConfig{Clock: clk.now, Services: []ServiceConfig{{Config: spec.Config{Name: "claude", API: spec.APIAnthropic,
		Headers: spec.HeadersAnthropic, Faults: spec.Faults{ContextWindow: 100}}}}})
	tr := &countingTransport{base: c.Transport}
	client := anthropicFaultClient(s, tr)
	_, err := client.Messages.New(context.Background(), messageParams(longPrompt))
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || !strings.Contains(apiErr.RawJSON(), "invalid_request_error") ||
		!strings.Contains(apiErr.RawJSON(), "prompt is too long: ") || !strings.Contains(apiErr.RawJSON(), "tokens > 100 maximum") {
		t.Fatalf("error = %v, want a 400 invalid_request_error: prompt is too long", err)
	}
	if n := tr.n.Load(); n != 1 {
		t.Fatalf("the SDK sent %d requests, want 1: a prompt too long must not be retried", n)
	}
}

// TestOpenAISDKRetryDelayInBody: with the delay in the body only, openai-go
// (which reads headers) sees a plain 429 and retries after its own backoff,
// early by the server's account; httptool reads the body's RetryInfo.
func TestOpenAISDKRetryDelayInBody(t *testing.T) {
	var clk manualClock
	s, c := startServer(t, ServerConfig{Clock: clk.now, Services: []ServiceConfig{{Config: spec.Config{Name: "llm", RPM: 1, Burst: 1,
		Faults: spec.Faults{RetryDelayBody: spec.RetryDelayInstead}}}}})
	tr := &countingTransport{base: c.Transport}
	client := openAIFaultClient(s, tr)
	ctx := context.Background()
	if _, err := client.Chat.Completions.New(ctx, chatParams("hi")); err != nil {
		t.Fatal(err)
	}
	_, err := client.Chat.Completions.New(ctx, chatParams("hi"), option.WithMaxRetries(1))
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusTooManyRequests || apiErr.Response.Header.Get("Retry-After") != "" ||
		apiErr.Response.Header.Get("Retry-After-Ms") != "" || !strings.Contains(apiErr.RawJSON(), `"retryDelay":"60s"`) {
		t.Fatalf("error = %v, want a 429 with its 60 s delay in the body only", err)
	}
	if st := s.Stats().Services["llm"]; st.EarlyRetries != 1 {
		t.Fatalf("stats %+v: want the SDK's retry early, as it cannot read the body's delay", st)
	}

	tool := &httptool.Tool{Client: c, Build: httptool.PostJSON(s.URL("llm")+"/v1/chat/completions", nil)}
	call := &sched.Call{ID: "c1", Payload: []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`)}
	o := tool.Execute(ctx, call, 1)
	if o.Class != sched.ClassRateLimited || !o.HasRetryAfter || o.RetryAfter != time.Minute {
		t.Fatalf("httptool outcome = %+v, want rate limited with the body's 60 s", o)
	}
}
