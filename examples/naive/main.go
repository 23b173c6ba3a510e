// Command naive is an agent runtime that does what `simbench check` is
// there to catch: each session fires all of a turn's tool calls at once,
// with no cap on calls in flight, and retries a failed call at once, with
// no backoff and no regard for Retry-After. Run it under check to see the
// FAIL lines:
//
//	simbench check tier3 -- go run ./examples/naive -sessions 24
//
// With -outer N it also retries each call N times around its attempts, as
// an agent's retries wrap an SDK's: against a failing service check's
// attempts line measures the product (-attempts 3 -outer 5: 15 per call).
//
// It calls the tool whose URL is in SIMBENCH_TOOL_URL_<TOOL> (check sets
// it), with OPENAI_API_KEY as the bearer key.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
)

func main() {
	sessions := flag.Int("sessions", 24, "agent sessions running at once")
	turns := flag.Int("turns", 2, "turns per session")
	calls := flag.Int("calls", 8, "tool calls per turn, all fired at once")
	tool := flag.String("tool", "lookup", "the tool to call: its URL is SIMBENCH_TOOL_URL_<TOOL>")
	attempts := flag.Int("attempts", 3, "attempts per call, retried at once (an SDK's retries)")
	outer := flag.Int("outer", 1, "times the whole call is retried around those attempts (an agent's retries around its SDK's: nested, they multiply)")
	flag.Parse()
	url := os.Getenv("SIMBENCH_TOOL_URL_" + strings.ToUpper(*tool))
	if url == "" {
		fmt.Fprintf(os.Stderr, "naive: SIMBENCH_TOOL_URL_%s is not set; run me under simbench check\n", strings.ToUpper(*tool))
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var ok, failed atomic.Int64
	var wg sync.WaitGroup
	for s := range *sessions {
		wg.Go(func() {
			for t := range *turns {
				var turn sync.WaitGroup
				for c := range *calls {
					turn.Go(func() {
						body, _ := json.Marshal(map[string]int{"session": s, "turn": t, "call": c})
						for range *outer {
							if callOnce(ctx, url, body, *attempts) {
								ok.Add(1)
								return
							}
						}
						failed.Add(1)
					})
				}
				turn.Wait()
			}
		})
	}
	wg.Wait()
	fmt.Printf("naive: %d calls succeeded, %d failed\n", ok.Load(), failed.Load())
}

// callOnce posts body to url up to attempts times, at once after each
// failure; it reports whether one succeeded.
func callOnce(ctx context.Context, url string, body []byte, attempts int) bool {
	for range attempts {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return false
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+os.Getenv("OPENAI_API_KEY"))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return false
			}
			continue
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode/100 == 2 {
			return true
		}
	}
	return false
}
