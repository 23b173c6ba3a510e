package live

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/simbench/simbench/internal/setup"
	"github.com/simbench/simbench/internal/simtest"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/spec"
	"github.com/simbench/simbench/trace"
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
	sc := setup.Scale(small(), 0.01)
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

// TestLiveCapsCallsPerTurn: call counts from a Pareto with α = 0.01 draw
// turns of astronomically many calls. A virtual run stops with ErrTooLarge
// at the first such turn; a live run, driven by the same agent loop, stops
// the same way instead of trying to make them.
func TestLiveCapsCallsPerTurn(t *testing.T) {
	sc := small()
	sc.Duration = 20 * time.Second
	sc.Workload.Calls[0].Count = spec.Dist[float64]{Kind: spec.DistPareto, Min: 1, Alpha: 0.01}
	budget := int64(1000 * sim.BytesPerCall) // room for 1000 calls in a turn
	e, err := sim.NewEngine(sc, &sc.Strategies[0])
	if err != nil {
		t.Fatal(err)
	}
	e.Agents.MaxTurnCalls = sim.MaxTurnCalls(budget)
	e.Run(context.Background(), nil)
	if !errors.Is(e.Err, sim.ErrTooLarge) {
		t.Fatalf("virtual: %v, want ErrTooLarge", e.Err)
	}
	res, err := RunLive(liveContext(t), sc, LiveOptions{Options: sim.Options{MaxMemory: budget}, TimeScale: 0.05})
	if !errors.Is(err, sim.ErrTooLarge) || res != nil {
		t.Fatalf("live: %v (results %v), want ErrTooLarge and no results", err, res != nil)
	}
	if !strings.Contains(err.Error(), "more than the 1000 that fit") {
		t.Errorf("live: %v, want the cap named", err)
	}
}

// TestLiveLimitTrace: the live driver records the limit's steps too. With
// the service's queue kept full and no refusals, AIMD's limit takes every
// value from its start to its ceiling in turn, whatever the machine's
// timing; the steps come in time order within the run.
func TestLiveLimitTrace(t *testing.T) {
	const ceiling = 6
	sc := simtest.AIMDQueue(100*time.Millisecond, 60, ceiling)
	res, err := RunLive(liveContext(t), sc, LiveOptions{TimeScale: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	got := res.Strategies[0].LimitTrace["s"]
	var limits []int
	for i, p := range got {
		limits = append(limits, p.Limit)
		if i > 0 && p.T < got[i-1].T || p.T < 0 || p.T > sc.Duration.Seconds() {
			t.Errorf("step %d at %v s: out of order or outside the run", i, p.T)
		}
	}
	var want []int
	for l := 1; l <= ceiling; l++ {
		want = append(want, l)
	}
	if !slices.Equal(limits, want) {
		t.Errorf("live limits %v, want %v", limits, want)
	}
}

// A live run's trace holds a "live" section per strategy whose records
// count the same 429s as the run's results, with retries carrying the
// delay the scheduler chose.
func TestTraceLive(t *testing.T) {
	sc, err := scenarios.Builtin("burst-8")
	if err != nil {
		t.Fatal(err)
	}
	sc.Duration = 10 * time.Second
	var buf bytes.Buffer
	w := trace.NewWriter(&buf)
	res, err := RunLive(liveContext(t), sc, LiveOptions{Options: sim.Options{Strategies: []string{"no-jitter", "paced"}, Trace: w}, TimeScale: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r := trace.NewReader(&buf, "live.jsonl")
	var names []string
	limited := map[string]int64{}
	delays := 0
	for r.Next() {
		h := r.Header()
		if len(names) == 0 || names[len(names)-1] != h.Strategy {
			names = append(names, h.Strategy)
			if h.Mode != "live" || h.Limits["geo"].RPS != 5 {
				t.Errorf("header %+v", *h)
			}
		}
		rec := r.Record()
		if err := rec.Check(); err != nil {
			t.Fatalf("line %d: %v", r.Line(), err)
		}
		if rec.Session < 1 || rec.Turn < 1 || rec.Intended > rec.Start {
			t.Errorf("line %d: %+v", r.Line(), *rec)
		}
		if rec.Outcome == trace.OutcomeRateLimited {
			limited[h.Strategy]++
		}
		if rec.Attempt > 1 && rec.RetryDelay > 0 {
			delays++
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if len(names) != 2 || names[0] != "no-jitter" || names[1] != "paced" {
		t.Fatalf("sections %v", names)
	}
	for _, s := range res.Strategies {
		if limited[s.Name] != s.RateLimited {
			t.Errorf("%s: %d rate_limited records, the run counted %d", s.Name, limited[s.Name], s.RateLimited)
		}
	}
	if limited["no-jitter"] == 0 || delays == 0 {
		t.Errorf("no-jitter: %d 429s and %d retries with the delay chosen before them; want some of each", limited["no-jitter"], delays)
	}
}

// TestEventOutageLive: a live run's server applies the scenario's events in
// the run's own time. Four turns of one call arrive 1 s apart (scenario
// time) and an outage covers [1.5 s, 2.5 s): the turn at 2 s, and only it,
// fails, refused with 503. The boundaries lie half a second from any
// arrival, at time scale 1 half a second of real time too (at 0.2 the
// 100 ms of it were lost to a machine at load average 15), so the test
// counts outcomes and does not depend on timing; it waits 4 s in parallel
// with the other tests.
func TestEventOutageLive(t *testing.T) {
	t.Parallel()
	sc := simtest.MustParse(t, `
duration = "4s"
[workload]
arrival_rate = 1
arrival = "constant"
calls = [ { tool = "t" } ]
[services.api]
latency = "10ms"
[tools.t]
service = "api"
[[strategy]]
name = "once"
[[events]]
service = "api"
at = "1500ms"
for = "1s"
outage = true
`)
	virtual, err := sim.Run(context.Background(), sc, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	live, err := RunLive(liveContext(t), sc, LiveOptions{TimeScale: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range []*results.Results{virtual, live} {
		st := res.Strategies[0]
		if st.Turns != 4 || st.FailedTurns != 1 || st.Failed != 1 || st.RateLimited != 0 {
			t.Errorf("%s: turns %d, failed turns %d, failed calls %d, 429s %d; want 4, 1, 1, 0",
				res.Mode, st.Turns, st.FailedTurns, st.Failed, st.RateLimited)
		}
		if len(res.Events) != 1 || res.Events[0].Label != "outage 503" {
			t.Errorf("%s: events %+v", res.Mode, res.Events)
		}
	}
}

// TestLiveSendsOutputTokens checks that a live run sends a model call's
// output part to the fake server apart from its input: the service's
// output_tpm then rate-limits the calls, as in a virtual run, and without
// output_tokens it does not.
func TestLiveSendsOutputTokens(t *testing.T) {
	limited := func(llm string) int64 {
		sc := simtest.OutputScenario(t, "output_tpm = 600\n", llm)
		sc.Duration = 5 * time.Second
		res, err := RunLive(liveContext(t), sc, LiveOptions{TimeScale: 0.1})
		if err != nil {
			t.Fatal(err)
		}
		return res.Strategies[0].RateLimited
	}
	if n := limited(", output_tokens = 300"); n == 0 {
		t.Error("with output_tokens over output_tpm, no call was rate limited")
	}
	if n := limited(""); n != 0 {
		t.Errorf("without output_tokens, %d calls were rate limited", n)
	}
}
