package sched_test

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/bulkhead"
	"github.com/failsafe-go/failsafe-go/ratelimiter"
	"github.com/failsafe-go/failsafe-go/retrypolicy"
	. "github.com/simbench/simbench/sched"
	"github.com/sourcegraph/conc/pool"
	"golang.org/x/sync/semaphore"
	"golang.org/x/time/rate"
)

// The shape of BenchmarkRunner: an agent turn of 8 no-op tool calls at a
// cap of 4, against a rate limit high enough never to make a call wait (the
// cost of the bookkeeping, not of waiting).
const (
	turnCalls  = 8
	turnCap    = 4
	benchRPS   = 1e9
	benchBurst = 1e6
)

// impl runs one turn of turnCalls no-op calls.
type impl struct {
	name string
	turn func() error
}

func noop(context.Context, *Call, int) Outcome { return Outcome{} }

// implementations returns the Runner and the references it is measured
// against, each set up once; close releases them.
func implementations(b *testing.B) (impls []impl, close func()) {
	calls := make([]Call, turnCalls)
	for i := range calls {
		calls[i] = Call{ID: fmt.Sprint("c", i), Service: "api", Tokens: 10}
	}
	r, err := NewRunner(Config{
		MaxInFlight: turnCap,
		Services:    map[string]ServiceConfig{"api": {RequestsPerMinute: benchRPS * 60, RequestBurst: benchBurst}},
		Retry:       RetryPolicy{Backoff: BackoffFullJitter, Base: time.Second, Cap: time.Minute, MaxAttempts: 3},
	}, noop)
	if err != nil {
		b.Fatal(err)
	}
	runner := func() error {
		res, err := r.Run(context.Background(), Turn{Calls: calls})
		if err == nil && len(res) != turnCalls {
			err = fmt.Errorf("%d results", len(res))
		}
		return err
	}
	bare := func() error {
		var wg sync.WaitGroup
		res := make([]Outcome, turnCalls)
		for j := range calls {
			wg.Go(func() { res[j] = noop(context.Background(), &calls[j], 1) })
		}
		wg.Wait()
		return nil
	}
	sem := semaphore.NewWeighted(turnCap)
	lim := rate.NewLimiter(rate.Limit(benchRPS), benchBurst)
	xsync := func() error {
		ctx := context.Background()
		var wg sync.WaitGroup
		res := make([]Outcome, turnCalls)
		for j := range calls {
			wg.Go(func() {
				if err := sem.Acquire(ctx, 1); err != nil {
					return
				}
				defer sem.Release(1)
				if err := lim.Wait(ctx); err != nil {
					return
				}
				res[j] = noop(ctx, &calls[j], 1)
			})
		}
		wg.Wait()
		return nil
	}
	// failsafe-go: a bulkhead of turnCap that waits, a bursty rate limiter
	// and a retry policy, the same guarantees the Runner gives.
	fs := failsafe.With[Outcome](
		retrypolicy.NewBuilder[Outcome]().WithMaxAttempts(3).WithBackoff(time.Second, time.Minute).Build(),
		bulkhead.NewBuilder[Outcome](turnCap).WithMaxWaitTime(time.Minute).Build(),
		ratelimiter.NewBurstyBuilder[Outcome](benchBurst, time.Millisecond).WithMaxWaitTime(time.Minute).Build(),
	)
	failsafeTurn := func() error {
		var wg sync.WaitGroup
		res := make([]Outcome, turnCalls)
		errs := make([]error, turnCalls)
		for j := range calls {
			wg.Go(func() {
				res[j], errs[j] = fs.Get(func() (Outcome, error) { return noop(context.Background(), &calls[j], 1), nil })
			})
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
		return nil
	}
	// conc: a pool of turnCap goroutines and the same x/time limiter.
	concTurn := func() error {
		p := pool.NewWithResults[Outcome]().WithMaxGoroutines(turnCap)
		for j := range calls {
			p.Go(func() Outcome {
				if err := lim.Wait(context.Background()); err != nil {
					return Outcome{Class: ClassCancelled, Err: err}
				}
				return noop(context.Background(), &calls[j], 1)
			})
		}
		if res := p.Wait(); len(res) != turnCalls {
			return fmt.Errorf("%d results", len(res))
		}
		return nil
	}
	return []impl{
		{"runner", runner}, {"bare-goroutines", bare}, {"xsync-xtime", xsync},
		{"failsafe-go", failsafeTurn}, {"conc", concTurn},
	}, func() { r.Close() }
}

// cpu returns the CPU time the process has used, user and system.
func cpu(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkRunner measures the Runner's CPU cost per call on turns of 8
// no-op calls at a cap of 4, against references doing the same work in the
// same run: bare goroutines with a WaitGroup (no limits), x/sync/semaphore
// with x/time/rate, failsafe-go (bulkhead, rate limiter and retry policy)
// and a sourcegraph/conc pool with x/time/rate. Each iteration runs a block
// of turns of each, in turn, so drift in the machine's load affects all
// alike. It reports CPU ns per call of each, and each one's ratio to
// x/sync + x/time: runner/xsync-xtime is the figure to gate (target ≤ 1.5).
// The sub-benchmarks run one implementation alone, for profiles.
func BenchmarkRunner(b *testing.B) {
	impls, closeAll := implementations(b)
	defer closeAll()
	const block = 50 // turns of one implementation between switches
	b.Run("alternating", func(b *testing.B) {
		spent := make([]time.Duration, len(impls))
		b.ReportAllocs()
		for b.Loop() {
			for k, im := range impls {
				start := cpu(b)
				for range block {
					if err := im.turn(); err != nil {
						b.Fatal(im.name, err)
					}
				}
				spent[k] += cpu(b) - start
			}
		}
		calls := float64(b.N * block * turnCalls)
		ref := float64(spent[2]) / calls
		for k, im := range impls {
			ns := float64(spent[k]) / calls
			b.ReportMetric(ns, im.name+"-cpu-ns/call")
			if k != 2 {
				b.ReportMetric(ns/ref, im.name+"/xsync-xtime")
			}
		}
		b.ReportMetric(0, "ns/op") // an iteration runs every implementation: its time means nothing alone
	})
	for _, im := range impls {
		b.Run(im.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := im.turn(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*turnCalls), "ns/call")
		})
	}
}
