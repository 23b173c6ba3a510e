package sched

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// limitStep is one EventLimit: the time and the new limit.
type limitStep struct {
	at    time.Duration
	limit int
}

// adaptiveRun drives n calls to service "s" through a Core configured with
// cfg, recording every limit change and the most attempts in flight.
func adaptiveRun(t *testing.T, cfg Config, n int, exec func(call *Call, k int, now time.Duration) (time.Duration, Outcome)) ([]limitStep, *vdriver) {
	t.Helper()
	var steps []limitStep
	cfg.Hook = func(e Event) {
		if e.Kind == EventLimit {
			if e.Service != "s" {
				t.Fatalf("limit event for service %q", e.Service)
			}
			steps = append(steps, limitStep{e.At, e.N})
		}
	}
	d := newDriver(t, cfg, exec)
	calls := make([]Call, n)
	for i := range calls {
		calls[i] = Call{ID: fmt.Sprint("c", i), Service: "s"}
	}
	d.submit(calls...)
	d.run(time.Hour)
	if len(d.turns) != 1 {
		t.Fatalf("turn did not finish: %d turns done", len(d.turns))
	}
	return steps, d
}

// TestAIMDHalvesAndGrowsBack runs a service saturated with 100 ms calls in
// lock-step rounds: the limit starts at 8 and gains one per round trip; the
// round sent at 500 ms (13 attempts) is refused whole with 429s, which cut
// the limit once, to ⌊13 × 0.5⌋ = 6, not 13 times; then it grows by one per
// round trip again.
func TestAIMDHalvesAndGrowsBack(t *testing.T) {
	const rtt = 100 * time.Millisecond
	cfg := Config{
		Services: map[string]ServiceConfig{"s": {Adaptive: &AdaptiveConfig{Algorithm: AlgorithmAIMD, Initial: 8, Min: 1, Max: 64}}},
		Retry:    RetryPolicy{MaxAttempts: 2},
	}
	refused := 0
	steps, d := adaptiveRun(t, cfg, 200, func(_ *Call, _ int, now time.Duration) (time.Duration, Outcome) {
		if now == 5*rtt {
			refused++
			return rtt, Outcome{Class: ClassRateLimited, Status: 429}
		}
		return rtt, Succeeded(nil)
	})
	if refused != 13 {
		t.Fatalf("%d attempts refused at 500 ms, want the 13 of that round", refused)
	}
	var want []limitStep
	for k := 1; k <= 5; k++ { // 9..13 at 100..500 ms
		want = append(want, limitStep{time.Duration(k) * rtt, 8 + k})
	}
	want = append(want, limitStep{6 * rtt, 6})
	for k := 1; k <= 4; k++ { // 7..10 at 700..1000 ms
		want = append(want, limitStep{time.Duration(6+k) * rtt, 6 + k})
	}
	if len(steps) < len(want) || !slices.Equal(steps[:len(want)], want) {
		t.Fatalf("limit trace starts %v, want %v", steps[:min(len(steps), len(want))], want)
	}
	if got := d.core.Limit("s"); got != steps[len(steps)-1].limit {
		t.Fatalf("Limit = %d, last event says %d", got, steps[len(steps)-1].limit)
	}
	// Attempts in flight never pass the limit in force when they start.
	limitAt := func(at time.Duration) int {
		l := 8
		for _, s := range steps {
			if s.at <= at {
				l = s.limit
			}
		}
		return l
	}
	running := map[time.Duration]int{}
	for _, s := range d.starts {
		running[s.at]++
		if running[s.at] > limitAt(s.at)+1 { // +1: the start right before an increase
			t.Fatalf("%d attempts started at %v with a limit of %d", running[s.at], s.at, limitAt(s.at))
		}
	}
}

