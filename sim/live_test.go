package sim

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/spec"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// liveTimeLimit bounds each live run of the tests in real time: one that
// hangs is cut off and fails in minutes, not at go test's own limit.
const liveTimeLimit = 3 * time.Minute

// liveContext is the context of a test's live run: t's, ended after
// liveTimeLimit (RunLive then returns its error).
func liveContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), liveTimeLimit)
	t.Cleanup(cancel)
	return ctx
}

// small is a scenario small enough to run live in seconds: six agents, four
// lookups per turn, a 600 RPM service, a bounded strategy pacing itself.
func small() *scenarios.Scenario {
	return &scenarios.Scenario{
		Name: "small", Seed: 3, Duration: 300 * time.Second,
		Workload: scenarios.Workload{
			Sessions: 6,
			Think:    spec.Dist[time.Duration]{Kind: spec.DistUniform, Min: 500 * time.Millisecond, Max: 1500 * time.Millisecond},
			Calls:    []scenarios.CallGroup{{Tool: "lookup", Count: spec.Constant(4.0), Probability: 1}},
		},
		Services: []scenarios.Service{{
			Name: "api", RequestsPerMinute: 600, Headers: spec.HeadersOpenAI,
			Latency: spec.Dist[time.Duration]{Kind: spec.DistUniform, Min: 200 * time.Millisecond, Max: 400 * time.Millisecond},
		}},
		Tools: []scenarios.Tool{{Name: "lookup", Service: "api", Tokens: spec.Constant(100.0), Kind: scenarios.KindRead}},
		Strategies: []scenarios.Strategy{{
			Name: "bounded-4", MaxInFlight: 4, TokenBucket: true, Headroom: 0.9, SerializeWrites: true,
			Retry: scenarios.Retry{Backoff: sched.BackoffFullJitter, Base: time.Second, Cap: 10 * time.Second, Attempts: 4, HonorRetryAfter: true},
		}},
	}
}

func TestScaleKeepsTheShape(t *testing.T) {
	sc := Scale(small(), 0.01)
	if sc.Duration != 3*time.Second || sc.Services[0].RequestsPerMinute != 60_000 ||
		sc.Services[0].Latency.Min != 2*time.Millisecond || sc.Workload.Think.Max != 15*time.Millisecond ||
		sc.Strategies[0].Retry.Base != 10*time.Millisecond {
		t.Errorf("scaled: %+v", sc)
	}
	if small().Services[0].RequestsPerMinute != 600 {
		t.Error("Scale changed its input")
	}
}

func TestDisagreement(t *testing.T) {
	virtual := results.StrategyResult{Turns: 100, GoodputPerS: 10,
		TurnLatencyMs: results.Summary{P50: 1000}, AnswerLatencyMs: results.AnswerSummary{AnsweredShare: 0.9}}
	with := func(f func(*results.StrategyResult)) results.StrategyResult {
		s := virtual
		f(&s)
		return s
	}
	tests := []struct {
		name string
		live results.StrategyResult
		want []string // substrings; none: agreement
	}{
		{"the same", virtual, nil},
		{"within every bound", with(func(s *results.StrategyResult) {
			s.TurnLatencyMs.P50, s.GoodputPerS, s.AnswerLatencyMs.AnsweredShare = 1240, 7.6, 0.81
		}), nil},
		{"p50 3x (the reproducer at 0.01)", with(func(s *results.StrategyResult) { s.TurnLatencyMs.P50 = 3000 }),
			[]string{"p50 turn latency 3000 ms vs 1000 ms"}},
		{"answered share down 0.2", with(func(s *results.StrategyResult) { s.AnswerLatencyMs.AnsweredShare = 0.7 }),
			[]string{"answered share 0.70 vs 0.90"}},
		{"goodput halved", with(func(s *results.StrategyResult) { s.GoodputPerS = 5 }), []string{"goodput 5.00/s vs 10.00/s"}},
		{"far fewer turns begun", with(func(s *results.StrategyResult) { s.Turns, s.TurnLatencyMs.P50 = 10, 3000 }),
			[]string{"10 turns begun vs 100"}},
		{"turns within 25%", with(func(s *results.StrategyResult) { s.Turns, s.FailedTurns = 70, 8 }), nil},
	}
	for _, tt := range tests {
		got := disagreement(&tt.live, &virtual)
		if len(tt.want) == 0 && got != "" {
			t.Errorf("%s: %q, want agreement", tt.name, got)
		}
		for _, w := range tt.want {
			if !strings.Contains(got, w) || !strings.Contains(got, "tolerance") {
				t.Errorf("%s: %q, want %q and the tolerance", tt.name, got, w)
			}
		}
	}
}

// With few turns only the number begun is compared: it still tells a run
// the machine could not keep (4 turns of 600) from one it could.
func TestDisagreementFewTurns(t *testing.T) {
	tests := []struct {
		name          string
		live, virtual int64
		want          string // "": agreement
	}{
		{"the same", 6, 6, ""},
		{"within 3√n+1", 3, 10, ""},                    // bound 10.5
		{"beyond 3√n+1", 20, 8, "20 turns begun vs 8"}, // bound 9.5
		{"none where one was begun", 0, 1, ""},
		{"the 1e-5 reproducer", 4, 600, "4 turns begun vs 600"},
	}
	for _, tt := range tests {
		l := results.StrategyResult{Turns: tt.live, TurnLatencyMs: results.Summary{P50: 824000}}
		v := results.StrategyResult{Turns: tt.virtual, TurnLatencyMs: results.Summary{P50: 1000}}
		got := disagreement(&l, &v)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// Every strategy of a live run whose timing the scale breaks is marked
// invalid on its own result, not only at the top.
func TestLiveInvalidPerStrategy(t *testing.T) {
	sc := small()
	sc.Duration = 20 * time.Second
	sc.Services[0].Headers = spec.HeadersAnthropic // whole-second Retry-After
	res, err := RunLive(liveContext(t), sc, LiveOptions{TimeScale: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Strategies) != 1 || !strings.Contains(res.Strategies[0].Invalid, "rounds Retry-After") || res.Invalid == "" {
		t.Errorf("invalid: top %q, strategies %+v", res.Invalid, res.Strategies)
	}
}

// A panic in one of a live run's goroutines reaches the goroutine that
// waits for them, where the command's recover can report it as a bug,
// instead of killing the process.
func TestLivePanicReachesTheCaller(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l := &liveRun{abort: cancel}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer l.recoverPanic()
		var calls []int
		_ = calls[3] // index out of range
	}()
	<-done
	if ctx.Err() == nil {
		t.Error("the panic did not end the run")
	}
	defer func() {
		r := recover()
		msg, _ := r.(string)
		if !strings.Contains(msg, "index out of range") || !strings.Contains(msg, "live_test.go") {
			t.Errorf("repanic raised %v, want the panic and its goroutine's stack", r)
		}
	}()
	l.repanic()
	t.Error("repanic returned")
}
