package sim

import (
	"context"
	"errors"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/simbench/simbench/internal/simtest"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/spec"
)

// inFlight is a closed-model scenario of sessions agents, each making one
// turn of calls calls to a service that answers in an hour, simulated for
// a second: when the drain ends, every call is in flight.
func inFlight(sessions, calls int, latency time.Duration) *scenarios.Scenario {
	sc := simtest.Closed(sessions, 1)
	sc.Duration = time.Second
	sc.Services[0].Latency = simtest.ConstLatency(latency)
	sc.Workload.Calls[0].Count = spec.Constant(float64(calls))
	return sc
}

// liveHeap runs sc's first strategy and returns the heap it holds at the
// end, after a full collection, in bytes.
func liveHeap(tb testing.TB, sc *scenarios.Scenario) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	e, err := NewEngine(sc, &sc.Strategies[0])
	if err != nil {
		tb.Fatal(err)
	}
	e.Run(context.Background(), nil)
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(e)
	return float64(after.HeapAlloc) - float64(before.HeapAlloc)
}

// BenchmarkLiveMemory measures the engine's live memory per call in flight,
// per turn in progress, per idle session and per strategy: the figures
// behind Estimate's bytesPer* constants. Measured (amd64, Go 1.26): about
// 480 B/call, 1,000 B/turn, 60 B/session and 1.5 MB/strategy.
func BenchmarkLiveMemory(b *testing.B) {
	const n = 20_000
	var call, turn, session, fixed float64
	for range b.N {
		fixed = liveHeap(b, inFlight(1, 1, time.Hour))
		one := liveHeap(b, inFlight(n, 1, time.Hour)) - fixed     // (n−1)(turn + call)
		ten := liveHeap(b, inFlight(n/10, 10, time.Hour)) - fixed // (n/10−1)·turn + (n−1)·call
		// Solve the two equations for turn and call (turn includes its session).
		tc := one / (n - 1)
		turn = (ten - tc*(n-1)) / (n/10 - 1 - (n - 1))
		call = tc - turn
		idle := liveHeap(b, inFlight(n, 1, 0)) - liveHeap(b, inFlight(1, 1, 0))
		session = idle / (n - 1)
		turn -= session
	}
	b.ReportMetric(call, "B/call")
	b.ReportMetric(turn, "B/turn")
	b.ReportMetric(session, "B/session")
	b.ReportMetric(fixed, "B/strategy")
}

// TestEstimateBoundsLiveMemory checks the estimate against the heap a run
// really holds with every call in flight: it must not be below it, nor
// more than a few times above it.
func TestEstimateBoundsLiveMemory(t *testing.T) {
	tests := []struct {
		sessions, calls int
	}{
		{20_000, 1},
		{2_000, 10},
		{200, 100},
	}
	for _, tt := range tests {
		sc := inFlight(tt.sessions, tt.calls, time.Hour)
		est, err := Estimate(sc, Options{})
		if err != nil {
			t.Fatal(err)
		}
		got := liveHeap(t, sc)
		if est.LiveCalls != float64(tt.sessions*tt.calls) {
			t.Errorf("%d×%d: estimated %v live calls", tt.sessions, tt.calls, est.LiveCalls)
		}
		if est.PeakBytes < got || est.PeakBytes > 3*got {
			t.Errorf("%d sessions × %d calls: estimated %.0f bytes, measured %.0f", tt.sessions, tt.calls, est.PeakBytes, got)
		}
	}
}

