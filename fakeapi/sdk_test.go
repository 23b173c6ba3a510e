package fakeapi

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/simbench/simbench/fakeapi/internal/wire"
	"github.com/simbench/simbench/spec"
)

// retryClock is a transport that moves the server's model clock forward,
// when the SDK sends a retry, by the real time the SDK waited since the last
// 429. Everything else happens at a frozen model time, so the test does not
// depend on how fast requests run; the server sees exactly the delay the
// SDK honoured.
type retryClock struct {
	base    http.RoundTripper
	clk     *manualClock
	mu      sync.Mutex
	last429 time.Time
	retries int
}

func (rc *retryClock) RoundTrip(req *http.Request) (*http.Response, error) {
	if n := req.Header.Get("X-Stainless-Retry-Count"); n != "" && n != "0" {
		rc.mu.Lock()
		rc.retries++
		rc.clk.advance(time.Since(rc.last429))
		rc.mu.Unlock()
	}
	res, err := rc.base.RoundTrip(req)
	if err == nil && res.StatusCode == http.StatusTooManyRequests {
		rc.mu.Lock()
		rc.last429 = time.Now()
		rc.mu.Unlock()
	}
	return res, err
}

func TestOpenAISDK(t *testing.T) {
	var clk manualClock
	// 10 requests/s with a bucket of one: a second request at once waits 100 ms.
	s, c := startServer(t, ServerConfig{Clock: clk.now, Services: []ServiceConfig{{Config: spec.Config{Name: "llm", RPS: 10, Burst: 1, TPM: 1_000_000}}}})
	rc := &retryClock{base: c.Transport, clk: &clk}
	client := openai.NewClient(
		option.WithBaseURL(s.URL("llm")+"/v1/"),
		option.WithAPIKey("sk-test"),
		option.WithHTTPClient(&http.Client{Transport: rc}),
		option.WithMaxRetries(2),
	)
	params := openai.ChatCompletionNewParams{
		Model:    openai.ChatModel("gpt-4o-mini"),
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("What is the capital of France?")},
	}
	ctx := context.Background()

	first, err := client.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if first.Choices[0].Message.Content != strings.Join(wire.Answer(spec.DefaultOutputTokens), "") || first.Model != string(openai.ChatModel("gpt-4o-mini")) || first.Usage.CompletionTokens != spec.DefaultOutputTokens {
		t.Fatalf("completion = %+v", first)
	}

	// Past the limit: the SDK gets a 429, waits the server's retry-after-ms
	// and succeeds on its retry.
	if _, err := client.Chat.Completions.New(ctx, params); err != nil {
		t.Fatalf("second completion: %v", err)
	}
	st := s.Stats().Services["llm"]
	if rc.retries != 1 || st.RateLimited != 1 || st.EarlyRetries != 0 || st.Completed != 2 {
		t.Fatalf("retries %d, stats %+v; want one 429 retried on time", rc.retries, st)
	}

	// Without retries the SDK surfaces the 429.
	_, err = client.Chat.Completions.New(ctx, params, option.WithMaxRetries(0))
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusTooManyRequests || apiErr.Code != "rate_limit_exceeded" {
		t.Fatalf("third completion error = %v, want a 429 rate_limit_exceeded", err)
	}
	if got := s.Stats().Services["llm"].RateLimitedBy["rps"]; got != 2 {
		t.Fatalf("rate limited by rps = %d, want 2", got)
	}
}
