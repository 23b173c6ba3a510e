package sim

// Closed forms for the modelled features. Each test writes a scenario
// (scenarios.Parse of a TOML string), runs it in virtual time and holds a
// figure to a formula worked out in the test from first principles:
// queueing theory for the queues, the arithmetic of a token bucket or a
// window for the limiters, probability for retries, jitter and tasks. A
// mean is held within 3% or tighter, an exact figure exactly. Every
// service is reached with network_delay = "0s", so that a service's
// arrivals are the client's sends.
//
// Elsewhere: M/M/4 (TestEngineMatchesMMc), M/D/1 (TestEngineMatchesMD1),
// M/M/1 percentiles (TestMM1PercentilesWithinATenthOfAPercent), Little's
// law on the calls of every built-in (TestLittlesLawOnEveryBuiltin),
// completion over k steps as p^k (TestModelSuccessCompletesTheProduct),
// a progressive join's turn (TestProgressiveJoinMovesOnAtTheKthAnswer),
// generation time (TestOutputTokensPace);
// non-preemptive priority by Cobham's formula, heavier, behind the long
// build tag (TestLongClosedFormCobhamPriority).

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/simbench/simbench/fakeapi"
	"github.com/simbench/simbench/internal/setup"
	"github.com/simbench/simbench/internal/simtest"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/trace"
)

// runTraced runs sc's only strategy in virtual time with a trace and
// returns its figures and its attempts.
func runTraced(t *testing.T, sc *scenarios.Scenario) (results.StrategyResult, []trace.Record) {
	t.Helper()
	var buf bytes.Buffer
	w := trace.NewWriter(&buf)
	res, err := Run(context.Background(), sc, Options{Trace: w})
	if err != nil {
		w.Abort()
		t.Fatal(err)
	}
	return res.Strategies[0], simtest.TracedRecords(t, w, &buf)
}

// within fails the test when got is more than rel (a fraction) away from
// want, and logs both either way.
func within(t *testing.T, what string, got, want, rel float64) {
	t.Helper()
	t.Logf("%s: %.6g, closed form %.6g (%+.2f%%)", what, got, want, 100*(got-want)/want)
	if math.Abs(got-want) > rel*math.Abs(want) {
		t.Errorf("%s = %.6g; the closed form gives %.6g, %.2f%% off, beyond %.1f%%", what, got, want, 100*math.Abs(got-want)/want, 100*rel)
	}
}

// openQueue is an open workload of one call a turn: Poisson arrivals at
// rate per second to one service whose latency is the TOML distribution
// latency, under the strategy keys strategy, for duration.
func openQueue(t *testing.T, seed uint64, rate float64, latency, service, strategy, duration string) *scenarios.Scenario {
	t.Helper()
	return simtest.MustParse(t, fmt.Sprintf(`
name = "queue"
seed = %d
duration = %q
[workload]
arrival_rate = %v
calls = [ { tool = "t", count = 1 } ]
[services.s]
latency = %s
network_delay = "0s"
%s
[tools.t]
service = "s"
[[strategy]]
name = "q"
%s
`, seed, duration, rate, latency, service, strategy))
}

// erlangB is the blocking probability of c servers and no queue offered a
// erlangs, by the recurrence B(0) = 1, B(k) = aB(k−1) / (k + aB(k−1)).
func erlangB(a float64, c int) float64 {
	b := 1.0
	for k := 1; k <= c; k++ {
		b = a * b / (float64(k) + a*b)
	}
	return b
}

// checkMMc runs an M/M/c queue through a strategy's concurrency cap:
// Poisson arrivals at rate per second, exponential service of mean 10 ms,
// the cap c as the servers and the client's queue as the queue, for 1000 s
// under each seed from 1 to seeds, and holds the means over the seeds to
// Erlang C. The mean time in system is Erlang C's wait plus the service
// (erlangC), within 2%; the mean number in service (attempts in service)
// is the offered load λ/μ, within 1%. The mean number waiting (turns in
// the system less attempts in service) is λ × Erlang C's wait, within 3%,
// with the formula taken at each run's own arrival rate and load (its
// turns per second and its mean number in service, which the check
// before holds to the nominal ones): a run's queue follows the load it
// drew (in M/M/1 at ρ = 0.6 a load 1% higher lengthens the queue by 3.5%),
// and that part of its noise is not the queue's.
func checkMMc(t *testing.T, c int, rate float64, seeds int) {
	t.Helper()
	const mu = 100.0 // per second: exponential service of mean 10 ms
	var w, ls, lq, lqWant float64
	for seed := 1; seed <= seeds; seed++ {
		sc := openQueue(t, uint64(seed), rate, `{ dist = "exponential", mean = "10ms" }`, "",
			fmt.Sprintf("max_in_flight = %d", c), "1000s")
		st := runOnly(t, sc).Strategies[0]
		if st.Turns < int64(0.98*rate*1000) || st.FailedTurns != 0 {
			t.Fatalf("seed %d: %d turns, %d failed; want about %v, none failed", seed, st.Turns, st.FailedTurns, rate*1000)
		}
		lambda, load := st.AchievedTurnsPerS, st.AttemptsInService
		w += st.TurnLatencyMs.Mean / 1000 / float64(seeds)
		ls += load / float64(seeds)
		lq += (st.TurnsInSystem - load) / float64(seeds)
		lqWant += lambda * (erlangC(lambda, lambda/load, c) - load/lambda) / float64(seeds)
	}
	within(t, "mean time in system, s", w, erlangC(rate, mu, c), 0.02)
	within(t, "mean number in service", ls, rate/mu, 0.01)
	within(t, "mean number waiting", lq, lqWant, 0.03)
}

