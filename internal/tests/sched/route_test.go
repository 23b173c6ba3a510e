package sched_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	. "github.com/simbench/simbench/sched"
)

// TestRunnerRoutesAroundAnOutage runs the sched package's closed-form
// outage case through a Runner, on the bubble's fake clock: the primary
// answers 429 with Retry-After 60 s for the first 120 s, the fallback
// always answers, every attempt takes 100 ms, and one call a second for
// 180 s, each from its own goroutine with a 15 s deadline, names route
// "chat" (threshold 15 s, a 60 s cooldown after 3 429s in a row). Each
// call's deployment, fallbacks and attempts are those the closed form
// gives (see TestRouteOutageClosedForm), the executor is told the
// deployment of each attempt (AttemptOf), and no attempt reaches the
// primary while it cools down.
func TestRunnerRoutesAroundAnOutage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var primary429 atomic.Int64
		var mu sync.Mutex
		var cooling []string
		start := time.Now()
		exec := func(ctx context.Context, call *Call, n int) Outcome {
			a, _ := AttemptOf(ctx)
			at := time.Since(start)
			if a.Deployment == "primary" && (inside(at, 2100*time.Millisecond, 62100*time.Millisecond) || inside(at, 65100*time.Millisecond, 125100*time.Millisecond)) {
				mu.Lock()
				cooling = append(cooling, fmt.Sprintf("%s at %v", call.ID, at))
				mu.Unlock()
			}
			select {
			case <-time.After(100 * time.Millisecond):
			case <-ctx.Done():
				return Outcome{Class: ClassCancelled, Err: ctx.Err()}
			}
			if a.Deployment == "primary" && at < 120*time.Second {
				primary429.Add(1)
				return Outcome{Class: ClassRateLimited, Status: 429, RetryAfter: 60 * time.Second, HasRetryAfter: true}
			}
			return Succeeded(a.Deployment)
		}
		r, err := NewRunner(Config{
			Services:    map[string]ServiceConfig{"primary": {}, "fallback": {}},
			Routes:      map[string]RouteConfig{"chat": {Deployments: []string{"primary", "fallback"}, FallBackAfter: 15 * time.Second, CooldownAfter: 3, Cooldown: 60 * time.Second}},
			Retry:       RetryPolicy{Backoff: BackoffExponential, Base: time.Second, Cap: 10 * time.Second, MaxAttempts: 5},
			CallTimeout: 15 * time.Second,
		}, exec)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		results := make([]Result, 180)
		var wg sync.WaitGroup
		for s := range results {
			wg.Go(func() {
				time.Sleep(time.Duration(s) * time.Second)
				res, err := r.Run(context.Background(), Turn{Calls: []Call{{ID: fmt.Sprint(s), Service: "chat"}}})
				if err != nil {
					t.Error(err)
					return
				}
				results[s] = res[0]
			})
		}
		wg.Wait()
		for s, res := range results {
			want, fallbacks, attempts := "primary", int16(0), 1
			switch {
			case s <= 2 || (s >= 63 && s <= 65):
				want, fallbacks, attempts = "fallback", 1, 2
			case s <= 125:
				want = "fallback"
			}
			if res.Err != nil || res.Deployment != want || res.Value != want || res.Fallbacks != fallbacks || res.Attempts != attempts {
				t.Errorf("call of second %d: %+v; want %s after %d attempts, %d fallbacks", s, res, want, attempts, fallbacks)
			}
		}
		if n := primary429.Load(); n != 6 {
			t.Errorf("the primary answered %d 429s, want 6", n)
		}
		if len(cooling) > 0 {
			t.Errorf("attempts reached the primary in its cooldown: %v", cooling)
		}
	})
}

func inside(at, from, to time.Duration) bool { return at >= from && at < to }
