package sched

import (
	"fmt"
	"syscall"
	"testing"
	"time"
)

// cpuTime returns the CPU time the process has used, user and system.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCore measures scheduling decisions for 1,000-call turns under a
// global cap, a per-service cap and both buckets, driven in virtual time with
// a fixed 400 ms latency. decisions/cpu-s is the figure to compare (target
// ≥ 3 M/s); calls/s is the same count per second of the wall clock.
func BenchmarkCore(b *testing.B) { benchCore(b, nil, nil, false) }

// BenchmarkCoreAdaptive is BenchmarkCore with an AIMD limit on the service
// (target ≥ 2 M calls/s as well).
func BenchmarkCoreAdaptive(b *testing.B) {
	benchCore(b, &AdaptiveConfig{Algorithm: AlgorithmAIMD, Initial: 8}, nil, false)
}

// BenchmarkCoreGradient is BenchmarkCore with a gradient limit on the service.
func BenchmarkCoreGradient(b *testing.B) {
	benchCore(b, &AdaptiveConfig{Algorithm: AlgorithmGradient, Initial: 8}, nil, false)
}

// BenchmarkCoreBudgetSync is BenchmarkCoreAdaptive with a retry budget and
// header sync on, every answer reporting remaining counts that lower the
// request bucket from time to time (target ≥ 2 M calls/s as well).
func BenchmarkCoreBudgetSync(b *testing.B) {
	benchCore(b, &AdaptiveConfig{Algorithm: AlgorithmAIMD, Initial: 8}, &RetryBudget{Ratio: 0.1, MinPerSecond: 1}, true)
}

func benchCore(b *testing.B, adaptive *AdaptiveConfig, budget *RetryBudget, sync bool) {
	cfg := Config{
		MaxInFlight: 64,
		Services: map[string]ServiceConfig{"llm": {
			MaxInFlight: 48, RequestsPerMinute: 600_000, RequestBurst: 100,
			TokensPerMinute: 600_000_000, Headroom: 0.9, Adaptive: adaptive,
			RetryBudget: budget, HeaderSync: sync,
		}},
		Retry: RetryPolicy{Backoff: BackoffFullJitter, Base: 100 * time.Millisecond, Cap: 5 * time.Second},
	}
	turn := make([]Call, 1000)
	for i := range turn {
		turn[i] = Call{ID: fmt.Sprint("c", i), Tool: "search", Service: "llm", Tokens: 1000}
	}
	c, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	type done struct {
		at time.Duration
		a  AttemptID
	}
	var (
		now     time.Duration
		queue   []done // fixed latency: completions come in start order
		head    int
		wake    time.Duration
		hasWake bool
		acts    []Action
	)
	const latency = 400 * time.Millisecond
	var answer Outcome
	if sync {
		answer.Quota = ServerQuota{
			Requests: QuotaLeft{Known: true, Remaining: 60, Reset: time.Second},
			Tokens:   QuotaLeft{Known: true, Remaining: 9_000_000, Reset: time.Second},
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime(b)
	for i := 0; i < b.N; i++ {
		if _, err := c.Submit(now, Turn{Calls: turn}); err != nil {
			b.Fatal(err)
		}
		for finished := false; !finished; {
			acts = c.SwapActions(acts)
			for _, a := range acts {
				switch a.Kind {
				case ActStart:
					queue = append(queue, done{now + latency, a.Attempt})
				case ActWake:
					wake, hasWake = a.At, true
				case ActTurnDone:
					finished = true
				}
			}
			if finished {
				break
			}
			if head < len(queue) && (!hasWake || queue[head].at <= wake) {
				d := queue[head]
				head++
				now = max(now, d.at)
				c.Complete(now, d.a, answer)
			} else if hasWake {
				hasWake = false
				now = max(now, wake)
				c.Advance(now)
			} else {
				b.Fatal("stalled")
			}
		}
		queue, head = queue[:0], 0
	}
	b.ReportMetric(float64(b.N*len(turn))/b.Elapsed().Seconds(), "calls/s")
	// One admission decision per call (no call here is retried), per
	// second of the process's CPU, which the machine's other load does not
	// inflate as it does the wall clock.
	b.ReportMetric(float64(b.N*len(turn))/(cpuTime(b)-cpu0).Seconds(), "decisions/cpu-s")
}