// M/M/1 at ρ = 0.6 (λ = 60/s, μ = 100/s): W = 1/(μ − λ) = 25 ms, and the
// queue holds ρ²/(1 − ρ) = 0.9 on average. Three seeds.
func TestClosedFormMM1(t *testing.T) {
	checkMMc(t, 1, 60, 3)
}

// M/M/2 at ρ = 0.6 (λ = 120/s, μ = 100/s a server): Erlang C gives the
// chance of waiting 0.45 and W = 10 ms + 0.45/(200 − 120) s = 15.6 ms. Two
// seeds; M/M/4 is TestEngineMatchesMMc.
func TestClosedFormMMc(t *testing.T) {
	checkMMc(t, 2, 120, 2)
}

// M/G/1 by Pollaczek–Khinchine with a uniform service on [0, 20 ms]:
// E[S] = 10 ms, E[S²] = (20 ms)²/3, ρ = λE[S] = 0.6 at λ = 60/s, and the
// mean wait Wq = λE[S²] / (2(1 − ρ)) = 10 ms, so W = 20 ms.
func TestClosedFormMG1PollaczekKhinchine(t *testing.T) {
	const lambda, es, es2 = 60.0, 0.010, 0.020 * 0.020 / 3
	sc := openQueue(t, 4, lambda, `{ dist = "uniform", min = "0s", max = "20ms" }`, "", "max_in_flight = 1", "2500s")
	st := runOnly(t, sc).Strategies[0]
	rho := lambda * es
	wq := lambda * es2 / (2 * (1 - rho))
	within(t, "mean time in system, s", st.TurnLatencyMs.Mean/1000, wq+es, 0.02)
	within(t, "mean number waiting", st.TurnsInSystem-st.AttemptsInService, lambda*wq, 0.03)
}

// Erlang B: a service with max_concurrent = c refuses (429) a request that
// finds c in progress, and a strategy without a cap or retries sends
// every call at once, so the service is c servers and no queue. The share
// of calls refused is B(c, a) for a offered erlangs whatever the service
// distribution (Erlang B is insensitive to it: exponential and constant
// give the same), and the mean number in service is a(1 − B).
func TestClosedFormErlangB(t *testing.T) {
	const lambda, c = 100.0, 5
	for _, lat := range []string{`{ dist = "exponential", mean = "40ms" }`, `"40ms"`} {
		t.Run(lat, func(t *testing.T) {
			sc := openQueue(t, 5, lambda, lat, "max_concurrent = 5", "", "1000s")
			st := runOnly(t, sc).Strategies[0]
			a := lambda * 0.040
			b := erlangB(a, c)
			// Calls count when they end: at most c are still in service
			// at the end of the run.
			if d := st.Attempts - st.Calls; d < 0 || d > c || st.RateLimited != st.Failed {
				t.Fatalf("%d attempts for %d calls, %d 429s for %d failed; want one attempt a call, every failure a 429", st.Attempts, st.Calls, st.RateLimited, st.Failed)
			}
			within(t, "share refused", float64(st.Failed)/float64(st.Calls), b, 0.03)
			within(t, "mean number in service", st.AttemptsInService, a*(1-b), 0.01)
		})
	}
}

// Little's law on an open workload: turns of three calls (two parallel
// searches, then a fetch after them) arrive as a Poisson stream at 20/s to
// services capped at 4 in flight. The mean number of turns in the system
// is the rate of turns times their mean latency, the offered rate is the
// arrival rate, and the calls' rate is three a turn.
func TestClosedFormLittleOpen(t *testing.T) {
	sc := simtest.MustParse(t, `
name = "little-open"
seed = 6
duration = "1500s"
[workload]
arrival_rate = 20
calls = [ { tool = "search", count = 2 }, { tool = "fetch", count = 1, after = ["search"] } ]
[services.s]
latency = { dist = "exponential", mean = "30ms" }
network_delay = "0s"
[services.f]
latency = { dist = "lognormal", p50 = "50ms", p95 = "150ms" }
network_delay = "0s"
[tools.search]
service = "s"
[tools.fetch]
service = "f"
[[strategy]]
name = "capped"
max_in_flight = 4
`)
	st := runOnly(t, sc).Strategies[0]
	x := st.AchievedTurnsPerS
	within(t, "offered turns per second", st.OfferedTurnsPerS, 20, 0.01)
	within(t, "achieved turns per second", x, 20, 0.02)
	within(t, "calls per turn", float64(st.Calls)/float64(st.Turns), 3, 0.001)
	within(t, "turns in system (L against λW)", st.TurnsInSystem, x*st.TurnLatencyMs.Mean/1000, 0.01)
}

