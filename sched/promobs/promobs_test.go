package promobs_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/goleak"

	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/sched/promobs"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// counts tallies what the executor returned, by service and class.
type counts struct {
	mu sync.Mutex
	n  map[string]map[sched.Class]int
}

func (c *counts) add(svc string, cl sched.Class) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n[svc] == nil {
		c.n[svc] = map[sched.Class]int{}
	}
	c.n[svc][cl]++
}

// histCount returns the sample count of a histogram child.
func histCount(t *testing.T, h *prometheus.HistogramVec, svc string) uint64 {
	t.Helper()
	var m dto.Metric
	if err := h.WithLabelValues(svc).(prometheus.Histogram).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetHistogram().GetSampleCount()
}

// TestObserverMatchesRunnerResults drives a Runner under load with an
// executor that sometimes answers 429, and checks every counter against
// what the executor returned and what the Runner's results say.
func TestObserverMatchesRunnerResults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		obs, err := promobs.New(reg)
		if err != nil {
			t.Fatal(err)
		}
		var limMu sync.Mutex
		lastLimit := map[string]int{}
		cfg := sched.Config{
			MaxInFlight: 5,
			Services: map[string]sched.ServiceConfig{
				"a": {MaxInFlight: 2, RequestsPerMinute: 1200, RequestBurst: 2},
				"b": {MaxInFlight: 4, Adaptive: &sched.AdaptiveConfig{Algorithm: sched.AlgorithmAIMD, Initial: 4, Min: 1, Max: 4},
					RetryBudget: &sched.RetryBudget{Ratio: 0.1, Max: 2}},
			},
			Retry: sched.RetryPolicy{Backoff: sched.BackoffExponential, Base: 10 * time.Millisecond, Cap: time.Second, MaxAttempts: 3},
			Hook: func(e sched.Event) {
				if e.Kind == sched.EventLimit {
					limMu.Lock()
					lastLimit[e.Service] = e.N
					limMu.Unlock()
				}
				obs.Hook(e)
			},
		}
		got := &counts{n: map[string]map[sched.Class]int{}}
		exec := func(ctx context.Context, call *sched.Call, n int) sched.Outcome {
			select {
			case <-time.After(20 * time.Millisecond):
			case <-ctx.Done():
				return sched.Outcome{Class: sched.ClassCancelled, Err: ctx.Err()}
			}
			var o sched.Outcome
			switch {
			case call.Tool == "flaky" && n < 3, call.Tool == "doomed":
				o = sched.Outcome{Class: sched.ClassRateLimited, Status: 429, RetryAfter: 50 * time.Millisecond, HasRetryAfter: true}
			case call.Tool == "broken":
				o = sched.Outcome{Class: sched.ClassPermanent, Status: 400, Err: errors.New("bad request")}
			default:
				o = sched.Succeeded(call.ID)
			}
			got.add(call.Service, o.Class)
			return o
		}
		r, err := sched.NewRunner(cfg, exec)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()

		tools := []string{"ok", "flaky", "ok", "doomed", "broken", "ok"}
		turns := make([]sched.Turn, 12)
		results := make([][]sched.Result, len(turns))
		var wg sync.WaitGroup
		for i := range turns {
			for j, tool := range tools {
				if i%4 == 0 {
					tool = "ok" // a budgeted turn: no retries, some calls never start
				}
				turns[i].Calls = append(turns[i].Calls, sched.Call{ID: fmt.Sprintf("c%d", j), Tool: tool, Service: []string{"a", "b"}[(i+j)%2]})
			}
			if i%4 == 0 {
				turns[i].AttemptBudget = 3
			}
			wg.Go(func() {
				res, err := r.Run(context.Background(), turns[i])
				if err != nil {
					t.Error(err)
				}
				results[i] = res
			})
		}
		wg.Wait()

		for _, svc := range []string{"a", "b"} {
			calls := map[sched.Class]int{}
			attempts, retries, exhausted, refused := 0, 0, 0, 0
			for i, res := range results {
				for j, x := range res {
					if turns[i].Calls[j].Service != svc {
						continue
					}
					calls[x.Class]++
					attempts += x.Attempts
					retries += max(x.Attempts-1, 0)
					if errors.Is(x.Err, sched.ErrBudgetExhausted) {
						exhausted++
					}
					if errors.Is(x.Err, sched.ErrRetryBudget) {
						refused++
					}
				}
			}
			sum := 0.0
			for c := sched.ClassSuccess; c <= sched.ClassCancelled; c++ {
				a := testutil.ToFloat64(obs.Attempts().WithLabelValues(svc, c.String()))
				if want := got.n[svc][c]; a != float64(want) {
					t.Errorf("service %s: attempts_total{class=%s} = %v, the executor returned %d", svc, c, a, want)
				}
				sum += a
				if n := testutil.ToFloat64(obs.Calls().WithLabelValues(svc, c.String())); n != float64(calls[c]) {
					t.Errorf("service %s: calls_total{class=%s} = %v, the results have %d", svc, c, n, calls[c])
				}
			}
			if sum != float64(attempts) {
				t.Errorf("service %s: %v attempts counted, the results started %d", svc, sum, attempts)
			}
			if n := testutil.ToFloat64(obs.BudgetExhausted().WithLabelValues(svc)); n != float64(exhausted) {
				t.Errorf("service %s: budget_exhausted_total = %v, the results have %d", svc, n, exhausted)
			}
			if n := testutil.ToFloat64(obs.RetryBudgetRefused().WithLabelValues(svc)); n != float64(refused) || (svc == "b") != (refused > 0) {
				t.Errorf("service %s: retry_budget_refused_total = %v, the results have %d (only b has a budget)", svc, n, refused)
			}
			if n := histCount(t, obs.RetryDelay(), svc); n != uint64(retries) {
				t.Errorf("service %s: %d retry delays observed, the results retried %d times", svc, n, retries)
			}
			// One admission per attempt, plus those of calls admitted and
			// then refused when their turn's budget ran out before they started.
			if n := histCount(t, obs.BucketWait(), svc); n < uint64(attempts) || n > uint64(attempts+exhausted) {
				t.Errorf("service %s: %d bucket waits observed for %d attempts and %d budget refusals", svc, n, attempts, exhausted)
			}
			if g := testutil.ToFloat64(obs.InFlight().WithLabelValues(svc)); g != 0 {
				t.Errorf("service %s: %v in flight after the run", svc, g)
			}
			if g := testutil.ToFloat64(obs.Queued().WithLabelValues(svc)); g != 0 {
				t.Errorf("service %s: %v queued after the run", svc, g)
			}
		}
		if got.n["a"][sched.ClassRateLimited] == 0 || got.n["b"][sched.ClassRateLimited] == 0 {
			t.Fatalf("no rate-limited attempts on some service: %v", got.n)
		}
		if n := testutil.ToFloat64(obs.BudgetExhausted().WithLabelValues("a")) + testutil.ToFloat64(obs.BudgetExhausted().WithLabelValues("b")); n == 0 {
			t.Error("no budget exhaustion counted")
		}
		limMu.Lock()
		want, ok := lastLimit["b"]
		limMu.Unlock()
		if !ok {
			t.Fatal("service b's adaptive limit never moved")
		}
		if g := testutil.ToFloat64(obs.AdaptiveLimit().WithLabelValues("b")); g != float64(want) {
			t.Errorf("adaptive_limit_attempts{service=b} = %v, the last EventLimit said %d", g, want)
		}
		if _, err := reg.Gather(); err != nil {
			t.Errorf("gathering: %v", err) // the pedantic registry checks consistency
		}
		problems, err := testutil.GatherAndLint(reg)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range problems {
			t.Errorf("lint: %s: %s", p.Metric, p.Text)
		}
	})
}

