package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/simbench/simbench/fakeapi"
	"github.com/simbench/simbench/internal/simtest"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/spec"
)

func runOne(t *testing.T, sc *scenarios.Scenario) *engine {
	t.Helper()
	e, err := NewEngine(sc, &sc.Strategies[0])
	if err != nil {
		t.Fatal(err)
	}
	if !e.Run(context.Background(), nil) {
		t.Fatal("run did not complete")
	}
	return e
}

// erlangC returns the M/M/c mean time in system for arrival rate lambda and
// service rate mu per server.
func erlangC(lambda, mu float64, c int) float64 {
	a := lambda / mu
	rho := a / float64(c)
	var sum, term float64 = 0, 1
	for k := 0; k < c; k++ {
		if k > 0 {
			term *= a / float64(k)
		}
		sum += term
	}
	last := term * a / float64(c) // a^c / c!
	pc := last / (1 - rho) / (sum + last/(1-rho))
	return pc/(float64(c)*mu-lambda) + 1/mu
}

func TestEngineMatchesMMc(t *testing.T) {
	// λ = 3/s, exponential service with mean 1 s, 4 servers: ρ = 0.75.
	sc := simtest.Queue(3, spec.Dist[time.Duration]{Kind: spec.DistExponential, Mean: time.Second}, 4, 200_000)
	e := runOne(t, sc)
	want := erlangC(3, 1, 4)
	got := e.m.TurnLat.Mean().Seconds()
	t.Logf("M/M/4: %.4fs measured over %d calls, %.4fs by Erlang C", got, e.m.Turns, want)
	if e.m.Turns < 195_000 || math.Abs(got-want)/want > 0.03 {
		t.Errorf("M/M/4: mean time in system %.4fs over %d calls, Erlang C says %.4fs", got, e.m.Turns, want)
	}
}

func TestEngineMatchesMD1(t *testing.T) {
	// λ = 0.7/s, constant 1 s service, one server: W = D + ρD / (2(1−ρ)).
	sc := simtest.Queue(0.7, spec.Constant(time.Second), 1, 200_000)
	e := runOne(t, sc)
	want := 1 + 0.7/(2*0.3)
	got := e.m.TurnLat.Mean().Seconds()
	t.Logf("M/D/1: %.4fs measured over %d calls, %.4fs by Pollaczek–Khinchine", got, e.m.Turns, want)
	if math.Abs(got-want)/want > 0.03 {
		t.Errorf("M/D/1: mean time in system %.4fs, Pollaczek–Khinchine says %.4fs", got, want)
	}
}

// TestLittlesLawOnEveryBuiltin checks L = λW on every built-in cut to 1
// virtual minute; TestLongLittlesLawOnEveryBuiltin on 2 minutes of each.
func TestLittlesLawOnEveryBuiltin(t *testing.T) {
	checkLittlesLawOnEveryBuiltin(t, time.Minute)
}

// checkLittlesLawOnEveryBuiltin runs every strategy of every built-in cut
// to at most d and checks that the mean number of calls in the system is
// their rate times their mean latency (Little's law), within 1%, on every
// run that drains.
func checkLittlesLawOnEveryBuiltin(t *testing.T, d time.Duration) {
	for _, info := range scenarios.List() {
		t.Run(info.Name, func(t *testing.T) {
			sc, err := scenarios.Builtin(info.Name)
			if err != nil {
				t.Fatal(err)
			}
			sc.Duration = min(sc.Duration, d)
			for i := range sc.Strategies {
				e, err := NewEngine(sc, &sc.Strategies[i])
				if err != nil {
					t.Fatal(err)
				}
				e.Run(context.Background(), nil)
				m := e.m
				if m.Calls == 0 || m.Turns == 0 {
					t.Fatalf("%s: %d turns, %d calls", sc.Strategies[i].Name, m.Turns, m.Calls)
				}
				if m.InSystem != 0 {
					continue // cut off with calls still running: the identity needs a drained run
				}
				m.Integrate(e.now)
				l := m.Area / e.now.Seconds()                // mean calls in the system
				w := m.CallSum / float64(m.Calls)            // mean call latency, s
				lambda := float64(m.Calls) / e.now.Seconds() // calls per second
				t.Logf("%s: L = %.4f, λW = %.4f", sc.Strategies[i].Name, l, lambda*w)
				if rel := math.Abs(l-lambda*w) / (lambda * w); rel > 0.01 {
					t.Errorf("%s: L = %.4f but λW = %.4f", sc.Strategies[i].Name, l, lambda*w)
				}
			}
		})
	}
}