// Little's law on a closed workload: N sessions each loop a turn then a
// think of mean Z, so every session is either in a turn or thinking and
// N = X(R + Z), X the turns per second and R their mean latency; the
// turns in the system are XR of them. Twenty sessions, exponential think
// of mean 1 s, turns of two calls to a service that serves four at a time
// (exponential, mean 100 ms), so the turns queue.
func TestClosedFormLittleClosed(t *testing.T) {
	const n, z = 20.0, 1.0
	sc := simtest.MustParse(t, `
name = "little-closed"
seed = 7
duration = "3000s"
[workload]
sessions = 20
think = { dist = "exponential", mean = "1s" }
calls = [ { tool = "t", count = 2 } ]
[services.s]
latency = { dist = "exponential", mean = "100ms" }
network_delay = "0s"
[tools.t]
service = "s"
[[strategy]]
name = "capped"
max_in_flight = 4
`)
	st := runOnly(t, sc).Strategies[0]
	x, r := st.AchievedTurnsPerS, st.TurnLatencyMs.Mean/1000
	if st.Turns < 30_000 || r < 0.15 {
		t.Fatalf("%d turns of mean %.3fs; the test needs many turns that queue", st.Turns, r)
	}
	within(t, "sessions (N against X(R+Z))", x*(r+z), n, 0.01)
	within(t, "turns in system (L against XR)", st.TurnsInSystem, x*r, 0.01)
}

// A client's token bucket of rate r and burst b, full at the start, sends
// the k-th of n calls made at once (k from 1) at max(0, (k − b)/r),
// exactly. One session's single turn of 30 calls to a service whose own
// limits have the same shape, so that it refuses none:
//   - paced at rps = 10 with burst = 5, it sends five at 0 and then one
//     every 100 ms until 2.5 s;
//   - with headroom = 0.5 the bucket holds half the burst and refills at
//     half the rate: rps = 10 with burst = 4 sends two at 0, then one
//     every 200 ms until 5.6 s;
//   - calls of 100 tokens under tpm = 1,200 (a bucket of one minute's
//     worth, 12 calls, refilled at 20 tokens a second) send twelve at 0,
//     then one every 5 s until 90 s.
//
// The turn ends at its last send plus the constant 1 s latency.
func TestClosedFormTokenBucketAdmissionTimes(t *testing.T) {
	const n = 30
	for _, c := range []struct {
		name, service, strategy, tokens string
		b, r                            float64 // calls, calls per second
	}{
		{"rps", "rps = 10\nburst = 5", "", "0", 5, 10},
		{"headroom", "rps = 10\nburst = 4", "headroom = 0.5", "0", 2, 5},
		{"tpm", "tpm = 1200", "", "100", 12, 0.2},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc := simtest.MustParse(t, fmt.Sprintf(`
name = "bucket"
duration = "5m"
[workload]
sessions = 1
turns = 1
calls = [ { tool = "t", count = %d } ]
[services.s]
%s
latency = "1s"
network_delay = "0s"
[tools.t]
service = "s"
tokens = %s
[[strategy]]
name = "paced"
token_bucket = true
%s
`, n, c.service, c.tokens, c.strategy))
			st, recs := runTraced(t, sc)
			if len(recs) != n || st.RateLimited != 0 || st.Attempts != n {
				t.Fatalf("%d attempts traced, %d counted, %d 429s; want %d attempts, none refused", len(recs), st.Attempts, st.RateLimited, n)
			}
			var starts []float64
			for _, rec := range recs {
				starts = append(starts, rec.Start)
			}
			slices.Sort(starts)
			for k := 1; k <= n; k++ {
				want := max(0, (float64(k)-c.b)/c.r)
				if got := starts[k-1]; math.Abs(got-want) > 1e-9 {
					t.Errorf("call %d of %d sent at %.6fs; the bucket admits it at (k − burst)/rate = %.6fs", k, n, got, want)
				}
			}
			if want := ((n-c.b)/c.r + 1) * 1000; math.Abs(st.TurnLatencyMs.Max-want) > 1e-9 {
				t.Errorf("the turn took %v ms; want (n − burst)/rate + latency = %v ms", st.TurnLatencyMs.Max, want)
			}
		})
	}
}

// windowArrivals runs a scenario of one call a turn, arriving as arrival
// ("poisson" or "constant") at 20/s for 100 s, against a service allowing 5
// requests a second under limiter (a bucket's burst is then 5, one
// second's worth) and the service keys extra, with one attempt a call; it
// returns every arrival's time at the service and whether it was admitted.
func windowArrivals(t *testing.T, limiter, arrival, extra string) (at []time.Duration, admitted []bool) {
	t.Helper()
	sc := simtest.MustParse(t, fmt.Sprintf(`
name = "window"
seed = 8
duration = "100s"
[workload]
arrival_rate = 20
arrival = %q
calls = [ { tool = "t", count = 1 } ]
[services.s]
rps = 5
limiter = %q
latency = "10ms"
network_delay = "0s"
%s
[tools.t]
service = "s"
[[strategy]]
name = "open"
`, arrival, limiter, extra))
	e, err := NewEngine(sc, &sc.Strategies[0])
	if err != nil {
		t.Fatal(err)
	}
	e.onArrive = func(now time.Duration, d *fakeapi.Decision) {
		at = append(at, now)
		admitted = append(admitted, d.Admitted())
	}
	if !e.Run(context.Background(), nil) {
		t.Fatal("run did not complete")
	}
	if len(at) < 1900 {
		t.Fatalf("%d arrivals; want about 2000", len(at))
	}
	return at, admitted
}