func TestEstimateArithmetic(t *testing.T) {
	// Open: 250 turns/s for 100 s of 8 calls, two strategies.
	sc := engineScenario(200_000)
	sc.Strategies = append(sc.Strategies, sc.Strategies[0])
	sc.Strategies[1].Name = "again"
	est, err := Estimate(sc, Options{Parallel: 1})
	if err != nil {
		t.Fatal(err)
	}
	if est.Turns != 250*100+1 || est.CallsPerTurn != 8 || est.Calls != 8*est.Turns || est.Strategies != 2 || est.Parallel != 1 {
		t.Errorf("estimate %+v", est)
	}
	if est.Events != 2*est.Calls*eventsPerCall {
		t.Errorf("events %v", est.Events)
	}
	// The strategy keeps up (1024 in flight, 2,500 calls/s at 150,000 RPM),
	// so the calls live at once follow Little's law: 2,000 calls/s × the
	// lognormal's mean latency.
	mean := meanOf(sc.Services[0].Latency) / 1e9
	if want := 250 * mean * 8; math.Abs(est.LiveCalls-want) > 1e-6*want {
		t.Errorf("live calls %v, want %v", est.LiveCalls, want)
	}
	// A sequential strategy falls behind: the backlog grows for the whole run.
	sc.Strategies[1].MaxInFlight = 1
	est, _ = Estimate(sc, Options{})
	if est.LiveCalls < 0.9*est.Calls {
		t.Errorf("sequential: live calls %v of %v", est.LiveCalls, est.Calls)
	}
	// Closed: 10 sessions of at most 3 turns.
	est, _ = Estimate(simtest.Closed(10, 3), Options{})
	if est.Turns != 30 || est.LiveCalls != 10 {
		t.Errorf("closed: %+v", est)
	}
}

// TestRunRefusesAboveTheBudget checks that Run refuses before simulating a
// run whose estimate passes the budget, with the numbers in the error, and
// runs it when the budget allows.
func TestRunRefusesAboveTheBudget(t *testing.T) {
	sc := inFlight(2_000, 10, 10*time.Millisecond)
	est, _ := Estimate(sc, Options{})
	_, err := Run(context.Background(), sc, Options{MaxMemory: int64(est.PeakBytes) - 1})
	var tl *TooLargeError
	if !errors.As(err, &tl) || !errors.Is(err, ErrTooLarge) || tl.Budget != int64(est.PeakBytes)-1 {
		t.Fatalf("Run: %v, want a *TooLargeError", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "20000 calls live at once") || !strings.Contains(msg, "above the budget of") {
		t.Errorf("error %q does not give the numbers", msg)
	}
	res, err := Run(context.Background(), sc, Options{MaxMemory: int64(est.PeakBytes) + 1})
	// The 20,000 calls are all live at 0; those the cap of 4 has not run
	// by the end of the second are unfinished.
	if s := res.Strategies[0]; err != nil || s.Calls == 0 || s.Turns+s.UnfinishedTurns != 2_000 {
		t.Fatalf("within the budget: %v", err)
	}
	if _, err := Run(context.Background(), sc, Options{MaxMemory: -1}); err != nil {
		t.Fatalf("no budget: %v", err)
	}
}

// TestEstimateOnEveryBuiltin compares the estimate of every built-in
// scenario (cut to 1 minute; TestLongEstimateOnEveryBuiltin cuts to 2
// minutes) with a run: the estimate of turns and calls is an upper bound
// (it assumes no strategy holds the workload back) within a small factor of
// the busiest strategy, and every built-in fits the default budget with
// room to spare.
func TestEstimateOnEveryBuiltin(t *testing.T) {
	checkEstimateOnEveryBuiltin(t, time.Minute)
}

// checkEstimateOnEveryBuiltin is TestEstimateOnEveryBuiltin on every
// built-in cut to at most d.
func checkEstimateOnEveryBuiltin(t *testing.T, d time.Duration) {
	for _, info := range scenarios.List() {
		t.Run(info.Name, func(t *testing.T) {
			sc, err := scenarios.Builtin(info.Name)
			if err != nil {
				t.Fatal(err)
			}
			sc.Duration = min(sc.Duration, d)
			est, err := Estimate(sc, Options{})
			if err != nil {
				t.Fatal(err)
			}
			res, err := Run(context.Background(), sc, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var turns, calls int64
			for _, s := range res.Strategies {
				turns = max(turns, s.Turns+s.UnfinishedTurns)
				calls = max(calls, s.Calls)
			}
			if est.Turns < float64(turns) || est.Turns > 4*float64(turns) || est.Calls < float64(calls) || est.Calls > 4*float64(calls) {
				t.Errorf("estimated %.0f turns and %.0f calls; the busiest strategy made %d and %d", est.Turns, est.Calls, turns, calls)
			}
			if est.PeakBytes > float64(DefaultMaxMemory)/100 {
				t.Errorf("estimated %s", bytesString(est.PeakBytes))
			}
		})
	}
}
