package fakeapi

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/simbench/simbench/fakeapi/internal/wire"
	"github.com/simbench/simbench/spec"
)

// anthropicClient is an Anthropic SDK client at the base URL serve prints
// for the service.
func anthropicClient(s *Server, service string, opts ...option.RequestOption) anthropic.Client {
	return anthropic.NewClient(append([]option.RequestOption{option.WithBaseURL(s.SDKBaseURL(service)), option.WithAPIKey("sk-ant-test")}, opts...)...)
}

func TestServeAnthropicSDKStreamWhole(t *testing.T) {
	s, _ := startServer(t, ServerConfig{Services: []ServiceConfig{{Config: spec.Config{Name: "claude", Headers: spec.HeadersAnthropic, RPM: 50, TPM: 100_000,
		Latency: spec.Dist[time.Duration]{Kind: spec.DistConstant, Value: 20 * time.Millisecond}}}}})
	client := anthropicClient(s, "claude")
	stream := client.Messages.NewStreaming(context.Background(), anthropic.MessageNewParams{
		Model: anthropic.Model("claude-sonnet-4-5"), MaxTokens: 12,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("What is the capital of France?"))},
	})
	var msg anthropic.Message
	deltas := 0
	for stream.Next() {
		ev := stream.Current()
		if ev.Type == "content_block_delta" {
			deltas++
		}
		if err := msg.Accumulate(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if len(msg.Content) != 1 || msg.Content[0].Text != strings.Join(wire.Answer(12), "") || deltas != 12 || msg.StopReason != anthropic.StopReasonMaxTokens {
		// The drawn answer (median 200 tokens) is cut at max_tokens 12.
		t.Fatalf("message %+v after %d deltas", msg, deltas)
	}
	if msg.Usage.OutputTokens != 12 || msg.Usage.InputTokens <= 0 || !strings.HasPrefix(msg.ID, "msg_") {
		t.Fatalf("usage %+v, id %q", msg.Usage, msg.ID)
	}
	st := s.Stats().Services["claude"]
	if st.Completed != 1 || st.TokensAccepted != msg.Usage.InputTokens+12 {
		t.Fatalf("stats %+v", st)
	}
}

func TestServeAnthropicSDKStreamCancelledStopsTheWork(t *testing.T) {
	// 3 s of latency over 40 tokens: the first events come at once, the
	// last ones seconds later; the client gives up after the first.
	s, _ := startServer(t, ServerConfig{Services: []ServiceConfig{{Config: spec.Config{Name: "claude", Headers: spec.HeadersAnthropic, TPM: 1_000_000,
		Latency: spec.Dist[time.Duration]{Kind: spec.DistConstant, Value: 3 * time.Second}}}}})
	client := anthropicClient(s, "claude")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream := client.Messages.NewStreaming(ctx, anthropic.MessageNewParams{
		Model: anthropic.Model("claude-sonnet-4-5"), MaxTokens: 40,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("write a long essay"))},
	})
	if !stream.Next() || stream.Current().Type != "message_start" {
		t.Fatalf("first event %+v, %v", stream.Current(), stream.Err())
	}
	cancel()
	for stream.Next() {
	}
	if err := stream.Err(); !errors.Is(err, context.Canceled) {
		t.Fatalf("stream error %v, want cancelled", err)
	}
	stream.Close()
	eventually(t, "the cancel counted", func() bool { return s.Stats().Services["claude"].InFlight == 0 })
	st := s.Stats().Services["claude"]
	if st.CancelledByClient != 1 || st.Wasted != 0 || st.WastedTokens != 0 || st.Completed != 0 {
		t.Fatalf("stats %+v: want the stream cancelled, nothing wasted", st)
	}
}

func TestServeAnthropicSDKRetriesParallel(t *testing.T) {
	// Eight goroutines share one key against 2 requests/s with a bucket of
	// four: unless they arrive seconds apart some are told to wait, in whole
	// seconds as Anthropic says it, and the SDK retries each 429 after its
	// retry-after, together with the others it limited.
	s, _ := startServer(t, ServerConfig{Services: []ServiceConfig{{Config: spec.Config{Name: "claude", Headers: spec.HeadersAnthropic, RPS: 2, Burst: 4, TPM: 10_000_000}}}})
	client := anthropicClient(s, "claude", option.WithMaxRetries(20))
	params := anthropic.MessageNewParams{Model: anthropic.Model("claude-sonnet-4-5"), MaxTokens: 8,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := client.Messages.New(context.Background(), params); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	st := s.Stats().Services["claude"]
	if st.Completed != 8 || st.RateLimited == 0 || st.EarlyRetries != 0 {
		t.Fatalf("stats %+v: want 8 completed, some 429s, no early retries", st)
	}
	// Without retries the SDK surfaces the 429, typed as Anthropic types it.
	s.Reset()
	var limited *anthropic.Error
	for i := 0; i < 6 && limited == nil; i++ {
		_, err := client.Messages.New(context.Background(), params, option.WithMaxRetries(0))
		errors.As(err, &limited)
	}
	if limited == nil || limited.StatusCode != 429 || !strings.Contains(limited.RawJSON(), "rate_limit_error") {
		t.Fatalf("no 429 surfaced: %v", limited)
	}
}

func TestServeAnthropicSDKToolUseStreamed(t *testing.T) {
	s, _ := startServer(t, ServerConfig{Services: []ServiceConfig{{Config: spec.Config{Name: "claude", Headers: spec.HeadersAnthropic, TPM: 1_000_000},
		Agent: AgentConfig{Calls: func(*rand.Rand) int { return 4 }}}}})
	client := anthropicClient(s, "claude")
	tool := anthropic.ToolParam{Name: "get_weather", InputSchema: anthropic.ToolInputSchemaParam{
		Properties: map[string]any{"city": map[string]any{"type": "string"}, "unit": map[string]any{"enum": []string{"celsius", "fahrenheit"}}},
		Required:   []string{"city", "unit"},
	}}
	stream := client.Messages.NewStreaming(context.Background(), anthropic.MessageNewParams{
		Model: anthropic.Model("claude-sonnet-4-5"), MaxTokens: 100,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("weather in four cities?"))},
		Tools:    []anthropic.ToolUnionParam{{OfTool: &tool}},
	})
	var msg anthropic.Message
	for stream.Next() {
		if err := msg.Accumulate(stream.Current()); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if len(msg.Content) != 4 || msg.StopReason != anthropic.StopReasonToolUse || msg.Usage.OutputTokens != 100 {
		t.Fatalf("message %+v", msg)
	}
	for i, b := range msg.Content {
		// The minimal input, then each parallel call its index in the
		// first string property.
		want := `{"city":"","unit":"celsius"}`
		if i > 0 {
			want = fmt.Sprintf(`{"city":"%d","unit":"celsius"}`, i)
		}
		u := b.AsToolUse()
		if b.Type != "tool_use" || u.Name != "get_weather" || string(u.Input) != want || !strings.HasPrefix(u.ID, "toolu_") {
			t.Fatalf("block %+v, input %s", b, u.Input)
		}
	}
}
