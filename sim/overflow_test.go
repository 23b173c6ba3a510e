package sim

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/simbench/simbench/internal/simtest"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/spec"
)

// These tests build scenarios in Go, past what the loader accepts, to check
// that the engine itself never wraps a time or a count around.

const forever = time.Duration(math.MaxInt64)

// TestTinyArrivalRate: a gap of 1 ÷ 1e-300 s between arrivals does not fit
// a Duration. It used to wrap negative and start the next turn before the
// first, panicking with an index out of range in the collector's timeline.
func TestTinyArrivalRate(t *testing.T) {
	for _, arrival := range []scenarios.Arrival{scenarios.ArrivalPoisson, scenarios.ArrivalConstant} {
		t.Run(string(arrival), func(t *testing.T) {
			sc := simtest.Queue(1, simtest.ConstLatency(10*time.Millisecond), 4, 10)
			sc.Duration = 10 * time.Second
			sc.Workload.Arrival, sc.Workload.ArrivalRate = arrival, 1e-300
			e := runOne(t, sc)
			if e.m.Turns != 1 || e.m.Calls != 1 || e.cutOff {
				t.Errorf("%d turns, %d calls, cut off %v; want the one turn at 0 and nothing else", e.m.Turns, e.m.Calls, e.cutOff)
			}
		})
	}
}

// TestParetoThinkTime: a Pareto think time with α = 0.01 draws gaps far
// past the largest Duration. They used to wrap negative, as above.
func TestParetoThinkTime(t *testing.T) {
	sc := simtest.Closed(50, 0)
	sc.Workload.Think = spec.Dist[time.Duration]{Kind: spec.DistPareto, Min: time.Second, Alpha: 0.01}
	e := runOne(t, sc)
	var began int64
	for _, n := range e.Agents.SessionTurns {
		began += int64(n)
	}
	if e.m.Turns < 50 || e.m.Turns != began || e.m.Calls != e.m.Turns || e.cutOff || e.m.FailedTurns != 0 {
		t.Errorf("%d turns of %d begun, %d calls, %d failed, cut off %v", e.m.Turns, began, e.m.Calls, e.m.FailedTurns, e.cutOff)
	}
	if e.m.TurnLat.Summary().Max > 1000 {
		t.Errorf("turn latency up to %v ms, want 10", e.m.TurnLat.Summary().Max)
	}
}

// TestHugeDuration: 1,710,000 h plus the drain after it passes the largest
// Duration. The end of the drain used to wrap negative and stop the run
// before its first event: 0 turns.
func TestHugeDuration(t *testing.T) {
	sc := simtest.Closed(2, 3)
	sc.Duration = 1_710_000 * time.Hour
	e := runOne(t, sc)
	if e.m.Turns != 6 || e.m.Calls != 6 || e.cutOff {
		t.Errorf("%d turns, %d calls, cut off %v; want 6 and 6", e.m.Turns, e.m.Calls, e.cutOff)
	}
}

// TestHugeTimeouts: a parent timeout or a cancel delay that does not fit
// after the turn's start must never fire, not fire at once.
func TestHugeTimeouts(t *testing.T) {
	sc := simtest.Closed(2, 3)
	sc.Workload.Cancel = scenarios.Cancel{ParentTimeout: forever, Probability: 1, After: simtest.ConstLatency(forever - 1)}
	e := runOne(t, sc)
	if e.m.Turns != 6 || e.m.FailedTurns != 0 || e.m.Failed != 0 {
		t.Errorf("%d turns, %d failed, %d calls failed; want 6 turns, none failed", e.m.Turns, e.m.FailedTurns, e.m.Failed)
	}
}

// TestHugeTokenCounts: 1e19 tokens per call does not fit an int64. It used
// to wrap to a negative count that the service refused as malformed.
func TestHugeTokenCounts(t *testing.T) {
	sc := simtest.Closed(2, 3)
	sc.Tools[0].Tokens = spec.Constant(1e19)
	e := runOne(t, sc)
	if e.m.Calls != 6 || e.m.Failed != 0 {
		t.Errorf("%d calls, %d failed; want 6 that succeed at a service without a token limit", e.m.Calls, e.m.Failed)
	}
	sc.Services[0].TokensPerMinute = 100_000
	e = runOne(t, sc)
	if e.m.Calls != 6 || e.m.Failed != 6 {
		t.Errorf("with a token limit: %d calls, %d failed; want all 6 too large", e.m.Calls, e.m.Failed)
	}
}

