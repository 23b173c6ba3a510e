//go:build long

package check

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/simbench/simbench/fakeapi"
	"github.com/simbench/simbench/spec"
)

// TestLongGradeJoinsOpenAIGoRetryCountZero records what openai-go, its own
// retries off, sends when its application times an attempt out at 1.2 s
// without aborting it and sends the request again: both attempts declare
// x-stainless-retry-count 0. The server takes 3 s on each, so the retry
// arrives 1.8 s before the first is answered, its connection open
// throughout: one attempt abandoned, which check must see though the
// retry declares a first attempt. Real time, so behind the long tag; the
// margins (1.8 s before the answer, 1.55 s past the grace) are wide.
func TestLongGradeJoinsOpenAIGoRetryCountZero(t *testing.T) {
	var rec Recorder
	srv, err := fakeapi.Start(fakeapi.ServerConfig{OnRequest: rec.Add, Services: []fakeapi.ServiceConfig{{Config: spec.Config{Name: "llm",
		Latency: spec.Dist[time.Duration]{Value: 3 * time.Second}}}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	client := openai.NewClient(option.WithBaseURL(srv.SDKBaseURL("llm")), option.WithAPIKey("sk-simbench"), option.WithMaxRetries(0))
	params := openai.ChatCompletionNewParams{Model: "gpt-4o-mini", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}}
	var first sync.WaitGroup
	first.Go(func() { _, _ = client.Chat.Completions.New(context.Background(), params) })
	time.Sleep(1200 * time.Millisecond) // the application's timeout, which does not abort
	if _, err := client.Chat.Completions.New(t.Context(), params); err != nil {
		t.Fatal(err)
	}
	first.Wait()
	recs, _ := rec.Records()
	if len(recs) != 2 || recs[0].Attempt != 1 || recs[1].Attempt != 1 {
		t.Fatalf("records %+v, want 2 attempts, each declaring x-stainless-retry-count 0", recs)
	}
	for _, l := range Grade("recorded", recs, testRules()).Lines {
		switch l.Check {
		case CheckCancel:
			if l.Verdict != Fail || l.Value != 1 {
				t.Errorf("cancellation %s %v (%s), want FAIL 1: the retry joins the attempt it replaces", l.Verdict, l.Value, l.Figure)
			}
		case CheckAttempts:
			if l.Value != 2 {
				t.Errorf("attempts %s %v (%s), want 1 call of 2 attempts", l.Verdict, l.Value, l.Figure)
			}
		}
	}
}
