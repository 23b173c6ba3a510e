// Command nested is an agent whose retries wrap its SDK's, as most agent
// runtimes' do: every tool-less model call goes through a sched.Runner
// that retries it up to -outer times (full jitter, honouring Retry-After),
// and each of those tries is one call of the official openai-go SDK, which
// retries on its own (-sdk-retries, 2 by default: 3 attempts). Against a
// service that fails every request the layers multiply; a retry budget on the outer
// layer (-budget-max, sched.RetryBudget) stops the multiplying once it is
// spent. Run it under check to see the product:
//
//	simbench check nested-retries -- go run ./examples/nested
//	simbench check nested-retries -- go run ./examples/nested -budget-max 2
//
// It talks to OPENAI_BASE_URL with OPENAI_API_KEY (check sets both); each
// session sends its own X-Simbench-Client.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/sched/httptool"
)

func main() {
	sessions := flag.Int("sessions", 1, "agent sessions running at once")
	calls := flag.Int("calls", 8, "model calls per session, all at once")
	outer := flag.Int("outer", 5, "the agent's attempts of one call, each a call of the SDK (the outer layer)")
	sdkRetries := flag.Int("sdk-retries", 2, "the SDK's own retries of each of those (the inner layer; openai-go's default is 2)")
	budgetMax := flag.Float64("budget-max", 0, "a retry budget on the outer layer: the most retries held (0: no budget)")
	budgetRatio := flag.Float64("budget-ratio", 0.1, "with -budget-max: the retries each success earns")
	flag.Parse()
	if os.Getenv("OPENAI_BASE_URL") == "" {
		fmt.Fprintln(os.Stderr, "nested: OPENAI_BASE_URL is not set; run me under simbench check")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	svc := sched.ServiceConfig{}
	if *budgetMax > 0 {
		svc.RetryBudget = &sched.RetryBudget{Ratio: *budgetRatio, Max: *budgetMax}
	}
	// The SDK reads OPENAI_BASE_URL and OPENAI_API_KEY itself.
	client := openai.NewClient(option.WithMaxRetries(*sdkRetries))
	r, err := sched.NewRunner(sched.Config{
		Services: map[string]sched.ServiceConfig{"openai": svc},
		Retry:    sched.RetryPolicy{Backoff: sched.BackoffFullJitter, Base: 200 * time.Millisecond, Cap: 2 * time.Second, MaxAttempts: *outer},
	}, func(ctx context.Context, call *sched.Call, attempt int) sched.Outcome {
		return complete(ctx, &client, call)
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "nested:", err)
		os.Exit(2)
	}
	defer r.Close()

	var ok, failed, budget atomic.Int64
	var wg sync.WaitGroup
	for s := range *sessions {
		wg.Go(func() {
			var turn sched.Turn
			for c := range *calls {
				turn.Calls = append(turn.Calls, sched.Call{ID: fmt.Sprint("call_", c), Tool: "complete", Service: "openai",
					Payload: request{session: fmt.Sprint("session-", s), prompt: fmt.Sprintf("Summarise part %d of the report.", c)}})
			}
			results, err := r.Run(ctx, turn)
			if err != nil {
				failed.Add(int64(len(turn.Calls)))
				return
			}
			for _, res := range results {
				switch {
				case !res.IsError():
					ok.Add(1)
				case errors.Is(res.Err, sched.ErrRetryBudget):
					budget.Add(1)
					failed.Add(1)
				default:
					failed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	fmt.Printf("nested: %d calls succeeded, %d failed (%d of them when the retry budget was spent)\n", ok.Load(), failed.Load(), budget.Load())
}

// request is one model call of a session.
type request struct{ session, prompt string }

// complete makes one SDK call (with the SDK's own retries) and reads its
// answer or error as an outcome with httptool, the one reader of HTTP
// answers.
func complete(ctx context.Context, client *openai.Client, call *sched.Call) sched.Outcome {
	req := call.Payload.(request)
	completion, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model:    openai.ChatModel("gpt-4o-mini"),
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(req.prompt)},
	}, option.WithHeader("X-Simbench-Client", req.session))
	var apiErr *openai.Error
	switch {
	case err == nil:
		return sched.Succeeded(completion.Choices[0].Message.Content)
	case errors.As(err, &apiErr):
		return httptool.ReadBody(apiErr.StatusCode, apiErr.Response.Header, []byte(apiErr.RawJSON()), time.Now())
	case ctx.Err() != nil:
		return sched.Outcome{Class: sched.ClassCancelled, Err: err}
	}
	return sched.Outcome{Class: sched.ClassTransient, Err: err}
}
