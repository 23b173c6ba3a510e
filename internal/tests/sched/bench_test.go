package sched_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	. "github.com/simbench/simbench/sched"
	"golang.org/x/sync/semaphore"
	"golang.org/x/time/rate"
)

// BenchmarkRunner measures the Runner's cost per call with a no-op executor
// against references doing the same work: a bare goroutine per call, and
// x/sync/semaphore plus x/time/rate for a bounded, rate-limited run. ns/call
// is the figure to compare (target: runner − bare ≤ 3 µs).
func BenchmarkRunner(b *testing.B) {
	const n = 1000
	turn := Turn{Calls: make([]Call, n)}
	for i := range turn.Calls {
		turn.Calls[i] = Call{ID: fmt.Sprint("c", i), Service: "api", Tokens: 10}
	}
	noop := func(context.Context, *Call, int) Outcome { return Outcome{} }
	perCall := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/call")
	}

	b.Run("bare-goroutines", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			var wg sync.WaitGroup
			res := make([]Outcome, n)
			for j := range turn.Calls {
				wg.Add(1)
				go func() {
					defer wg.Done()
					res[j] = noop(context.Background(), &turn.Calls[j], 1)
				}()
			}
			wg.Wait()
		}
		perCall(b)
	})
	b.Run("runner-unbounded", func(b *testing.B) {
		r, _ := NewRunner(Config{}, noop)
		defer r.Close()
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := r.Run(context.Background(), turn); err != nil {
				b.Fatal(err)
			}
		}
		perCall(b)
	})
	// Bounded and rate limited: 64 in flight, a bucket that never makes a
	// call wait (the cost of the bookkeeping, not of waiting).
	const rpm, burst = 60e9, 1e9
	b.Run("runner-bounded-rated", func(b *testing.B) {
		r, _ := NewRunner(Config{MaxInFlight: 64, Services: map[string]ServiceConfig{"api": {RequestsPerMinute: rpm, RequestBurst: burst}}}, noop)
		defer r.Close()
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := r.Run(context.Background(), turn); err != nil {
				b.Fatal(err)
			}
		}
		perCall(b)
	})
	b.Run("semaphore-rate", func(b *testing.B) {
		sem := semaphore.NewWeighted(64)
		lim := rate.NewLimiter(rate.Limit(rpm/60), burst)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			ctx := context.Background()
			var wg sync.WaitGroup
			res := make([]Outcome, n)
			for j := range turn.Calls {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if err := sem.Acquire(ctx, 1); err != nil {
						return
					}
					defer sem.Release(1)
					if err := lim.Wait(ctx); err != nil {
						return
					}
					res[j] = noop(ctx, &turn.Calls[j], 1)
				}()
			}
			wg.Wait()
		}
		perCall(b)
	})
}
