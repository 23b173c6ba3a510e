package sched_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	. "github.com/simbench/simbench/sched"
)

// Stats and SetLimits are safe while turns run on other goroutines (run
// under -race), and a lowered cap holds from the next admission: once the
// attempts in flight when it was lowered have ended, no more than the new
// cap run at once.
func TestRunnerStatsAndSetLimitsWhileTurnsRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var running, peakAfter atomic.Int64
		var lowered atomic.Bool
		exec := func(ctx context.Context, call *Call, n int) Outcome {
			cur := running.Add(1)
			defer running.Add(-1)
			if lowered.Load() {
				for p := peakAfter.Load(); cur > p && !peakAfter.CompareAndSwap(p, cur); p = peakAfter.Load() {
				}
			}
			select {
			case <-time.After(100 * time.Millisecond):
			case <-ctx.Done():
			}
			return Succeeded(nil)
		}
		r, err := NewRunner(Config{Services: map[string]ServiceConfig{"api": {MaxInFlight: 8, RequestsPerMinute: 60_000, RequestBurst: 8}}}, exec)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var wg sync.WaitGroup
		for range 6 {
			wg.Go(func() {
				for range 5 {
					if _, err := r.Run(context.Background(), Turn{Calls: calls(8, func(int) Call { return Call{Service: "api"} })}); err != nil {
						t.Error(err)
					}
				}
			})
		}
		// Readers and a writer race the turns.
		wg.Go(func() {
			for range 20 {
				st := r.Stats()
				if len(st.Services) != 1 || st.Services[0].Name != "api" || st.Services[0].InFlight > 8 {
					t.Errorf("stats %+v", st)
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
		time.Sleep(250 * time.Millisecond)
		synctest.Wait()
		if st := r.Stats(); st.Services[0].InFlight != 8 || st.Services[0].Limit != 8 {
			t.Errorf("before lowering: %+v", st.Services[0])
		}
		if err := r.SetLimits("api", Limits{MaxInFlight: 2, RequestsPerMinute: 60_000, RequestBurst: 8}); err != nil {
			t.Fatal(err)
		}
		if st := r.Stats(); st.Services[0].Limit != 2 || st.Services[0].Limits.MaxInFlight != 2 {
			t.Errorf("after lowering: %+v", st.Services[0])
		}
		// The attempts in flight end within 100 ms; from then on at most 2.
		time.Sleep(100 * time.Millisecond)
		synctest.Wait()
		lowered.Store(true)
		wg.Wait()
		if p := peakAfter.Load(); p == 0 || p > 2 {
			t.Errorf("peak %d in flight after the cap was lowered to 2", p)
		}
		if err := r.SetLimits("nope", Limits{}); err == nil {
			t.Error("SetLimits accepted an unknown service")
		}
	})
}

// runnerJitter returns the retry delays a Runner built with r drew for one
// call failing three times.
func runnerJitter(t *testing.T, r *rand.Rand) []time.Duration {
	var mu sync.Mutex
	var delays []time.Duration
	run, err := NewRunner(Config{
		Rand:  r,
		Retry: RetryPolicy{Backoff: BackoffFullJitter, Base: time.Millisecond, Cap: 10 * time.Millisecond, MaxAttempts: 4},
		Hook: func(e Event) {
			if e.Kind == EventRetry {
				mu.Lock()
				delays = append(delays, e.Delay)
				mu.Unlock()
			}
		},
	}, func(context.Context, *Call, int) Outcome { return Failed(ClassOverloaded, errors.New("busy")) })
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	if _, err := run.Run(context.Background(), Turn{Calls: []Call{{ID: "a"}}}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	return delays
}

// Two Runners with a nil Rand draw different jitter, so a fleet does not
// retry in step; two with the same seeded source draw the same.
func TestRunnersDrawTheirOwnJitter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := runnerJitter(t, nil), runnerJitter(t, nil)
		if len(a) != 3 || slices.Equal(a, b) {
			t.Errorf("nil Rand: %v and %v, want three different draws each", a, b)
		}
		s1, s2 := runnerJitter(t, rand.New(rand.NewPCG(9, 9))), runnerJitter(t, rand.New(rand.NewPCG(9, 9)))
		if !slices.Equal(s1, s2) {
			t.Errorf("the same seed drew %v and %v", s1, s2)
		}
	})
}
