// Command corpus is the labelled corpus of agent runtimes that `simbench
// check` is proven on: one good runtime on plain net/http, and the same
// with exactly one defect (-defect NAME; manifest.toml names each and the
// line of check that must catch it). It sends nothing simbench-specific:
// a bearer key, JSON bodies and, on writes, an Idempotency-Key.
//
// The good runtime runs -sessions sessions of -turns turns; each turn
// looks 4 things up at once, then saves 3 changes to the session's
// document one at a time. At most 8 calls are in flight (a semaphore held
// for the whole call, its waits included). Each attempt has a 1 s
// timeout that aborts its request; a call is tried at most 5 times. After
// a 429 it waits the Retry-After (Retry-After-Ms, else Retry-After) plus
// up to 2 s of jitter; after a timeout, a reset or a 5xx, a full-jitter
// backoff from 100 ms; a 4xx other than 429 is not retried. Writes carry
// an Idempotency-Key, the same on every attempt of a call. Each session's
// first lookup forwards arguments the model cut short (not JSON), which the
// service refuses with a 400, as agents meet them. -cap and -pace set the
// cap and a request pace, as `simbench recommend --emit` prints them. The
// same runtime, with the same defects, is written
// in Node on the official openai SDK (node/corpus.mjs) and in Python on
// asyncio and httpx (python/corpus.py).
//
//	simbench check examples/corpus/scenario.toml -- go run ./examples/corpus -defect fixed-delay
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// defects are the runtimes of the corpus besides the good one ("none").
var defects = []string{"none", "no-cap", "cap-64", "fixed-delay", "ignore-retry-after", "timeout-no-abort", "write-no-key", "parallel-writes",
	"retry-non-retryable", "no-timeout"}

// runtime is one runtime of the corpus: the good one, or it with defect.
type runtime struct {
	defect         string
	lookup, save   string // the tools' URLs
	key            string
	sem            chan struct{} // nil: no cap
	pace           *rate.Limiter // nil: not paced
	ok, lost, sent atomic.Int64
}

