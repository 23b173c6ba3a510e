package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"

	osproc "github.com/simbench/simbench/internal/proc"
	"github.com/simbench/simbench/internal/simtest"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/spec"
)

// engineScenario is an open-model scenario of n calls in turns of 8,
// arriving at 250 turns/s against a 150,000 RPM service with lognormal
// latency and the default network delay (as a scenario file gets it), run
// by a bounded, token-paced strategy with jittered retries.
func engineScenario(n int) *scenarios.Scenario {
	sc := simtest.Queue(250, spec.Dist[time.Duration]{Kind: spec.DistLognormal, P50: 300 * time.Millisecond, P95: 900 * time.Millisecond}, 1024, n/8)
	sc.Workload.Calls[0].Count = spec.Constant(8.0)
	sc.Services[0].RequestsPerMinute = 150_000
	sc.Services[0].NetworkDelay = scenarios.DefaultNetworkDelay
	sc.Strategies[0].TokenBucket = true
	sc.Strategies[0].Headroom = 0.9
	sc.Strategies[0].Retry = scenarios.Retry{Backoff: sched.BackoffFullJitter, Base: time.Second, Cap: 30 * time.Second, Attempts: 5, HonorRetryAfter: true}
	return sc
}

// BenchmarkEngine measures the engine in CPU time per simulated call
// (cpu-ns/call: user and system time of the whole process, the garbage
// collector's included; 10^9 over it is calls per CPU-second) and
// allocations per call, on two workloads:
//
//   - scenario: engineScenario's million calls in turns of 8 (target
//     ≥ 1 M calls per CPU-second, so ≤ 1,000 cpu-ns/call, and ≤ 4
//     allocations per call);
//   - mm20-bare, then mm20: M/M/20 (Poisson arrivals at 40/s, exponential
//     service of mean 0.4 s, 500,000 one-call turns), first as the plainest
//     container/heap event loop (bareMMC), the reference, then through the
//     engine; mm20 reports its calls per CPU-second over the bare loop's,
//     measured in the same run, as ratio (target ≥ 0.3).
func BenchmarkEngine(b *testing.B) {
	defer debug.SetGCPercent(debug.SetGCPercent(GCPercent)) // as the binary runs
	b.Run("scenario", func(b *testing.B) {
		benchEngine(b, engineScenario(1_000_000))
	})
	const lambda, mean, servers, calls = 40, 0.4, 20, 500_000
	var bareCPU float64 // the bare loop's CPU-ns per call
	b.Run("mm20-bare", func(b *testing.B) {
		cpu := newCPUMeter()
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			bareMMC(rand.New(rand.NewPCG(1, uint64(i))), lambda, 1/mean, servers, calls)
		}
		bareCPU = cpu.since() / float64(b.N*calls)
		b.ReportMetric(bareCPU, "cpu-ns/call")
	})
	b.Run("mm20", func(b *testing.B) {
		sc := simtest.Queue(lambda, spec.Dist[time.Duration]{Kind: spec.DistExponential, Mean: time.Duration(mean * float64(time.Second))}, servers, calls)
		perCall := benchEngine(b, sc)
		if bareCPU > 0 {
			b.ReportMetric(bareCPU/perCall, "ratio")
		}
	})
}

// benchEngine runs sc's first strategy b.N times, reports calls per wall
// second, CPU-ns, events and allocations per call and the collector's
// share of the CPU, and returns the CPU-ns per call.
func benchEngine(b *testing.B, sc *scenarios.Scenario) float64 {
	var calls, events int64
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ReportAllocs()
	cpu, gc := newCPUMeter(), newGCMeter()
	for i := 0; i < b.N; i++ {
		e, err := NewEngine(sc, &sc.Strategies[0])
		if err != nil {
			b.Fatal(err)
		}
		e.Run(context.Background(), nil)
		calls += e.m.Calls
		events += e.processed
	}
	perCall := cpu.since() / float64(calls)
	b.StopTimer()
	b.ReportMetric(gc.share(), "gc-cpu-%")
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(calls)/b.Elapsed().Seconds(), "calls/s")
	b.ReportMetric(perCall, "cpu-ns/call")
	b.ReportMetric(float64(events)/float64(calls), "events/call")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(calls), "allocs/call")
	return perCall
}

// BenchmarkEngineProcesses is BenchmarkEngine's scenario run by six
// processes under each quota mode: what the processes cost the engine,
// and (shared) the round trips per call to the modelled quota store.
func BenchmarkEngineProcesses(b *testing.B) {
	defer debug.SetGCPercent(debug.SetGCPercent(GCPercent)) // as the binary runs
	for _, q := range []scenarios.Quota{
		{Mode: scenarios.QuotaFull},
		{Mode: scenarios.QuotaSplit},
		{Mode: scenarios.QuotaShared, RTT: time.Millisecond},
		{Mode: scenarios.QuotaShared, RTT: time.Millisecond, Lease: 250 * time.Millisecond, LeaseMax: 1.0 / 6},
	} {
		name := q.Mode
		if q.Lease > 0 {
			name += "-lease"
		}
		b.Run(name, func(b *testing.B) {
			sc := engineScenario(1_000_000)
			sc.Workload.Processes, sc.Workload.ProcessShares = 6, []float64{3, 2, 1, 1, 1, 1}
			sc.Strategies[0].Quota = q
			var calls, trips int64
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				e, err := NewEngine(sc, &sc.Strategies[0])
				if err != nil {
					b.Fatal(err)
				}
				e.Run(context.Background(), nil)
				calls += e.m.Calls
				for p := range e.procs {
					trips += e.procs[p].quota.roundTrips()
				}
			}
			b.ReportMetric(float64(calls)/b.Elapsed().Seconds(), "calls/s")
			b.ReportMetric(float64(trips)/float64(calls), "round-trips/call")
		})
	}
}