// refLimiters returns reference implementations of the three limiters at
// limit requests a window, each written from its definition and deciding
// request by request: a fixed window counting from each whole window, a
// sliding window counting the requests of the last window, and a token
// bucket of limit tokens refilled at limit a window. With countRejected a
// refused request counts as well (the key count_rejected): in the window's
// count, and in the bucket, which it takes down to minus its burst.
func refLimiters(limit int, window time.Duration, countRejected bool) (fixed, sliding, bucket func([]time.Duration) []bool) {
	fixed = func(at []time.Duration) []bool {
		var out []bool
		used, cur := 0, time.Duration(-1)
		for _, a := range at {
			if w := a / window; w != cur {
				used, cur = 0, w
			}
			ok := used < limit
			out = append(out, ok)
			if ok || countRejected {
				used++
			}
		}
		return out
	}
	sliding = func(at []time.Duration) []bool {
		var out []bool
		var log []time.Duration // the requests that count
		for _, a := range at {
			live := 0
			for _, x := range log {
				if x > a-window {
					live++
				}
			}
			ok := live < limit
			out = append(out, ok)
			if ok || countRejected {
				log = append(log, a)
			}
		}
		return out
	}
	bucket = func(at []time.Duration) []bool {
		full := int64(limit) * int64(window) // token-nanoseconds
		var out []bool
		credit, last := full, time.Duration(0)
		for _, a := range at {
			credit = min(full, credit+int64(a-last)*int64(limit))
			last = a
			ok := credit >= int64(window)
			out = append(out, ok)
			switch {
			case countRejected:
				credit = max(-full, credit-int64(window))
			case ok:
				credit -= int64(window)
			}
		}
		return out
	}
	return fixed, sliding, bucket
}

// The service's limiters decide each request exactly as their
// definitions say, at 5 requests a second. A fixed window of 1 s admits
// the first 5 requests of each window [k s, (k+1) s); a sliding one admits
// a request when fewer than 5 were admitted in the second before it,
// (t − 1 s, t]; a token bucket of burst 5, full at the start and refilled
// at 5 a second, admits a request when it holds a whole token (kept here
// in token-nanoseconds, so that the arithmetic is exact). Each limiter's
// decisions on a Poisson stream and on a constant one, both at 20/s, are
// those of the definition, written out here, one by one. On the constant
// stream both windows admit exactly 5 a second, 500 in 100 s, and the
// bucket 504: its 5 tokens and the quarter token each 50 ms refills carry
// the first 6 (0 to 250 ms), and then it admits one request in four, every
// 200 ms from 400 ms to 99.8 s (498). The fixed window lets up to twice
// the limit through around an edge, which the sliding one never does, and
// the bucket at most its burst plus its rate over any span, 10 in a
// second.
func TestClosedFormLimiterDecisions(t *testing.T) {
	const limit, window = 5, time.Second
	// mostInAnyWindow is the most admissions in any span (t − 1 s, t].
	mostInAnyWindow := func(at []time.Duration, admitted []bool) int {
		var adm []time.Duration
		for i, a := range at {
			if admitted[i] {
				adm = append(adm, a)
			}
		}
		most, i := 0, 0
		for j, a := range adm {
			for adm[i] <= a-window {
				i++
			}
			most = max(most, j-i+1)
		}
		return most
	}
	fixed, sliding, bucket := refLimiters(limit, window, false)
	for _, c := range []struct {
		limiter string
		ref     func([]time.Duration) []bool
	}{{"fixed_window", fixed}, {"sliding_window", sliding}, {"token_bucket", bucket}} {
		t.Run(c.limiter, func(t *testing.T) {
			for _, arrival := range []string{"poisson", "constant"} {
				at, admitted := windowArrivals(t, c.limiter, arrival, "")
				want := c.ref(at)
				n := 0
				for i := range at {
					if admitted[i] != want[i] {
						t.Fatalf("%s: request %d at %v: admitted %v; the limiter's definition says %v", arrival, i, at[i], admitted[i], want[i])
					}
					if admitted[i] {
						n++
					}
				}
				most := mostInAnyWindow(at, admitted)
				t.Logf("%s: %d admitted of %d; at most %d in any second", arrival, n, len(at), most)
				switch {
				case c.limiter == "token_bucket" && most > 2*limit:
					t.Errorf("%s: %d admissions within one second from a bucket of burst %d refilled at %d/s", arrival, most, limit, limit)
				case c.limiter == "sliding_window" && most > limit:
					t.Errorf("%s: %d admissions within one second under a sliding window of %d", arrival, most, limit)
				case c.limiter == "fixed_window" && arrival == "poisson" && most <= limit:
					t.Errorf("at most %d admissions in any second under a fixed window; a Poisson stream at 4× the limit should cross an edge with more", most)
				case c.limiter != "token_bucket" && arrival == "constant" && n != 500:
					t.Errorf("%d admitted of %d constant arrivals at 20/s over 100 s; want exactly 5 a second, 500", n, len(at))
				case c.limiter == "token_bucket" && arrival == "constant" && n != 504:
					t.Errorf("%d admitted of %d constant arrivals at 20/s over 100 s; want 6 + 498 = 504", n, len(at))
				}
			}
		})
	}
}