func TestTokenBucketServiceWindow(t *testing.T) {
	// 10 requests/s, burst 10, hammered by an unbounded strategy that retries
	// at once: no window of admissions may exceed 10 + 10 × its length.
	sc := simtest.Queue(40, spec.Constant(50*time.Millisecond), 0, 4000)
	sc.Services[0].RequestsPerSecond = 10
	sc.Strategies[0].Retry = scenarios.Retry{Backoff: sched.BackoffNone, Attempts: 3, HonorRetryAfter: false}
	e, err := NewEngine(sc, &sc.Strategies[0])
	if err != nil {
		t.Fatal(err)
	}
	var admitted []time.Duration
	e.onArrive = func(now time.Duration, d *fakeapi.Decision) {
		if d.Admitted() {
			admitted = append(admitted, now)
		}
	}
	e.Run(context.Background(), nil)
	if e.m.RateLimited == 0 || len(admitted) < 500 {
		t.Fatalf("the test needs pressure: %d 429s, %d admitted", e.m.RateLimited, len(admitted))
	}
	for _, w := range []time.Duration{0, 100 * time.Millisecond, time.Second, 5 * time.Second} {
		limit := 10 + 10*w.Seconds()
		i := 0
		for j, at := range admitted {
			for admitted[i] < at-w {
				i++
			}
			if n := j - i + 1; float64(n) > limit+1e-9 {
				t.Fatalf("%d admissions in the %v window ending %v, limit %.0f", n, w, at, limit)
			}
		}
	}
}