// TestAdaptiveNeverAboveStaticCap lets AIMD grow on an always-successful
// service and checks the limit stops at the tighter of the static caps.
func TestAdaptiveNeverAboveStaticCap(t *testing.T) {
	for _, tc := range []struct {
		name          string
		global, local int
		want          int
	}{
		{"service cap", 12, 10, 10},
		{"global cap", 5, 10, 5},
		{"max", 0, 0, 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, alg := range []Algorithm{AlgorithmAIMD, AlgorithmGradient} {
				cfg := Config{
					MaxInFlight: tc.global,
					Services:    map[string]ServiceConfig{"s": {MaxInFlight: tc.local, Adaptive: &AdaptiveConfig{Algorithm: alg, Initial: 4, Max: 20}}},
				}
				steps, d := adaptiveRun(t, cfg, 3000, nil)
				for _, s := range steps {
					if s.limit > tc.want {
						t.Fatalf("algorithm %d: limit %d at %v above the cap %d", alg, s.limit, s.at, tc.want)
					}
				}
				if got := d.core.Limit("s"); got != tc.want {
					t.Fatalf("algorithm %d: limit settles at %d, want %d", alg, got, tc.want)
				}
				if d.peak != tc.want {
					t.Fatalf("algorithm %d: peak in flight %d, want %d", alg, d.peak, tc.want)
				}
			}
		})
	}
}

// TestGradientFollowsLatency runs a saturated service whose latency triples
// from 10 s to 20 s: the gradient limit, at its ceiling before, falls by at
// least a third soon after the rise and is back at its ceiling by the end.
func TestGradientFollowsLatency(t *testing.T) {
	cfg := Config{Services: map[string]ServiceConfig{"s": {Adaptive: &AdaptiveConfig{Algorithm: AlgorithmGradient, Initial: 10, Max: 50}}}}
	steps, _ := adaptiveRun(t, cfg, 20000, func(_ *Call, _ int, now time.Duration) (time.Duration, Outcome) {
		if now >= 10*time.Second && now < 20*time.Second {
			return 300 * time.Millisecond, Succeeded(nil)
		}
		return 100 * time.Millisecond, Succeeded(nil)
	})
	limitAt := func(at time.Duration) int {
		l := 10
		for _, s := range steps {
			if s.at <= at {
				l = s.limit
			}
		}
		return l
	}
	lowest := 50
	for _, s := range steps {
		if s.at >= 10*time.Second && s.at < 13*time.Second {
			lowest = min(lowest, s.limit)
		}
	}
	t.Logf("limit before %d, lowest after the rise %d, at 25 s %d, end %d", limitAt(10*time.Second), lowest, limitAt(25*time.Second), steps[len(steps)-1].limit)
	if got := limitAt(10 * time.Second); got != 50 {
		t.Fatalf("limit before the rise %d, want the ceiling 50", got)
	}
	if lowest > 33 {
		t.Fatalf("lowest limit after the rise %d, want at most 33", lowest)
	}
	if got := limitAt(25 * time.Second); got != 50 {
		t.Fatalf("limit 5 s after the latency fell back %d, want 50", got)
	}
}

// TestGradientCutsOnRateLimit checks that a 429 cuts the gradient limit by
// the backoff factor, once for the round.
func TestGradientCutsOnRateLimit(t *testing.T) {
	cfg := Config{
		Services: map[string]ServiceConfig{"s": {Adaptive: &AdaptiveConfig{Algorithm: AlgorithmGradient, Initial: 40, Max: 40}}},
		Retry:    RetryPolicy{MaxAttempts: 2},
	}
	steps, _ := adaptiveRun(t, cfg, 200, func(_ *Call, _ int, now time.Duration) (time.Duration, Outcome) {
		if now == 0 {
			return 100 * time.Millisecond, Outcome{Class: ClassRateLimited, Status: 429}
		}
		return 100 * time.Millisecond, Succeeded(nil)
	})
	if len(steps) == 0 || steps[0] != (limitStep{100 * time.Millisecond, 20}) {
		t.Fatalf("limit trace %v, want it to start with 20 at 100ms", steps)
	}
}

