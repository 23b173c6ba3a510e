package sched_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/bulkhead"
	"github.com/failsafe-go/failsafe-go/ratelimiter"
	"github.com/failsafe-go/failsafe-go/retrypolicy"
	"github.com/simbench/simbench/internal/proc"
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
	// The same turn under a context that can be cancelled, as a request's
	// is: the caller of Run then waits for the decision and the workers run
	// every attempt.
	ctx, cancel := context.WithCancel(context.Background())
	runnerCtx := func() error {
		res, err := r.Run(ctx, Turn{Calls: calls})
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
		{"failsafe-go", failsafeTurn}, {"conc", concTurn}, {"runner-ctx", runnerCtx},
	}, func() { cancel(); r.Close() }
}

// BenchmarkRunner measures the Runner's CPU cost per call on turns of 8
// no-op calls at a cap of 4, against references doing the same work in the
// same run: bare goroutines with a WaitGroup (no limits), x/sync/semaphore
// with x/time/rate, failsafe-go (bulkhead, rate limiter and retry policy)
// and a sourcegraph/conc pool with x/time/rate; runner-ctx is the Runner
// again under a context that can be cancelled. Each iteration runs a block
// of turns of each, in turn, so drift in the machine's load affects all
// alike. It reports CPU ns per call of each, and each one's ratio to
// x/sync + x/time: runner/xsync-xtime is the figure to gate (target ≤ 1.5).
// The sub-benchmarks run one implementation alone, for profiles.
func BenchmarkRunner(b *testing.B) {
	impls, closeAll := implementations(b)
	defer closeAll()
	const block = 50 // turns of one implementation between switches
	b.Run("alternating", func(b *testing.B) {
		spent := alternate(b, impls, block)
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

// The shape of BenchmarkRunnerWideTurn: one agent turn of wideCalls no-op
// calls, with no cap and with a cap of wideCap.
const (
	wideCalls = 1000
	wideCap   = 64
)

// BenchmarkRunnerWideTurn measures the Runner's CPU cost per call on turns
// of 1,000 no-op calls with no cap (every call starts at once, on a worker
// of its own) and with a cap of 64 (64 workers run the turn), against bare
// goroutines with a WaitGroup, each iteration running a block of turns of
// each in turn so that drift in the machine's load affects all alike. It
// reports CPU ns per call of each and nocap/cap64, the figure to gate
// (target ≤ 1.2): a Runner keeps its recent peak of workers idle, so a
// large uncapped turn starts no goroutine once the first has run.
func BenchmarkRunnerWideTurn(b *testing.B) {
	turn := Turn{Calls: calls(wideCalls, func(int) Call { return Call{Service: "api", Tokens: 10} })}
	runner := func(maxInFlight int) func() error {
		r, err := NewRunner(Config{
			MaxInFlight: maxInFlight,
			Services:    map[string]ServiceConfig{"api": {RequestsPerMinute: benchRPS * 60, RequestBurst: benchBurst}},
		}, noop)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { r.Close() })
		return func() error {
			res, err := r.Run(context.Background(), turn)
			if err == nil && len(res) != wideCalls {
				err = fmt.Errorf("%d results", len(res))
			}
			return err
		}
	}
	bare := func() error {
		var wg sync.WaitGroup
		res := make([]Outcome, wideCalls)
		for j := range turn.Calls {
			wg.Go(func() { res[j] = noop(context.Background(), &turn.Calls[j], 1) })
		}
		wg.Wait()
		return nil
	}
	impls := []impl{{"nocap", runner(0)}, {"cap64", runner(wideCap)}, {"bare-goroutines", bare}}
	const block = 5 // turns of one implementation between switches
	spent := alternate(b, impls, block)
	n := float64(b.N * block * wideCalls)
	for k, im := range impls {
		b.ReportMetric(float64(spent[k])/n, im.name+"-cpu-ns/call")
	}
	b.ReportMetric(float64(spent[0])/float64(spent[1]), "nocap/cap64")
	b.ReportMetric(0, "ns/op") // an iteration runs every implementation: its time means nothing alone
}

// BenchmarkStuckToolDeadline measures, on the real clock, how long Run takes
// to return from a turn of 4 calls with a 100 ms deadline whose tool sleeps
// 3 s ignoring its context. Each iteration is one turn, the deadlines of
// deadlineCases in rotation (the call's, the turn's, the context's). It
// reports the slowest return and the 99th percentile in ms, and the turns
// that took over 150 ms (the deadline and the hand-over of the results);
// run it with -benchtime 1000x (about 100 s), under -race too. The sleeping
// tools end within 3 s of the last turn, when the Runners' Close returns.
// The reference, in the same iterations, is a bare 100 ms timer waited on
// by a goroutine started with the turn: how late the machine's load makes
// any wake-up (ref-max-ms, ref-p99-ms), and the most a turn took beyond its
// reference (max-excess-ms).
func BenchmarkStuckToolDeadline(b *testing.B) {
	exec := func(_ context.Context, call *Call, _ int) Outcome {
		time.Sleep(3 * time.Second)
		return Succeeded(call.ID)
	}
	runners := make([]*Runner, len(deadlineCases))
	for k, tt := range deadlineCases {
		r, err := NewRunner(tt.cfg, exec)
		if err != nil {
			b.Fatal(err)
		}
		defer r.Close()
		runners[k] = r
	}
	turn := Turn{Calls: calls(4, func(int) Call { return Call{} })}
	var took, ref []time.Duration
	excess := time.Duration(math.MinInt64)
	for i := 0; b.Loop(); i++ {
		k := i % len(deadlineCases)
		tt := deadlineCases[k]
		ctx, cancel := context.Background(), context.CancelFunc(func() {})
		if tt.ctx > 0 {
			ctx, cancel = context.WithTimeout(ctx, tt.ctx)
		}
		refDone := make(chan time.Duration)
		start := time.Now()
		go func() {
			<-time.After(100 * time.Millisecond)
			refDone <- time.Since(start)
		}()
		res, _ := runners[k].Run(ctx, turn)
		took = append(took, time.Since(start))
		ref = append(ref, <-refDone)
		excess = max(excess, took[len(took)-1]-ref[len(ref)-1])
		cancel()
		for _, x := range res {
			if !errors.Is(x.Err, tt.resultErr) {
				b.Fatalf("%s: result %s: %v, want %v", tt.name, x.ID, x.Err, tt.resultErr)
			}
		}
		if len(res) != len(turn.Calls) {
			b.Fatalf("%s: %d results", tt.name, len(res))
		}
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	for _, m := range []struct {
		prefix string
		d      []time.Duration
	}{{"", took}, {"ref-", ref}} {
		slices.Sort(m.d)
		over := len(m.d) - sort.Search(len(m.d), func(i int) bool { return m.d[i] > 150*time.Millisecond })
		b.ReportMetric(ms(m.d[len(m.d)-1]), m.prefix+"max-ms")
		b.ReportMetric(ms(m.d[len(m.d)*99/100]), m.prefix+"p99-ms")
		b.ReportMetric(float64(over), m.prefix+"over-150ms")
	}
	b.ReportMetric(ms(excess), "max-excess-ms")
}

// alternate runs, b.N times, block turns of each implementation in turn,
// so that drift in the machine's load affects them alike, and returns the
// process CPU each spent, in impls' order.
func alternate(b *testing.B, impls []impl, block int) []time.Duration {
	spent := make([]time.Duration, len(impls))
	b.ReportAllocs()
	for b.Loop() {
		for k, im := range impls {
			start := proc.SelfCPU()
			for range block {
				if err := im.turn(); err != nil {
					b.Fatal(im.name, err)
				}
			}
			spent[k] += proc.SelfCPU() - start
		}
	}
	return spent
}
