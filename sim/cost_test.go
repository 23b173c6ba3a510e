package sim

import (
	"container/heap"
	"math"
	"math/rand/v2"
	"runtime/metrics"
	"testing"
	"time"

	osproc "github.com/simbench/simbench/internal/proc"
)

// bareEvent is one event of the bare M/M/c loop: an arrival or a departure
// at a time in seconds.
type bareEvent struct {
	at     float64
	depart bool
}

// bareHeap is a container/heap of bare events by time.
type bareHeap []bareEvent

func (h bareHeap) Len() int           { return len(h) }
func (h bareHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h bareHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *bareHeap) Push(x any)        { *h = append(*h, x.(bareEvent)) }
func (h *bareHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// bareMMC is the reference the engine is measured against: the plainest
// Go M/M/c simulation, a container/heap event loop of Poisson arrivals at
// lambda per second served by c servers of exponential service time with
// mean 1/mu seconds, until n calls have departed. It returns the calls'
// mean time in system in seconds (by Little's law, the time-average number
// in system over the arrival rate), so that the loop cannot be optimised
// away and a test can check it against Erlang C.
func bareMMC(rng *rand.Rand, lambda, mu float64, c, n int) float64 {
	h := &bareHeap{{at: rng.ExpFloat64() / lambda}}
	busy, waiting, done := 0, 0, 0
	var area, now float64
	for done < n {
		ev := heap.Pop(h).(bareEvent)
		area += float64(busy+waiting) * (ev.at - now)
		now = ev.at
		if ev.depart {
			done++
			if waiting > 0 {
				waiting--
				heap.Push(h, bareEvent{at: now + rng.ExpFloat64()/mu, depart: true})
			} else {
				busy--
			}
			continue
		}
		heap.Push(h, bareEvent{at: now + rng.ExpFloat64()/lambda})
		if busy < c {
			busy++
			heap.Push(h, bareEvent{at: now + rng.ExpFloat64()/mu, depart: true})
		} else {
			waiting++
		}
	}
	return area / now / lambda
}

// cpuMeter measures the CPU time the process spends from its start.
type cpuMeter struct{ start time.Duration }

// newCPUMeter starts a cpuMeter now.
func newCPUMeter() cpuMeter { return cpuMeter{start: osproc.SelfCPU()} }

// since returns the CPU nanoseconds spent since the meter started.
func (m cpuMeter) since() float64 { return float64(osproc.SelfCPU() - m.start) }

// The reference loop is an M/M/c simulation: its mean time in system agrees
// with Erlang C (λ = 40/s, mean service 0.4 s, 20 servers: ρ = 0.8).
func TestBareMMCMatchesErlangC(t *testing.T) {
	got := bareMMC(rand.New(rand.NewPCG(1, 0)), 40, 2.5, 20, 200_000)
	want := erlangC(40, 2.5, 20)
	if math.Abs(got-want)/want > 0.03 {
		t.Errorf("bare M/M/20: mean time in system %.4fs, Erlang C says %.4fs", got, want)
	}
}

// gcMeter measures the share of the process's CPU time the garbage
// collector takes (runtime/metrics' estimate) from its start.
type gcMeter struct{ gc, total float64 }

// gcCPU reads the collector's and the process's CPU seconds so far.
func gcCPU() (gc, total float64) {
	s := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}, {Name: "/cpu/classes/total:cpu-seconds"}}
	metrics.Read(s)
	return s[0].Value.Float64(), s[1].Value.Float64()
}

// newGCMeter starts a gcMeter now.
func newGCMeter() gcMeter {
	gc, total := gcCPU()
	return gcMeter{gc, total}
}

// share returns the collector's share of the CPU time since the meter
// started, in percent.
func (m gcMeter) share() float64 {
	gc, total := gcCPU()
	if total <= m.total {
		return 0
	}
	return 100 * (gc - m.gc) / (total - m.total)
}

// The engine allocates at most 4 times per simulated call (the target
// BenchmarkEngine reports against), counted over a whole run of
// BenchmarkEngine's scenario at 40,000 calls (about 38,300 finish by the
// run's duration; the rest are unfinished): turns, their calls and the
// scheduler's per-turn state, nothing per attempt or per event.
func TestEngineAllocationsPerCall(t *testing.T) {
	sc := engineScenario(40_000)
	var calls int64
	allocs := testing.AllocsPerRun(1, func() {
		e, err := NewEngine(sc, &sc.Strategies[0])
		if err != nil {
			t.Fatal(err)
		}
		e.Run(t.Context(), nil)
		calls = e.m.Calls
	})
	if perCall := allocs / float64(calls); calls < 35_000 || perCall > 4 {
		t.Errorf("%.0f allocations for %d calls: %.2f a call, want at most 4", allocs, calls, perCall)
	} else {
		t.Logf("%.0f allocations for %d calls: %.3f a call", allocs, calls, perCall)
	}
}
