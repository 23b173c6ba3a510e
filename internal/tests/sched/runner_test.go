package sched_test

import (
	"context"
	"errors"
	"fmt"
	. "github.com/simbench/simbench/sched"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// sleeper is an executor that takes d (on the bubble's fake clock, inside
// synctest) and records the most attempts running at once.
type sleeper struct {
	d          time.Duration
	now, peak  atomic.Int64
	fail       func(call *Call, n int) *Outcome
	sawCancels atomic.Int64
}

func (s *sleeper) exec(ctx context.Context, call *Call, n int) Outcome {
	cur := s.now.Add(1)
	defer s.now.Add(-1)
	for p := s.peak.Load(); cur > p && !s.peak.CompareAndSwap(p, cur); p = s.peak.Load() {
	}
	select {
	case <-time.After(s.d):
	case <-ctx.Done():
		s.sawCancels.Add(1)
		return Outcome{Class: ClassCancelled, Err: ctx.Err()}
	}
	if s.fail != nil {
		if o := s.fail(call, n); o != nil {
			return *o
		}
	}
	return Succeeded("value of " + call.ID)
}

func eight() Turn {
	return Turn{Calls: calls(8, func(int) Call { return Call{Tool: "search"} })}
}

func TestRunnerRunsInOrderUnderCap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &sleeper{d: 100 * time.Millisecond}
		r, err := NewRunner(Config{MaxInFlight: 3}, s.exec)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		start := time.Now()
		res, err := r.Run(context.Background(), eight())
		if err != nil {
			t.Fatal(err)
		}
		// 8 calls, 3 at a time, 100 ms each: three waves on the fake clock.
		if got := time.Since(start); got != 300*time.Millisecond {
			t.Errorf("turn took %v, want 300ms", got)
		}
		if s.peak.Load() != 3 {
			t.Errorf("peak %d, want 3", s.peak.Load())
		}
		for i, r := range res {
			if r.ID != fmt.Sprint("c", i) || r.Value != "value of "+r.ID || r.Err != nil || r.State != Completed {
				t.Errorf("result %d: %+v", i, r)
			}
		}
	})
}

func TestRunnerCancelReachesExecutors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &sleeper{d: time.Hour}
		r, _ := NewRunner(Config{MaxInFlight: 2}, s.exec)
		defer r.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		res, err := r.Run(ctx, eight())
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v", err)
		}
		synctest.Wait() // let the cancelled executors observe their contexts
		if s.sawCancels.Load() != 2 {
			t.Errorf("%d executors saw the cancel, want 2", s.sawCancels.Load())
		}
		for i, r := range res {
			want := NotStarted
			if i < 2 {
				want = CancelledInFlight
			}
			if r.State != want || !errors.Is(r.Err, ErrCancelled) {
				t.Errorf("result %d: state %v err %v, want %v", i, r.State, r.Err, want)
			}
		}
	})
}

func TestRunnerAttemptTimeoutAndRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &sleeper{d: 50 * time.Millisecond}
		hang := func(ctx context.Context, call *Call, n int) Outcome {
			if call.ID == "c0" && n == 1 {
				<-ctx.Done() // hung until the attempt timeout cancels it
				return Outcome{Class: ClassCancelled, Err: ctx.Err()}
			}
			return s.exec(ctx, call, n)
		}
		r, _ := NewRunner(Config{MaxInFlight: 1, AttemptTimeout: time.Second, Retry: RetryPolicy{MaxAttempts: 2}}, hang)
		defer r.Close()
		start := time.Now()
		res, err := r.Run(context.Background(), Turn{Calls: calls(2, func(int) Call { return Call{} })})
		if err != nil {
			t.Fatal(err)
		}
		// c0 hangs 1 s, then c1 (queued earlier than c0's retry? no: the
		// retry keeps c0's place) — c0 retries first, then c1.
		if res[0].Err != nil || res[0].Attempts != 2 || res[1].Err != nil {
			t.Errorf("results %+v", res)
		}
		if got := time.Since(start); got != 1100*time.Millisecond {
			t.Errorf("took %v, want 1.1s", got)
		}
	})
}

func TestRunnerPanicBecomesResult(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, _ := NewRunner(Config{}, func(_ context.Context, call *Call, _ int) Outcome {
			if call.ID == "c1" {
				panic("tool exploded")
			}
			return Succeeded(nil)
		})
		defer r.Close()
		res, err := r.Run(context.Background(), Turn{Calls: calls(3, func(int) Call { return Call{} })})
		if err != nil {
			t.Fatal(err)
		}
		if !errors.Is(res[1].Err, ErrPanic) || res[1].Class != ClassPermanent || res[0].Err != nil || res[2].Err != nil {
			t.Errorf("results %+v", res)
		}
	})
}

func TestRunnerStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, _ := NewRunner(Config{}, func(ctx context.Context, call *Call, _ int) Outcome {
			var i int
			fmt.Sscanf(call.ID, "c%d", &i)
			time.Sleep(time.Duration(8-i) * time.Millisecond) // later calls finish first
			return Succeeded(i)
		})
		defer r.Close()
		ch, err := r.Stream(context.Background(), eight())
		if err != nil {
			t.Fatal(err)
		}
		var order []string
		for res := range ch {
			order = append(order, res.ID)
		}
		if fmt.Sprint(order) != "[c7 c6 c5 c4 c3 c2 c1 c0]" {
			t.Errorf("stream order %v", order)
		}
	})
}

func TestRunnerStreamsAsResultsArrive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, _ := NewRunner(Config{}, func(ctx context.Context, call *Call, _ int) Outcome {
			if call.ID == "slow" {
				<-ctx.Done()
				return Outcome{Class: ClassCancelled, Err: ctx.Err()}
			}
			time.Sleep(time.Millisecond)
			return Succeeded(call.ID)
		})
		defer r.Close()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		start := time.Now()
		ch, err := r.Stream(ctx, Turn{Calls: []Call{{ID: "slow"}, {ID: "fast"}}})
		if err != nil {
			t.Fatal(err)
		}
		first := <-ch
		if first.ID != "fast" || first.Err != nil || time.Since(start) != time.Millisecond {
			t.Fatalf("first result %+v after %v, want fast after 1ms while slow still runs", first, time.Since(start))
		}
		cancel()
		second, ok := <-ch
		if !ok || second.ID != "slow" || second.State != CancelledInFlight || !errors.Is(second.Err, ErrCancelled) {
			t.Errorf("second result %+v (ok %v)", second, ok)
		}
		if _, ok := <-ch; ok {
			t.Error("the stream did not close after the last result")
		}
	})
}

func TestRunnerRefusesAndCloses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &sleeper{d: time.Hour}
		r, _ := NewRunner(Config{}, s.exec)
		if _, err := r.Run(context.Background(), Turn{Calls: []Call{{ID: "a", After: []string{"a"}}}}); !errors.Is(err, ErrInvalidTurn) {
			t.Errorf("cycle: err = %v", err)
		}
		done := make(chan []Result)
		go func() {
			res, _ := r.Run(context.Background(), eight())
			done <- res
		}()
		synctest.Wait()
		r.Close()
		res := <-done
		if len(res) != 8 || !errors.Is(res[0].Err, ErrClosed) || res[0].State != CancelledInFlight {
			t.Errorf("after Close: %+v", res)
		}
		if _, err := r.Run(context.Background(), eight()); !errors.Is(err, ErrClosed) {
			t.Errorf("Run after Close: %v", err)
		}
	})
}

func TestRunnerManyTurnsAtOnce(t *testing.T) {
	// Fifty turns from fifty goroutines share one Runner with caps, a
	// bucket, retries, timeouts and cancels: every turn gets one result per
	// call, in its order. (An executor cancelled by its attempt timeout may
	// still be returning when the freed slot starts the next attempt, so
	// executors running at once are not bounded by the cap: that is the
	// point of freeing the slot.)
	synctest.Test(t, func(t *testing.T) {
		exec := func(ctx context.Context, call *Call, n int) Outcome {
			var i int
			fmt.Sscanf(call.ID, "c%d", &i)
			select {
			case <-time.After(time.Duration(1+i%7) * 10 * time.Millisecond):
			case <-ctx.Done():
				return Outcome{Class: ClassCancelled, Err: ctx.Err()}
			}
			if (i+n)%4 == 0 {
				return Outcome{Class: ClassRateLimited, Status: 429, RetryAfter: 50 * time.Millisecond, HasRetryAfter: true}
			}
			return Succeeded(i)
		}
		r, err := NewRunner(Config{
			MaxInFlight:    6,
			AttemptTimeout: 65 * time.Millisecond,
			Services:       map[string]ServiceConfig{"api": {RequestsPerMinute: 6000, RequestBurst: 10}},
			Retry:          RetryPolicy{Backoff: BackoffFullJitter, Base: 10 * time.Millisecond, Cap: 100 * time.Millisecond, MaxAttempts: 3},
		}, exec)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var wg sync.WaitGroup
		for k := range 50 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(context.Background(), time.Duration(200+k*10)*time.Millisecond)
				defer cancel()
				turn := Turn{Calls: calls(1+k%9, func(int) Call { return Call{Service: "api"} })}
				res, _ := r.Run(ctx, turn)
				if len(res) != len(turn.Calls) {
					t.Errorf("turn %d: %d results for %d calls", k, len(res), len(turn.Calls))
					return
				}
				for i, x := range res {
					if x.ID != turn.Calls[i].ID {
						t.Errorf("turn %d: result %d is %s", k, i, x.ID)
					}
				}
			}()
		}
		wg.Wait()
	})
}