// TestAdaptiveDeterministic runs the same random workload twice per
// algorithm and wants the same limit trace.
func TestAdaptiveDeterministic(t *testing.T) {
	for _, alg := range []Algorithm{AlgorithmAIMD, AlgorithmGradient} {
		trace := func() []limitStep {
			rng := rand.New(rand.NewPCG(7, 9))
			cfg := Config{
				MaxInFlight: 40,
				Services:    map[string]ServiceConfig{"s": {Adaptive: &AdaptiveConfig{Algorithm: alg}}},
				Retry:       RetryPolicy{Backoff: BackoffFullJitter, Base: 50 * time.Millisecond, Cap: time.Second, MaxAttempts: 4},
			}
			steps, _ := adaptiveRun(t, cfg, 3000, func(*Call, int, time.Duration) (time.Duration, Outcome) {
				lat := time.Duration(20+rng.IntN(300)) * time.Millisecond
				if rng.IntN(20) == 0 {
					return lat, Outcome{Class: ClassRateLimited, Status: 429}
				}
				return lat, Succeeded(nil)
			})
			return steps
		}
		a, b := trace(), trace()
		if len(a) < 10 {
			t.Fatalf("algorithm %d: only %d limit changes; the workload does not exercise the limit", alg, len(a))
		}
		if !slices.Equal(a, b) {
			t.Fatalf("algorithm %d: two runs of the same inputs gave different limit traces", alg)
		}
	}
}

// TestAdaptiveConfigValidated checks impossible adaptive settings are refused.
func TestAdaptiveConfigValidated(t *testing.T) {
	for _, a := range []AdaptiveConfig{
		{},
		{Algorithm: AlgorithmAIMD, Min: 10, Max: 5},
		{Algorithm: AlgorithmAIMD, Backoff: 1},
		{Algorithm: AlgorithmGradient, Tolerance: 0.5},
		{Algorithm: AlgorithmGradient, Initial: -1},
	} {
		if _, err := New(Config{Services: map[string]ServiceConfig{"s": {Adaptive: &a}}}); err == nil {
			t.Errorf("New accepted %+v", a)
		}
	}
}

// TestGradientGrowsAdditivelyAfterRateLimit feeds the gradient limit a
// 429 and then a steady stream of successes at one latency, with the limit
// in use, as a rate-limited server that refuses at once gives: latency
// holds, so only the growth allowance moves the limit. After the cut to 20
// the limit may regain at most one per round trip (20 completions), where
// the allowance alone (Smoothing × QueueSize = 0.8 per completion) would
// take it back to the ceiling within two round trips. A latency-driven
// fall below the cut level still grows back at the allowance's pace.
func TestGradientGrowsAdditivelyAfterRateLimit(t *testing.T) {
	l := newLimiter(&AdaptiveConfig{Algorithm: AlgorithmGradient, Initial: 40, Max: 40}, 0)
	now := time.Second
	rtt := 100 * time.Millisecond
	for range 50 {
		now += time.Millisecond
		l.Succeeded(now, now-rtt, l.Cap())
	}
	l.Refused(now, now-rtt)
	if l.Cap() != 20 {
		t.Fatalf("limit %d after the 429, want 20", l.Cap())
	}
	for range 40 { // two round trips at about 20 in flight
		now += time.Millisecond
		l.Succeeded(now, now-rtt, l.Cap())
	}
	if got := l.Cap(); got > 22 {
		t.Fatalf("limit %d two round trips after the 429 cut it to 20, want at most 22", got)
	}
	// Latency triples: the limit falls below the cut level, then, when the
	// latency is back, regrows to it at the allowance's pace.
	for range 40 {
		now += time.Millisecond
		l.Succeeded(now, now-3*rtt, l.Cap())
	}
	low := l.Cap()
	if low >= 20 {
		t.Fatalf("limit %d after latency tripled, want it below 20", low)
	}
	for range 10 {
		now += time.Millisecond
		l.Succeeded(now, now-rtt, l.Cap())
	}
	if got := l.Cap(); got < min(20, low+5) {
		t.Fatalf("limit %d ten completions after latency fell back from %d, want it regrowing fast towards 20", got, low)
	}
}