// count_rejected = true makes refused requests count against the limits
// too, so a stream that keeps coming locks itself out. The limiters'
// definitions with every request counted: a fixed window admits while
// fewer than 5 requests (admitted or not) came in its window, which
// admits the same first 5 as before; a sliding window admits while fewer
// than 5 requests came in the second before; a token bucket takes a token
// for every request, going down to minus its burst, and admits while it
// holds a whole one. Against a Poisson stream at 4× the limit the sliding
// window and the bucket admit the first 5 and, since the stream never
// leaves them a quiet second, almost nothing after. Each decision is the
// definition's, one by one.
func TestClosedFormCountRejected(t *testing.T) {
	const limit, window = 5, time.Second
	fixed, sliding, bucket := refLimiters(limit, window, true)
	for _, c := range []struct {
		limiter string
		ref     func([]time.Duration) []bool
		most    int // the most admissions over the run
	}{{"fixed_window", fixed, 500}, {"sliding_window", sliding, 10}, {"token_bucket", bucket, 10}} {
		t.Run(c.limiter, func(t *testing.T) {
			at, admitted := windowArrivals(t, c.limiter, "poisson", "count_rejected = true")
			want := c.ref(at)
			n := 0
			for i := range at {
				if admitted[i] != want[i] {
					t.Fatalf("request %d at %v: admitted %v; the limiter's definition says %v", i, at[i], admitted[i], want[i])
				}
				if admitted[i] {
					n++
				}
			}
			t.Logf("%d admitted of %d", n, len(at))
			if n < limit || n > c.most {
				t.Errorf("%d admitted of %d; want from %d to %d", n, len(at), limit, c.most)
			}
		})
	}
}

// A retry policy of n attempts against a service failing a share p of its
// requests (500, retried at once) answers a call with probability 1 − p^n,
// in (1 − p^n)/(1 − p) attempts on average; the call takes k attempts
// with probability p^(k−1)(1 − p) for k < n and p^(n−1) for k = n.
// p = 0.5, n = 3: 12.5% of the calls fail, in 1.75 attempts a call.
func TestClosedFormRetrySuccessAndAttempts(t *testing.T) {
	const p, n = 0.5, 3
	sc := openQueue(t, 9, 100, `"1ms"`, "faults = { error_rate = 0.5 }", "retry = { attempts = 3 }", "1000s")
	st := runOnly(t, sc).Strategies[0]
	if st.Calls < 99_000 {
		t.Fatalf("%d calls; want about 100,000", st.Calls)
	}
	calls := float64(st.Calls)
	within(t, "share of calls failed", float64(st.Failed)/calls, math.Pow(p, n), 0.03)
	within(t, "attempts per call", float64(st.Attempts)/calls, (1-math.Pow(p, n))/(1-p), 0.01)
	if len(st.AttemptsPerCall) != n {
		t.Fatalf("attempts per call %v; want %d bins", st.AttemptsPerCall, n)
	}
	for k := 1; k <= n; k++ {
		want := math.Pow(p, float64(k-1)) * (1 - p)
		if k == n {
			want = math.Pow(p, n-1)
		}
		within(t, fmt.Sprintf("share of calls taking %d attempts", k), float64(st.AttemptsPerCall[k-1])/calls, want, 0.03)
	}
}

// An attempt timeout T against exponential latencies of mean m cuts an
// attempt with probability q = e^(−T/m); with n attempts (retried at once)
// a call fails with probability q^n, in (1 − q^n)/(1 − q) attempts on
// average. T = m = 100 ms, n = 2: 13.5% of the calls fail, in 1.37
// attempts a call.
func TestClosedFormAttemptTimeout(t *testing.T) {
	const n = 2
	sc := openQueue(t, 13, 100, `{ dist = "exponential", mean = "100ms" }`, "",
		"attempt_timeout = \"100ms\"\nretry = { attempts = 2 }", "1000s")
	st := runOnly(t, sc).Strategies[0]
	if st.Calls < 99_000 {
		t.Fatalf("%d calls; want about 100,000", st.Calls)
	}
	q := math.Exp(-1)
	within(t, "share of calls failed", float64(st.Failed)/float64(st.Calls), math.Pow(q, n), 0.03)
	within(t, "attempts per call", float64(st.Attempts)/float64(st.Calls), (1-math.Pow(q, n))/(1-q), 0.01)
}

// max_queued bounds the calls waiting to start: with one in flight
// (max_in_flight = 1) and max_queued = 3 the system holds K = 4 calls,
// and the queue is M/M/1/K. Its stationary law is p_j ∝ ρ^j for j ≤ K, so
// a turn is refused with probability p_K = (1 − ρ)ρ^K / (1 − ρ^(K+1)) and
// the mean number in the system is Σ j p_j. λ = 80/s, exponential service
// of mean 10 ms: ρ = 0.8, p_K = 12.2%, L = 1.56.
func TestClosedFormMM1K(t *testing.T) {
	const lambda, rho, k = 80.0, 0.8, 4
	sc := openQueue(t, 14, lambda, `{ dist = "exponential", mean = "10ms" }`, "",
		"max_in_flight = 1\nmax_queued = 3", "1500s")
	st := runOnly(t, sc).Strategies[0]
	var norm, l float64
	for j := 0; j <= k; j++ {
		norm += math.Pow(rho, float64(j))
		l += float64(j) * math.Pow(rho, float64(j))
	}
	pk := math.Pow(rho, k) / norm
	// A refused turn ends at once, failed: it counts among the turns.
	if st.RefusedTurns == 0 || st.FailedTurns != st.RefusedTurns {
		t.Fatalf("%d turns, %d refused, %d failed; want the refused ones, and only they, failed", st.Turns, st.RefusedTurns, st.FailedTurns)
	}
	within(t, "share of turns refused", float64(st.RefusedTurns)/float64(st.Turns), pk, 0.03)
	within(t, "mean number in the system", st.TurnsInSystem, l/norm, 0.03)
}