// TestHugeCallCount: count = 1e308 used to convert to a negative int and
// give every turn 0 calls. The run must refuse it as too large instead.
func TestHugeCallCount(t *testing.T) {
	sc := simtest.Closed(2, 3)
	sc.Workload.Calls[0].Count = spec.Constant(1e308)
	_, err := Run(context.Background(), sc, Options{})
	var tl *TooLargeError
	if !errors.Is(err, ErrTooLarge) || !errors.As(err, &tl) {
		t.Fatalf("Run: %v, want ErrTooLarge", err)
	}
}

// TestHeavyTailedCallCountStopsTheEngine draws call counts from a Pareto
// with α = 0.01: the mean says nothing and one draw is enough to exhaust
// memory, so the engine itself refuses a turn above its limit.
func TestHeavyTailedCallCountStopsTheEngine(t *testing.T) {
	sc := simtest.Closed(2, 3)
	sc.Workload.Calls[0].Count = spec.Dist[float64]{Kind: spec.DistPareto, Min: 1, Alpha: 0.01}
	e, err := NewEngine(sc, &sc.Strategies[0])
	if err != nil {
		t.Fatal(err)
	}
	e.Agents.MaxTurnCalls = 1000
	e.Run(context.Background(), nil)
	if !errors.Is(e.Err, ErrTooLarge) {
		t.Fatalf("engine error %v, want ErrTooLarge", e.Err)
	}
	if e.m.Calls > 6*1000 {
		t.Errorf("%d calls made", e.m.Calls)
	}
}

// TestHugeRates: limits of 1e308 do not fit the fake service's int64
// limits. They used to convert to MinInt64 and be reported as negative;
// they saturate and are reported as too large.
func TestHugeRates(t *testing.T) {
	for _, set := range []func(*scenarios.Service){
		func(s *scenarios.Service) { s.RequestsPerSecond = 1e308 },
		func(s *scenarios.Service) { s.RequestsPerMinute = 1e308 },
		func(s *scenarios.Service) { s.TokensPerMinute = 1e308 },
		func(s *scenarios.Service) { s.RequestsPerSecond, s.Burst = 0.5, 1e308 },
	} {
		sc := simtest.Closed(1, 1)
		set(&sc.Services[0])
		_, err := NewEngine(sc, &sc.Strategies[0])
		if err == nil || strings.Contains(err.Error(), "negative") || !strings.Contains(err.Error(), "too large") {
			t.Errorf("newEngine: %v, want a limit reported as too large", err)
		}
	}
}

// TestTooManySessions: session events carry their session in an int32.
func TestTooManySessions(t *testing.T) {
	sc := simtest.Closed(math.MaxInt32+1, 1)
	if _, err := NewEngine(sc, &sc.Strategies[0]); !errors.Is(err, ErrTooLarge) {
		t.Errorf("newEngine: %v, want ErrTooLarge", err)
	}
}

// TestLongRampOfManySessions: 200,000 sessions over a 24 h ramp. Session
// i's start, i × Ramp ÷ Sessions, used to overflow in the product and start
// sessions at negative times, panicking in the collector's timeline.
func TestLongRampOfManySessions(t *testing.T) {
	sc := simtest.Closed(200_000, 1)
	sc.Workload.Ramp = 24 * time.Hour
	sc.Duration = 48 * time.Hour
	w := &sc.Workload
	for _, i := range []int{0, 1, 106_752, 150_000, 199_999} {
		want := time.Duration(float64(i) / 200_000 * float64(24*time.Hour))
		if got := w.SessionStart(i); got < 0 || got-want > time.Microsecond || want-got > time.Microsecond {
			t.Errorf("SessionStart(%d) = %v, want %v", i, got, want)
		}
	}
	e := runOne(t, sc)
	if e.m.Turns != 200_000 {
		t.Errorf("%d turns, want 200,000", e.m.Turns)
	}
}