// TestObserverGaugesMidRun holds every attempt and checks the gauges while
// calls run and wait.
func TestObserverGaugesMidRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := prometheus.NewRegistry()
		obs, err := promobs.New(reg)
		if err != nil {
			t.Fatal(err)
		}
		release := make(chan struct{})
		exec := func(ctx context.Context, call *sched.Call, n int) sched.Outcome {
			select {
			case <-release:
				return sched.Succeeded(nil)
			case <-ctx.Done():
				return sched.Outcome{Class: sched.ClassCancelled, Err: ctx.Err()}
			}
		}
		r, err := sched.NewRunner(sched.Config{Services: map[string]sched.ServiceConfig{"a": {MaxInFlight: 3}}, Hook: obs.Hook}, exec)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		turn := sched.Turn{}
		for j := range 10 {
			turn.Calls = append(turn.Calls, sched.Call{ID: fmt.Sprint(j), Service: "a"})
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			if _, err := r.Run(context.Background(), turn); err != nil {
				t.Error(err)
			}
		}()
		synctest.Wait()
		if g := testutil.ToFloat64(obs.InFlight().WithLabelValues("a")); g != 3 {
			t.Errorf("in flight = %v, want the cap of 3", g)
		}
		if g := testutil.ToFloat64(obs.Queued().WithLabelValues("a")); g != 7 {
			t.Errorf("queued = %v, want 7", g)
		}
		close(release)
		<-done
		if g := testutil.ToFloat64(obs.InFlight().WithLabelValues("a")); g != 0 {
			t.Errorf("in flight = %v after the turn", g)
		}
	})
}