// The service's load model: a request admitted while n others are in
// flight takes latency × (1 + factor × max(0, n − knee)). One turn's 10
// calls sent at once to a constant 100 ms service with factor 0.5 and knee
// 2 are admitted one after another, the k-th (from 0) with k in flight,
// so they take 100, 100, 100, 150, 200, …, 450 ms, exactly.
func TestClosedFormLoadLatency(t *testing.T) {
	sc := simtest.MustParse(t, `
name = "load"
duration = "1m"
[workload]
sessions = 1
turns = 1
calls = [ { tool = "t", count = 10 } ]
[services.s]
latency = "100ms"
load = { knee = 2, factor = 0.5 }
network_delay = "0s"
[tools.t]
service = "s"
[[strategy]]
name = "all"
`)
	st, recs := runTraced(t, sc)
	var got, want []float64
	for k, r := range recs {
		got = append(got, math.Round((r.End-r.Start)*1e6)/1e3) // ms, to the trace's µs
		want = append(want, 100*(1+0.5*float64(max(0, k-2))))
	}
	slices.Sort(got)
	if !slices.Equal(got, want) || st.TurnLatencyMs.Max != 450 {
		t.Errorf("call latencies %v ms, turn %v ms; want %v, 450", got, st.TurnLatencyMs.Max, want)
	}
}

// Timed events change a service over [at, at + for) exactly: every
// request arriving during an outage (20 s to 30 s) is refused, 503 at
// once, and every one admitted during a latency_factor of 3 (40 s to 50 s)
// takes three times the constant 100 ms; the others take 100 ms.
func TestClosedFormTimedEvents(t *testing.T) {
	sc := simtest.MustParse(t, `
name = "events"
seed = 15
duration = "60s"
[workload]
arrival_rate = 20
calls = [ { tool = "t", count = 1 } ]
[services.s]
latency = "100ms"
network_delay = "0s"
[tools.t]
service = "s"
[[strategy]]
name = "once"
[[events]]
service = "s"
at = "20s"
for = "10s"
outage = true
[[events]]
service = "s"
at = "40s"
for = "10s"
latency_factor = 3
`)
	_, recs := runTraced(t, sc)
	if len(recs) < 1100 {
		t.Fatalf("%d attempts; want about 1,200", len(recs))
	}
	var out int
	for _, r := range recs {
		took := math.Round((r.End-r.Start)*1e6) / 1e6
		switch {
		case r.Start >= 20 && r.Start < 30:
			out++
			if r.Status != 503 || took != 0 {
				t.Errorf("attempt at %.6fs, in the outage: status %d after %vs; want 503 at once", r.Start, r.Status, took)
			}
		case r.Start >= 40 && r.Start < 50:
			if r.Outcome != trace.OutcomeSuccess || took != 0.3 {
				t.Errorf("attempt at %.6fs, at 3× latency: %s after %vs; want success after 0.3s", r.Start, r.Outcome, took)
			}
		default:
			if r.Outcome != trace.OutcomeSuccess || took != 0.1 {
				t.Errorf("attempt at %.6fs: %s after %vs; want success after 0.1s", r.Start, r.Outcome, took)
			}
		}
	}
	if out < 150 {
		t.Errorf("%d attempts in the outage; want about 200", out)
	}
}

// A retry budget holds a service's retries to its tokens: it starts full
// at max, each successful attempt adds ratio, each retry takes one, and a
// retry that finds less than one token is not made. So over a run whose
// retries want more than the budget gives, the retries made are
// max + ratio × the successful attempts − the tokens left at the end,
// which is below one. Ten sessions of 1,000 one-call turns, half of the
// requests failing, two attempts a call, ratio 0.1 and max 10: some 5,000
// calls want a retry, and about 10 + 0.1 × 5,000 = 510 get one.
func TestClosedFormRetryBudget(t *testing.T) {
	sc := simtest.MustParse(t, `
name = "budget"
seed = 16
duration = "1h"
[workload]
sessions = 10
turns = 1000
calls = [ { tool = "t", count = 1 } ]
[services.s]
latency = "10ms"
network_delay = "0s"
faults = { error_rate = 0.5 }
[tools.t]
service = "s"
[[strategy]]
name = "budgeted"
retry = { attempts = 2 }
retry_budget = { ratio = 0.1, max = 10 }
`)
	st := runOnly(t, sc).Strategies[0]
	if st.Calls != 10_000 {
		t.Fatalf("%d calls; want the 10,000 of the run, drained", st.Calls)
	}
	retries := float64(st.Attempts - st.Calls)
	successes := float64(st.Calls - st.Failed) // one successful attempt each
	left := 10 + 0.1*successes - retries
	t.Logf("%v retries, %v successes: %.2f tokens left", retries, successes, left)
	if left < -1e-9 || left >= 1 {
		t.Errorf("%v retries after %v successful attempts; the budget gives 10 + 0.1 × %v = %.1f, less what is left (under 1)", retries, successes, successes, 10+0.1*successes)
	}
}