func main() {
	defect := flag.String("defect", "none", "the one defect: "+fmt.Sprint(defects))
	sessions := flag.Int("sessions", 8, "sessions running at once")
	turns := flag.Int("turns", 2, "turns per session")
	capN := flag.Int("cap", 8, "calls in flight at most (the defects no-cap and cap-64 set their own)")
	pace := flag.Float64("pace", 0, "attempts per second at most, a token bucket of one second's burst (0: not paced)")
	flag.Parse()
	if *capN < 1 || *pace < 0 || *sessions < 1 || *turns < 1 {
		fmt.Fprintf(os.Stderr, "corpus: -cap %d, -sessions %d and -turns %d must be positive and -pace %g not negative\n", *capN, *sessions, *turns, *pace)
		os.Exit(2)
	}
	if !slices.Contains(defects, *defect) {
		fmt.Fprintf(os.Stderr, "corpus: unknown -defect %q; one of %v\n", *defect, defects)
		os.Exit(2)
	}
	rt := &runtime{defect: *defect, lookup: os.Getenv("SIMBENCH_TOOL_URL_LOOKUP"), save: os.Getenv("SIMBENCH_TOOL_URL_SAVE"),
		key: os.Getenv("OPENAI_API_KEY")}
	if rt.lookup == "" || rt.save == "" {
		fmt.Fprintln(os.Stderr, "corpus: SIMBENCH_TOOL_URL_LOOKUP and SIMBENCH_TOOL_URL_SAVE are not set; run me under simbench check")
		os.Exit(2)
	}
	switch *defect {
	case "no-cap":
	case "cap-64":
		rt.sem = make(chan struct{}, 64)
	default:
		rt.sem = make(chan struct{}, *capN)
	}
	if *pace > 0 {
		rt.pace = rate.NewLimiter(rate.Limit(*pace), max(1, int(*pace)))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var wg sync.WaitGroup
	for s := range *sessions {
		wg.Go(func() { rt.session(ctx, s, *turns) })
	}
	wg.Wait()
	fmt.Printf("corpus %s: %d calls answered, %d lost, %d attempts\n", *defect, rt.ok.Load(), rt.lost.Load(), rt.sent.Load())
}

// session runs one session's turns: 4 lookups at once, then 3 saves of
// its document, one at a time (at once with parallel-writes).
func (rt *runtime) session(ctx context.Context, s, turns int) {
	for t := range turns {
		var lookups sync.WaitGroup
		for c := range 4 {
			lookups.Go(func() {
				body, _ := json.Marshal(map[string]any{"session": s, "turn": t, "query": c})
				if t == 0 && c == 0 {
					body = body[:len(body)-3] // the model's arguments, cut short
				}
				rt.call(ctx, rt.lookup, body, "")
			})
		}
		lookups.Wait()
		var saves sync.WaitGroup
		for c := range 3 {
			save := func() {
				key := fmt.Sprintf("s%d-t%d-c%d-%d", s, t, c, rand.Uint64())
				if rt.defect == "write-no-key" {
					key = ""
				}
				body, _ := json.Marshal(map[string]any{"resource": fmt.Sprintf("doc-%d", s), "turn": t, "change": c})
				rt.call(ctx, rt.save, body, key)
			}
			if rt.defect == "parallel-writes" {
				saves.Go(save)
			} else {
				save()
			}
		}
		saves.Wait()
	}
}

// Retry settings of the good runtime.
const (
	attempts    = 5
	timeout     = time.Second
	backoffBase = 100 * time.Millisecond
	jitterMax   = 2 * time.Second
)

// call makes one tool call of body: up to attempts attempts, holding a
// slot of the cap throughout, each attempt waiting for the pace.
func (rt *runtime) call(ctx context.Context, url string, body []byte, key string) {
	if rt.sem != nil {
		rt.sem <- struct{}{}
		defer func() { <-rt.sem }()
	}
	for n := range attempts {
		if rt.pace != nil && rt.pace.Wait(ctx) != nil {
			break
		}
		rt.sent.Add(1)
		status, retryAfter, err := rt.attempt(ctx, url, body, key)
		if err == nil && status/100 == 2 {
			rt.ok.Add(1)
			return
		}
		refused := err == nil && status/100 == 4 && status != 429 && rt.defect != "retry-non-retryable"
		if ctx.Err() != nil || refused || n == attempts-1 {
			break
		}
		sleep(ctx, rt.wait(status, retryAfter, n))
	}
	rt.lost.Add(1)
}

// wait is how long to wait before the next attempt after attempt n (from
// 0) got status (0: a timeout or a reset) and retryAfter (-1: none).
func (rt *runtime) wait(status int, retryAfter time.Duration, n int) time.Duration {
	backoff := rand.N(backoffBase << n) // full jitter
	if status != 429 || retryAfter < 0 {
		return backoff
	}
	switch rt.defect {
	case "fixed-delay":
		return retryAfter
	case "ignore-retry-after":
		return rand.N(jitterMax)
	}
	return retryAfter + rand.N(jitterMax)
}

// attempt sends one attempt, aborted at the timeout (with
// timeout-no-abort, abandoned there: the request runs on; with no-timeout,
// waited on to its end), and returns its status and Retry-After (-1: none).
func (rt *runtime) attempt(ctx context.Context, url string, body []byte, key string) (int, time.Duration, error) {
	if rt.defect == "no-timeout" {
		return rt.send(ctx, url, body, key)
	}
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if rt.defect != "timeout-no-abort" {
		return rt.send(actx, url, body, key)
	}
	type result struct {
		status int
		after  time.Duration
		err    error
	}
	done := make(chan result, 1)
	go func() {
		s, a, err := rt.send(context.WithoutCancel(ctx), url, body, key)
		done <- result{s, a, err}
	}()
	select {
	case r := <-done:
		return r.status, r.after, r.err
	case <-actx.Done():
		return 0, -1, actx.Err()
	}
}

// send posts body to url and reads the answer.
func (rt *runtime) send(ctx context.Context, url string, body []byte, key string) (int, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, -1, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+rt.key)
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, -1, err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return 0, -1, err
	}
	return resp.StatusCode, retryAfterOf(resp.Header), nil
}

// retryAfterOf reads the retry delay of an answer: Retry-After-Ms, else
// Retry-After in seconds; -1 when it gives none.
func retryAfterOf(h http.Header) time.Duration {
	if v, err := strconv.ParseFloat(h.Get("Retry-After-Ms"), 64); err == nil && v >= 0 {
		return time.Duration(v * float64(time.Millisecond))
	}
	if v, err := strconv.ParseFloat(h.Get("Retry-After"), 64); err == nil && v >= 0 {
		return time.Duration(v * float64(time.Second))
	}
	return -1
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
