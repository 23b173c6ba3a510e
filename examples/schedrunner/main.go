// Command schedrunner runs an agent's tool calls the way sched is meant to
// be used: every session's turns go through one sched.Runner that caps the
// calls in flight, paces them with token buckets below the provider's
// limits, and retries with full jitter, honouring Retry-After. The
// defaults are what `simbench recommend tier3 --emit go` prints; under
// check every line passes:
//
//	simbench check tier3 -- go run ./examples/schedrunner -sessions 24
//
// It calls the tool whose URL is in SIMBENCH_TOOL_URL_<TOOL> (check sets
// it), with OPENAI_API_KEY as the bearer key.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/sched/httptool"
)

func main() {
	sessions := flag.Int("sessions", 24, "agent sessions running at once")
	turns := flag.Int("turns", 2, "turns per session")
	calls := flag.Int("calls", 8, "tool calls per turn")
	tool := flag.String("tool", "lookup", "the tool to call: its URL is SIMBENCH_TOOL_URL_<TOOL>")
	maxInFlight := flag.Int("max-in-flight", 66, "calls in flight for the process (simbench recommend's max_in_flight)")
	rpm := flag.Float64("rpm", 10_000, "the provider's requests per minute")
	burst := flag.Float64("burst", 167, "the provider's request burst")
	tpm := flag.Float64("tpm", 10_000_000, "the provider's tokens per minute")
	headroom := flag.Float64("headroom", 0.9, "the share of the limits to pace at")
	tokens := flag.Int64("tokens", 1000, "tokens one call costs")
	flag.Parse()
	url := os.Getenv("SIMBENCH_TOOL_URL_" + strings.ToUpper(*tool))
	if url == "" {
		fmt.Fprintf(os.Stderr, "schedrunner: SIMBENCH_TOOL_URL_%s is not set; run me under simbench check\n", strings.ToUpper(*tool))
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	t := &httptool.Tool{Build: httptool.PostJSON(url, http.Header{"Authorization": {"Bearer " + os.Getenv("OPENAI_API_KEY")}})}
	// What `simbench recommend tier3 --emit go` prints.
	r, err := sched.NewRunner(sched.Config{
		MaxInFlight: *maxInFlight,
		Services: map[string]sched.ServiceConfig{
			"openai": {RequestsPerMinute: *rpm, RequestBurst: *burst, TokensPerMinute: *tpm, Headroom: *headroom},
		},
		Retry: sched.RetryPolicy{Backoff: sched.BackoffFullJitter, Base: time.Second, Cap: time.Minute, MaxAttempts: 5},
	}, t.Execute)
	if err != nil {
		fmt.Fprintln(os.Stderr, "schedrunner:", err)
		os.Exit(2)
	}
	defer r.Close()

	var ok, failed atomic.Int64
	var wg sync.WaitGroup
	for s := range *sessions {
		wg.Go(func() {
			for n := range *turns {
				var turn sched.Turn
				for c := range *calls {
					turn.Calls = append(turn.Calls, sched.Call{ID: fmt.Sprint("call_", c), Tool: *tool, Service: "openai", Tokens: *tokens,
						Payload: map[string]int{"session": s, "turn": n, "call": c}})
				}
				results, err := r.Run(ctx, turn)
				if err != nil {
					failed.Add(int64(len(turn.Calls)))
					continue
				}
				for _, res := range results {
					if res.IsError() {
						failed.Add(1)
					} else {
						ok.Add(1)
					}
				}
			}
		})
	}
	wg.Wait()
	fmt.Printf("schedrunner: %d calls succeeded, %d failed\n", ok.Load(), failed.Load())
}