// A synchronised herd: one turn sends 4,000 calls at once to a service
// allowing one request a second with no Retry-After, so 3,999 meet a 429
// together. Retry n of full jitter waits a uniform draw on
// [0, base × 2^(n−1)]: the first retries spread evenly over [0, 10 s],
// the second over [0, 20 s]. Their delays have the uniform's mean (half
// the span) within 3%, and its distribution by Kolmogorov–Smirnov (D
// below 1.63/√m, the 1% level). The herd's retries, spread over [0, 30 s]
// (the second retries of 10 s + 20 s at most), meet every token the
// bucket refills, one a second from 1 s to 29 s: the herd gets 30 calls
// through. (At least 10 retries are due in each of those seconds on
// average, so a token misses them with a chance below e^−10.) Without
// jitter ("exponential") every retry of the herd comes back at the same
// instant, base × 2^(n−1), and the bucket, refilled to its burst of 1,
// admits exactly one of them: 3 calls through, at 0 s, 10 s and 30 s.
func TestClosedFormFullJitterSpreadsTheHerd(t *testing.T) {
	const calls, base = 4000, 10.0
	recs := herdRecords(t, calls, "full-jitter")
	if n := len(retryDelays(recs, 2)); n < calls-2 {
		t.Fatalf("%d first retries; want the %d calls the first second refused", n, calls-1)
	}
	for n := 2; n <= 3; n++ {
		span := base * math.Pow(2, float64(n-2))
		checkUniform(t, fmt.Sprintf("retry %d's delay, s", n-1), retryDelays(recs, n), 0, span)
	}
	admitted := func(recs []trace.Record) (n int) {
		for _, r := range recs {
			if r.Outcome == trace.OutcomeSuccess {
				n++
			}
		}
		return n
	}
	if n := admitted(recs); n != 30 {
		t.Errorf("full jitter: %d calls admitted; want 30, one at 0 and one at each token refilled from 1 s to 29 s", n)
	}
	plain := herdRecords(t, calls, "exponential")
	if n := admitted(plain); n != 3 {
		t.Errorf("without jitter %d calls admitted; want 3, at 0 s, 10 s and 30 s", n)
	}
	for n := 2; n <= 3; n++ {
		d := retryDelays(plain, n)
		span := base * math.Pow(2, float64(n-2))
		if slices.Min(d) != span || slices.Max(d) != span {
			t.Errorf("without jitter retry %d waited from %vs to %vs; want all %vs", n-1, slices.Min(d), slices.Max(d), span)
		}
	}
}

// The other jittered backoffs against the same herd of 4,000 calls. Equal
// jitter waits half the exponential delay plus a uniform share of the
// other half: retry n on [e/2, e], e = base × 2^(n−1). Decorrelated jitter
// waits base + a uniform share of (3 × the previous delay − base), the
// previous counting as at least base: the first retry on [base, 3 base],
// and each later one, scaled by its own call's previous delay d as
// (delay − base)/(3d − base), on [0, 1]. Each within 3% of the uniform's
// mean and by Kolmogorov–Smirnov.
func TestClosedFormJitteredBackoffs(t *testing.T) {
	const calls, base = 4000, 10.0
	recs := herdRecords(t, calls, "equal-jitter")
	for n := 2; n <= 3; n++ {
		e := base * math.Pow(2, float64(n-2))
		checkUniform(t, fmt.Sprintf("equal jitter, retry %d's delay, s", n-1), retryDelays(recs, n), e/2, e)
	}
	recs = herdRecords(t, calls, "decorrelated-jitter")
	checkUniform(t, "decorrelated jitter, retry 1's delay, s", retryDelays(recs, 2), base, 3*base)
	prev := map[string]float64{}
	for _, r := range recs {
		if r.Attempt == 2 {
			prev[r.Call] = r.RetryDelay
		}
	}
	var u []float64
	for _, r := range recs {
		if r.Attempt == 3 {
			d, ok := prev[r.Call]
			if !ok {
				t.Fatalf("call %q: a second retry without a first", r.Call)
			}
			u = append(u, (r.RetryDelay-base)/(3*max(d, base)-base))
		}
	}
	checkUniform(t, "decorrelated jitter, retry 2's share of its range", u, 0, 1)
}

// retry_after_jitter against the same herd, told by the service when to
// come back (headers = "openai": retry-after-ms, the wait for the bucket's
// next token): each retry waits the server's delay plus a uniform draw on
// [0, jitter], here 5 s.
func TestClosedFormRetryAfterJitter(t *testing.T) {
	recs := herdRun(t, 4000, `headers = "openai"`, `retry_after_jitter = "5s"`)
	told := map[string]float64{}
	var extra []float64
	for _, r := range recs { // in each call's attempt order
		if r.Attempt > 1 {
			ra, ok := told[r.Call]
			if !ok {
				t.Fatalf("call %q: attempt %d after an answer with no retry delay", r.Call, r.Attempt)
			}
			extra = append(extra, r.RetryDelay-ra)
		}
		if r.HasRetryAfter {
			told[r.Call] = r.RetryAfter
		} else {
			delete(told, r.Call)
		}
	}
	checkUniform(t, "delay past the server's, s", extra, 0, 5)
}

// herdRecords runs one turn of calls calls sent at once to a service
// allowing one request a second (a bucket of burst 1) that sends no
// Retry-After, with three attempts a call under backoff with base 10 s,
// and returns the attempts.
func herdRecords(t *testing.T, calls int, backoff string) []trace.Record {
	t.Helper()
	return herdRun(t, calls, "", fmt.Sprintf("backoff = %q, base = \"10s\", cap = \"1h\"", backoff))
}