func TestSameSeedSameBytes(t *testing.T) {
	sc, err := scenarios.Builtin("burst-8")
	if err != nil {
		t.Fatal(err)
	}
	run := func() []byte {
		res, err := Run(context.Background(), sc, Options{Duration: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	a, b := run(), run()
	if !bytes.Equal(a, b) {
		t.Error("two runs of one scenario and seed differ")
	}
	seed := uint64(7)
	res, _ := Run(context.Background(), sc, Options{Duration: time.Minute, Seed: &seed})
	c, _ := json.Marshal(res)
	if bytes.Equal(a, c) {
		t.Error("a different seed gave identical results")
	}
}

func TestRunPartialOnCancel(t *testing.T) {
	sc, err := scenarios.Builtin("tier3")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := Run(ctx, sc, Options{})
	if err != context.Canceled || res == nil || !res.Partial || len(res.Strategies) != len(sc.Strategies) {
		t.Fatalf("err %v, partial %v", err, res != nil && res.Partial)
	}
	for _, s := range res.Strategies {
		if s.Name == "" {
			t.Error("a strategy of a partial run has no name")
		}
	}
}

func TestUnknownStrategy(t *testing.T) {
	sc, _ := scenarios.Builtin("tier3")
	_, err := Run(context.Background(), sc, Options{Strategies: []string{"bounded-64", "nope"}})
	want := `scenario "tier3" has no strategy nope (it has sequential, unbounded, bounded-64)`
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
}

// A ramp spreads the sessions' starts: four one-call, one-second turns
// (1 s at the service, 2 ms each way) started two seconds apart never
// overlap, where started at once they all do.
func TestRampSpreadsSessionStarts(t *testing.T) {
	for _, tt := range []struct {
		ramp     string
		wantPeak int
	}{{"0s", 4}, {"8s", 1}} {
		sc := simtest.MustParse(t, `
name = "ramp"
duration = "1m"
[workload]
sessions = 4
turns = 1
ramp = "`+tt.ramp+`"
calls = [ { tool = "t", count = 1 } ]
[services.s]
rps = 100
latency = { dist = "constant", value = "1s" }
network_delay = "2ms"
[tools.t]
service = "s"
[[strategy]]
name = "all"
`)
		res := runOnly(t, sc)
		s := res.Strategies[0]
		if s.Turns != 4 || s.PeakInFlight["s"] != tt.wantPeak || s.TurnLatencyMs.Max != 1004 {
			t.Errorf("ramp %s: %d turns, peak %d, slowest %v ms; want 4 turns, peak %d, 1004 ms", tt.ramp, s.Turns, s.PeakInFlight["s"], s.TurnLatencyMs.Max, tt.wantPeak)
		}
	}
}

// A service with API keys is called with its first key: every call of a
// virtual run succeeds, and the key's own quota is what limits it. The
// strategy paces at 90% of the limit: at 100%, requests sent exactly a
// second apart reach a bucket of one request with the jitter of their
// network delays, and the ones that arrive early are rejected.
func TestEngineSendsTheFirstKey(t *testing.T) {
	sc := simtest.MustParse(t, `
name = "keys"
duration = "1m"
[workload]
sessions = 2
calls = [ { tool = "t", count = 2 } ]
[services.s]
rpm = 60
keys = ["sk-one", "sk-two"]
latency = { dist = "constant", value = "100ms" }
[tools.t]
service = "s"
[[strategy]]
name = "paced"
token_bucket = true
headroom = 0.9
`)
	res := runOnly(t, sc)
	s := res.Strategies[0]
	if s.Calls == 0 || s.Failed != 0 || s.RateLimited != 0 {
		t.Errorf("%d calls, %d failed, %d 429s; want calls and no failures", s.Calls, s.Failed, s.RateLimited)
	}
	// One key's 60 requests/min, not two keys' 120: about 60 calls a minute.
	if s.Calls > 70 {
		t.Errorf("%d calls in a minute on one key's 60 requests/min", s.Calls)
	}
}

// A subagent count that draws 0 starts no subagent: the orchestrator's own
// call is the whole turn.
func TestZeroSubagentsEndTheTurnAfterItsOwnCalls(t *testing.T) {
	sc := simtest.MustParse(t, `
name = "no-subagents"
duration = "1m"
[workload]
sessions = 1
turns = 3
calls = [ { tool = "t", count = 1 } ]
[workload.subagents]
count = 0
max_iterations = 2
calls = [ { tool = "t", count = 5 } ]
[services.s]
rps = 100
latency = { dist = "constant", value = "100ms" }
network_delay = "2ms"
[tools.t]
service = "s"
[[strategy]]
name = "all"
`)
	res := runOnly(t, sc)
	// One call: 100 ms at the service and 2 ms each way.
	if s := res.Strategies[0]; s.Turns != 3 || s.Calls != 3 || s.TurnLatencyMs.Max != 104 {
		t.Errorf("%d turns, %d calls, slowest %v ms; want 3 turns of one 104 ms call each", s.Turns, s.Calls, s.TurnLatencyMs.Max)
	}
}

func TestTurnsInSystemOneSession(t *testing.T) {
	// One session: a turn of one 100 ms call, then 100 ms of thought, for
	// 10 s. A turn is in the system half the time: L = 0.5 turns; an
	// attempt is in service the same half: 0.5 attempts.
	sc := simtest.Queue(1, spec.Constant(100*time.Millisecond), 0, 10)
	sc.Workload.Arrival, sc.Workload.ArrivalRate, sc.Workload.Sessions = "", 0, 1
	sc.Workload.Think = spec.Constant(100 * time.Millisecond)
	e := runOne(t, sc)
	r := e.m.StrategyResultFrom("cap", 0, nil, 0)
	if r.TurnsInSystem != 0.5 || r.AttemptsInService != 0.5 {
		t.Errorf("L turns %v, attempts %v: want 0.5 and 0.5", r.TurnsInSystem, r.AttemptsInService)
	}
	if r.TurnLatencyMs.Mean != 100 || r.AnswerLatencyMs.Mean != 100 {
		t.Errorf("mean turn %v ms, answer %v ms: want 100", r.TurnLatencyMs.Mean, r.AnswerLatencyMs.Mean)
	}
}
