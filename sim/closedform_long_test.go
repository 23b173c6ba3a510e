//go:build long

package sim

import (
	"fmt"
	"testing"

	"github.com/simbench/simbench/internal/simtest"
)

// Non-preemptive priority (Cobham): two classes share one server (a
// service capped at one in flight), the interactive class admitted first.
// With Poisson arrivals at λ1 and λ2 and service S, a class-k call waits
// Wq_k = W0 / ((1 − σ_{k−1})(1 − σ_k)) on average, W0 = Σλ_i E[S²]/2 the
// residual work in service, σ_k = ρ_1 + … + ρ_k. The classes are
// closed-model sessions, so their arrivals are Poisson only in the limit
// of many sessions with long thinks: 3,000 a class, each thinking 100 s on
// average (exponential), make them Poisson within a call in a thousand.
// The sessions start over a ramp, and the first 400 s are left out
// (warm-up deletion, read from the trace); λ_k is each class's measured
// rate over the rest. S exponential of mean 10 ms; λ1 = λ2 ≈ 30/s:
// ρ = 0.6, Wq1 ≈ 8.6 ms, Wq2 ≈ 21.4 ms, against 15 ms for both first come
// first served (Pollaczek–Khinchine), which the same runs without
// priority check. Means over three seeds, each within 3%.
func TestLongClosedFormCobhamPriority(t *testing.T) {
	const es, es2 = 0.010, 2 * 0.010 * 0.010 // exponential service: E[S²] = 2E[S]²
	const warm, end, seeds = 400.0, 3400.0, 3
	// run returns each class's mean wait in the client's queue, in
	// seconds, and the closed form's, both averaged over the seeds.
	run := func(priority string, want func(lambda [2]float64) [2]float64) (got, closed [2]float64) {
		for seed := 1; seed <= seeds; seed++ {
			sc := simtest.MustParse(t, fmt.Sprintf(`
name = "cobham"
seed = %d
duration = "3400s"
[workload]
sessions = 6000
classes = [ { name = "interactive", sessions = 3000 }, { name = "batch", sessions = 3000 } ]
think = { dist = "exponential", mean = "100s" }
ramp = "300s"
calls = [ { tool = "t", count = 1 } ]
[services.s]
latency = { dist = "exponential", mean = "10ms" }
network_delay = "0s"
[tools.t]
service = "s"
[[strategy]]
name = "one-server"
max_in_flight_per_service = { s = 1 }
%s
`, seed, priority))
			_, recs := runTraced(t, sc)
			var sum, n [2]float64
			for _, r := range recs {
				if r.Intended < warm {
					continue
				}
				k := 0
				if r.Session > 3000 { // the first class's sessions come first
					k = 1
				}
				sum[k] += r.Start - r.Intended
				n[k]++
			}
			lambda := [2]float64{n[0] / (end - warm), n[1] / (end - warm)}
			w := want(lambda)
			t.Logf("seed %d: λ = %.3f, %.3f per s; waits %.3f, %.3f ms; closed form %.3f, %.3f ms", seed, lambda[0], lambda[1], 1000*sum[0]/n[0], 1000*sum[1]/n[1], 1000*w[0], 1000*w[1])
			for k := range 2 {
				got[k] += sum[k] / n[k] / seeds
				closed[k] += w[k] / seeds
			}
		}
		return got, closed
	}
	cobham := func(lambda [2]float64) [2]float64 {
		s1, s2 := lambda[0]*es, (lambda[0]+lambda[1])*es
		w0 := (lambda[0] + lambda[1]) * es2 / 2
		return [2]float64{w0 / (1 - s1), w0 / ((1 - s1) * (1 - s2))}
	}
	got, want := run(`priority = [ { class = "interactive" }, { class = "batch" } ]`, cobham)
	within(t, "interactive mean wait, s", got[0], want[0], 0.03)
	within(t, "batch mean wait, s", got[1], want[1], 0.03)
	fifo := func(lambda [2]float64) [2]float64 {
		rho := (lambda[0] + lambda[1]) * es
		w := (lambda[0] + lambda[1]) * es2 / 2 / (1 - rho)
		return [2]float64{w, w}
	}
	got, want = run("", fifo)
	within(t, "first come first served, interactive mean wait, s", got[0], want[0], 0.03)
	within(t, "first come first served, batch mean wait, s", got[1], want[1], 0.03)
}