// herdRun runs one turn of calls calls sent at once to a service allowing
// one request a second (a bucket of burst 1), with the service keys
// service and the retry keys retry, three attempts a call, and returns
// the attempts.
func herdRun(t *testing.T, calls int, service, retry string) []trace.Record {
	t.Helper()
	sc := simtest.MustParse(t, fmt.Sprintf(`
name = "herd"
seed = 10
duration = "10m"
[workload]
sessions = 1
turns = 1
calls = [ { tool = "t", count = %d } ]
[services.s]
rps = 1
latency = "10ms"
network_delay = "0s"
%s
[tools.t]
service = "s"
[[strategy]]
name = "herd"
retry = { %s, attempts = 3 }
`, calls, service, retry))
	_, recs := runTraced(t, sc)
	return recs
}

// retryDelays returns the delays before the attempts numbered attempt, in
// seconds.
func retryDelays(recs []trace.Record, attempt int) []float64 {
	var d []float64
	for _, r := range recs {
		if r.Attempt == attempt {
			d = append(d, r.RetryDelay)
		}
	}
	return d
}

// checkUniform holds draws to the uniform distribution on [lo, hi]: every
// draw within it (to the trace's microsecond), their mean within 3% of
// the middle, and the Kolmogorov–Smirnov distance D of their empirical
// distribution below 1.63/√m for m draws (the 1% level).
func checkUniform(t *testing.T, what string, draws []float64, lo, hi float64) {
	t.Helper()
	if len(draws) < 1000 {
		t.Fatalf("%s: %d draws; the check needs at least 1,000", what, len(draws))
	}
	d := slices.Sorted(slices.Values(draws))
	var sum, ks float64
	m := float64(len(d))
	for i, x := range d {
		if x < lo-1e-6 || x > hi+1e-6 {
			t.Fatalf("%s: %.6f, outside [%v, %v]", what, x, lo, hi)
		}
		sum += x
		f := (x - lo) / (hi - lo)
		ks = max(ks, math.Abs(f-float64(i)/m), math.Abs(f-float64(i+1)/m))
	}
	within(t, fmt.Sprintf("%s, mean of %d", what, len(d)), sum/m, (lo+hi)/2, 0.03)
	t.Logf("%s: Kolmogorov–Smirnov D = %.4f (1%% level %.4f)", what, ks, 1.63/math.Sqrt(m))
	if ks > 1.63/math.Sqrt(m) {
		t.Errorf("%s: not uniform on [%v, %v]: D = %.4f over %d draws", what, lo, hi, ks, len(d))
	}
}

// Cost per answered task. Tasks of k = 3 turns, each a model call (800
// input and 200 output tokens) right with probability p = 0.9, then, when
// right, a tool call of 50 tokens; a wrong step abandons the task. A task
// makes Σ_{j=1..k} p^(j−1) = (1 − p^k)/(1 − p) model calls and p times
// that many tool calls on average, and is answered with probability p^k,
// so the cost per answered task tends to the mean cost of a task over
// p^k. Exactly: the run bills every model and tool call answered, which
// the trace counts, at the services' prices per 1,000 tokens, and the
// cost per answered task is that over the tasks completed.
func TestClosedFormCostPerAnsweredTask(t *testing.T) {
	const k, p = 3, 0.9
	const inPrice, outPrice, toolPrice = 0.003, 0.015, 0.0005
	sc := simtest.MustParse(t, fmt.Sprintf(`
name = "cost"
seed = 12
duration = "1h"
[workload]
sessions = 6000
turns = %d
llm = { service = "model", tokens = 1000, output_tokens = 200, success = %v }
calls = [ { tool = "fetch", count = 1 } ]
[services.model]
latency = "100ms"
network_delay = "0s"
price_per_1k_input = %v
price_per_1k_output = %v
[services.api]
latency = "50ms"
network_delay = "0s"
price_per_1k_input = %v
[tools.fetch]
service = "api"
tokens = 50
[[strategy]]
name = "unbounded"
`, k, p, inPrice, outPrice, toolPrice))
	st, recs := runTraced(t, sc)
	tk := st.Tasks
	if tk == nil || tk.Begun != 6000 || tk.Completed+tk.FailedTasks != tk.Begun {
		t.Fatalf("tasks %+v; want 6,000 begun, all ended", tk)
	}
	var model, tool int64
	for _, r := range recs {
		if r.Outcome != trace.OutcomeSuccess {
			t.Fatalf("attempt %+v did not succeed; every call should", r)
		}
		if r.Kind == trace.KindModel {
			model++
		} else {
			tool++
		}
	}
	cost := float64(model)*(800*inPrice+200*outPrice)/1000 + float64(tool)*50*toolPrice/1000
	if tk.CostUSD != setup.Round6(cost) || tk.CostPerAnsweredTaskUSD != setup.Round6(cost/float64(tk.Completed)) {
		t.Errorf("cost $%v, $%v an answered task; the %d model and %d tool calls billed at the prices cost $%v, $%v over %d answered",
			tk.CostUSD, tk.CostPerAnsweredTaskUSD, model, tool, setup.Round6(cost), setup.Round6(cost/float64(tk.Completed)), tk.Completed)
	}
	modelCalls := (1 - math.Pow(p, k)) / (1 - p)
	perTask := modelCalls*(800*inPrice+200*outPrice)/1000 + p*modelCalls*50*toolPrice/1000
	within(t, "model calls per task", float64(model)/float64(tk.Begun), modelCalls, 0.01)
	within(t, "cost per answered task, $", tk.CostPerAnsweredTaskUSD, perTask/math.Pow(p, k), 0.03)
}