// TestNewRefusesDoubleRegistration checks that a second Observer on one
// registry is an error, not a panic.
func TestNewRefusesDoubleRegistration(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := promobs.New(reg); err != nil {
		t.Fatal(err)
	}
	if _, err := promobs.New(reg); err == nil {
		t.Fatal("a second Observer registered on the same registry")
	}
}

// lifecycle is one call's events from queueing to its result, with a retry.
func lifecycle(turn sched.TurnID) []sched.Event {
	e := sched.Event{Turn: turn, CallID: "c1", Service: "api"}
	var out []sched.Event
	for _, k := range []sched.EventKind{sched.EventQueued, sched.EventAdmitted, sched.EventStarted, sched.EventFinished, sched.EventRetry,
		sched.EventAdmitted, sched.EventStarted, sched.EventFinished, sched.EventResult} {
		e.Kind = k
		e.Class = sched.ClassSuccess
		if len(out) == 3 {
			e.Class = sched.ClassRateLimited
		}
		out = append(out, e)
	}
	return out
}

// TestHookDoesNotAllocate checks that a call's events, once its service
// has been seen, allocate nothing: the Hook runs synchronously in the core.
func TestHookDoesNotAllocate(t *testing.T) {
	obs, err := promobs.New(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	evs := lifecycle(1)
	for _, e := range evs { // warm up: the service's children and the free list
		obs.Hook(e)
	}
	if n := testing.AllocsPerRun(100, func() {
		for _, e := range evs {
			obs.Hook(e)
		}
	}); n != 0 {
		t.Errorf("a call's %d events allocate %v times", len(evs), n)
	}
	if got := testutil.ToFloat64(obs.Attempts().WithLabelValues("api", "rate_limited")); got != 1+1+100 {
		t.Errorf("rate_limited attempts = %v, want one per lifecycle (102: the warm-up, AllocsPerRun's own warm-up and 100 runs)", got)
	}
}

// BenchmarkHook reports the cost of one event.
func BenchmarkHook(b *testing.B) {
	obs, err := promobs.New(prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	evs := lifecycle(1)
	b.ReportAllocs()
	for b.Loop() {
		for _, e := range evs {
			obs.Hook(e)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(evs)), "ns/event")
}