// BenchmarkEngineAdaptive is BenchmarkEngine with an AIMD limit under the
// cap instead of the token bucket, so the limit steps and its trace is
// recorded: what an adaptive strategy costs the engine.
func BenchmarkEngineAdaptive(b *testing.B) {
	defer debug.SetGCPercent(debug.SetGCPercent(GCPercent)) // as the binary runs
	sc := engineScenario(1_000_000)
	sc.Strategies[0].TokenBucket = false
	sc.Strategies[0].Adaptive = &scenarios.Adaptive{Algorithm: sched.AlgorithmAIMD, Initial: 64, Max: 1024}
	var calls int64
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		e, err := NewEngine(sc, &sc.Strategies[0])
		if err != nil {
			b.Fatal(err)
		}
		e.Run(context.Background(), nil)
		calls += e.m.Calls
		if i == 0 {
			b.ReportMetric(float64(len(e.limits.Trace()["s"])), "trace-points")
		}
	}
	b.ReportMetric(float64(calls)/b.Elapsed().Seconds(), "calls/s")
}

// tier3At is the built-in tier3 scenario grown to sessions agents: every
// limit, the burst and bounded-64's cap grow with the sessions (×125 at
// 10,000, so 1.25 M RPM and 1.25 × 10^9 TPM), so the load per agent and per
// unit of limit stays tier3's. Only the bounded strategy is kept.
func tier3At(tb testing.TB, sessions int) *scenarios.Scenario {
	sc, err := scenarios.Builtin("tier3")
	if err != nil {
		tb.Fatal(err)
	}
	f := float64(sessions) / float64(sc.Workload.Sessions)
	sc.Workload.Sessions = sessions
	sc.Services = append([]scenarios.Service(nil), sc.Services...)
	for i := range sc.Services {
		s := &sc.Services[i]
		s.RequestsPerMinute *= f
		s.TokensPerMinute *= f
		s.Burst *= f
	}
	for _, st := range sc.Strategies {
		if st.Name == "bounded-64" {
			st.MaxInFlight = int(float64(st.MaxInFlight) * f)
			sc.Strategies = []scenarios.Strategy{st}
			return sc
		}
	}
	tb.Fatal("tier3 has no bounded-64")
	return nil
}

// heapNow reads the heap that survived the latest collection (the live
// heap) and the heap's objects now, live or not yet collected, in bytes:
// runtime/metrics, which does not stop the world as runtime.ReadMemStats
// does.
func heapNow() (live, objects uint64) {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64(), s[1].Value.Uint64()
}

// scaleRun runs sc's first strategy b.N times and reports CPU-ns per call,
// the collector's share of the CPU, the calls per run, and, sampled every
// 16,384 events, the peaks of the heap's objects (peak-heap-MB) and of the
// live heap (peak-live-MB, what the work in flight holds: the collector
// lets the heap grow to GCPercent% above it before it collects).
func scaleRun(b *testing.B, sc *scenarios.Scenario, minCalls int64) {
	var peak, peakLive uint64
	var calls int64
	cpu, gc := newCPUMeter(), newGCMeter()
	for i := 0; i < b.N; i++ {
		e, err := NewEngine(sc, &sc.Strategies[0])
		if err != nil {
			b.Fatal(err)
		}
		e.Run(context.Background(), func(time.Duration) {
			live, objects := heapNow()
			peak, peakLive = max(peak, objects), max(peakLive, live)
		})
		if e.m.Calls < minCalls {
			b.Fatalf("only %d calls", e.m.Calls)
		}
		calls += e.m.Calls
	}
	b.ReportMetric(cpu.since()/float64(calls), "cpu-ns/call")
	b.ReportMetric(gc.share(), "gc-cpu-%")
	b.ReportMetric(float64(calls)/float64(b.N), "calls")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(peakLive)/(1<<20), "peak-live-MB")
}

// BenchmarkEngineSessions is BenchmarkEngine10M's tier3 at 100 and 1,000
// agents (about 109,000 and 1.09 M calls): with BenchmarkEngine10M, how
// the CPU time per call grows with the agents whose state is in flight
// (measured: 1,650, 1,900–2,300 and 2,900–4,100 cpu-ns/call at 100, 1,000
// and 10,000 agents). The work per call is the same at every size; what
// grows is the state the run keeps in flight, some 4 KB per agent, which
// outgrows the processor's caches, so more of the engine's, the
// scheduler's and the services' reads of it wait for memory.
func BenchmarkEngineSessions(b *testing.B) {
	defer debug.SetGCPercent(debug.SetGCPercent(GCPercent)) // as the binary runs
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			scaleRun(b, tier3At(b, n), int64(n)*1000)
		})
	}
}

// BenchmarkEngine10M runs tier3 at 10,000 agents (tier3At), some 11
// million calls, once, and reports what scaleRun reports (CPU-ns per call:
// target ≤ 2,000) and the process's peak resident set (VmHWM; target under
// 500 MB). It takes tens of seconds: the gate skips it (Makefile
// BENCHSKIP); make bench-scale runs it alone, so that the peak resident
// set is the run's own.
func BenchmarkEngine10M(b *testing.B) {
	defer debug.SetGCPercent(debug.SetGCPercent(GCPercent)) // as the binary runs
	scaleRun(b, tier3At(b, 10_000), 10_000_000)
	if hwm, ok := osproc.SelfPeakRSS(); ok {
		b.ReportMetric(float64(hwm)/(1<<20), "peak-rss-MB")
	}
}
