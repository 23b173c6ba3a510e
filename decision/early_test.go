package decision

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/simbench/simbench/internal/racebuild"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/spec"
)

// admits's bound, worked out by hand: a token bucket of capacity 167
// refilled at 10,000 a minute admits 167 + 10,000 × 90 ÷ 60 = 15,167 over
// 90 s; a fixed or sliding window of 100 a minute touches at most
// ⌊90 ÷ 60⌋ + 2 = 3 windows, 300; with both a per-second and a per-minute
// limit the tighter counts.
func TestAdmitsBound(t *testing.T) {
	for _, c := range []struct {
		cfg  spec.Config
		left time.Duration
		want float64
	}{
		{spec.Config{RPM: 10_000, Burst: 167, Algorithm: spec.TokenBucket}, 90 * time.Second, 15_167},
		{spec.Config{RPM: 10_000, Algorithm: spec.TokenBucket}, 90 * time.Second, 25_000},
		{spec.Config{RPM: 100, Algorithm: spec.FixedWindow}, 90 * time.Second, 300},
		{spec.Config{RPM: 100, Algorithm: spec.SlidingWindow}, 90 * time.Second, 300},
		{spec.Config{RPS: 2, RPM: 1_000, Burst: 5, Algorithm: spec.TokenBucket}, 90 * time.Second, 185},
		{spec.Config{RPS: 2, RPM: 60, Burst: 5, Algorithm: spec.TokenBucket}, 90 * time.Second, 150},
		{spec.Config{RPM: 100, Algorithm: spec.TokenBucket}, 0, 100},
	} {
		if got := admits(&c.cfg, c.left); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%+v over %v: admits %v, want %v", c.cfg, c.left, got, c.want)
		}
	}
}

// moreAnswered gives no bound where none holds: an open workload, a
// service with no request limit, a turn that may make no call.
func TestMoreAnsweredOnlyWhereABoundHolds(t *testing.T) {
	base := `name = "x"
duration = "60s"
[workload]
%s
[services.s]
%s
[tools.t]
service = "s"
[[strategy]]
name = "u"
`
	for _, c := range []struct {
		workload, service string
		ok                bool
		more              int64 // at 30 s of 60 s
	}{
		// 4 sessions + ⌈(10 + 600 × 30 ÷ 60) ÷ 2⌉ = 4 + 155.
		{"sessions = 4\ncalls = [ { tool = \"t\", count = 2 } ]", "rpm = 600\nburst = 10", true, 159},
		{"arrival_rate = \"2/s\"\ncalls = [ { tool = \"t\", count = 2 } ]", "rpm = 600", false, 0},
		{"sessions = 4\ncalls = [ { tool = \"t\", count = 2 } ]", "tpm = 600", false, 0},
		{"sessions = 4\ncalls = [ { tool = \"t\", count = 2, probability = 0.5 } ]", "rpm = 600", false, 0},
	} {
		sc, err := scenarios.Parse("x.toml", []byte(fmt.Sprintf(base, c.workload, c.service)))
		if err != nil {
			t.Fatal(err)
		}
		more, ok := moreAnswered(sc)
		if ok != c.ok {
			t.Errorf("%s / %s: bound %v, want %v", c.workload, c.service, ok, c.ok)
			continue
		}
		if ok {
			if got := more(30*time.Second, time.Minute); got != c.more {
				t.Errorf("%s / %s: %d more at 30 s, want %d", c.workload, c.service, got, c.more)
			}
		}
	}
}

// The stop's certainty, checked against the whole run: unbounded on tier3
// (one minute of it) is stopped early, and the same run simulated to its
// end answers at most MaxMoreAnswered more turns after the stop and ends
// below 95% answered, with its p95 time to answer Unanswered.
func TestEarlyStopHoldsOnTheWholeRun(t *testing.T) {
	sc, err := scenarios.Builtin("tier3")
	if err != nil {
		t.Fatal(err)
	}
	each := time.Minute
	s := newEarlyStops(sc, Rule{}, each)
	if s == nil {
		t.Fatal("tier3 has no bound")
	}
	opts := sim.Options{Strategies: []string{"unbounded"}, Duration: each, Parallel: 1}
	stopped, err := sim.Run(context.Background(), sc, s.options(opts))
	if err != nil {
		t.Fatal(err)
	}
	whole, err := sim.Run(context.Background(), sc, opts)
	if err != nil {
		t.Fatal(err)
	}
	st, w := stopped.Strategies[0], whole.Strategies[0]
	e := s.stopped(st)
	if e == nil || w.StoppedAtS != 0 {
		t.Fatalf("stopped at %v, whole run stopped at %v: want a stop in the first only", st.StoppedAtS, w.StoppedAtS)
	}
	more := (w.Turns - w.FailedTurns) - (st.Turns - st.FailedTurns)
	if more > e.MaxMoreAnswered {
		t.Errorf("the whole run answered %d turns after %v s, more than the bound %d", more, e.AtS, e.MaxMoreAnswered)
	}
	if share := w.AnswerLatencyMs.AnsweredShare; share >= MinAnsweredShare || w.AnswerLatencyMs.P95.Answered() {
		t.Errorf("the whole run answers %v with p95 %v: the stop was not certain", share, w.AnswerLatencyMs.P95)
	}
	if e.AtS >= each.Seconds()/2 {
		t.Errorf("stopped at %v s of %v: later than half the run", e.AtS, each.Seconds())
	}
	t.Logf("stopped at %v s: %d of %d failed, at most %d more; the whole run answered %d more", e.AtS, e.FailedTurns, e.Turns, e.MaxMoreAnswered, more)
}

// baselineText matches the sentence's parenthesis on a strategy as
// written, whole ("answers 19%") or stopped.
var baselineText = regexp.MustCompile(` \([^ ()]+ (answers|stopped at) [^()]*\)`)

// sameDecision fails unless a, decided with early stopping, and ref,
// decided without, are the same decision: every field equal but the
// figures of the strategies as written that a stopped (which must fail
// the rule in ref too) and the sentence's words on them.
func sameDecision(t fataler, name string, a, ref *Result) (stops int) {
	t.Helper()
	if a.Decision == nil || ref.Decision == nil {
		if a.Decision != ref.Decision {
			t.Fatalf("%s: decision %v with early stopping, %v without", name, a.Decision, ref.Decision)
		}
		return 0
	}
	da, dr := *a.Decision, *ref.Decision
	da.Evidence.Strategies = append([]results.Outcome(nil), da.Evidence.Strategies...)
	for i, o := range da.Evidence.Strategies {
		if o.Stopped == nil {
			continue
		}
		stops++
		r := dr.Evidence.Strategies[i]
		if r.MeetsRule || r.P95Ms.Answered() || r.AnsweredShare >= MinAnsweredShare {
			t.Errorf("%s: %s was stopped (%s) but as a whole run answers %v, p95 %v", name, o.Strategy, stopText(o.Strategy, o.AnsweredShare, o.Stopped), r.AnsweredShare, r.P95Ms)
		}
		da.Evidence.Strategies[i] = r
		if da.Baseline != nil && da.Baseline.Strategy == o.Strategy {
			da.Baseline = dr.Baseline
		}
	}
	da.Sentence = baselineText.ReplaceAllString(da.Sentence, "")
	dr.Sentence = baselineText.ReplaceAllString(dr.Sentence, "")
	ja, _ := json.Marshal(da)
	jr, _ := json.Marshal(dr)
	if string(ja) != string(jr) {
		t.Errorf("%s: the decision differs with early stopping:\n%s\nwithout:\n%s", name, ja, jr)
	}
	if !reflect.DeepEqual(a.Row, ref.Row) || !reflect.DeepEqual(a.Tuned, ref.Tuned) || !reflect.DeepEqual(a.Measured, ref.Measured) {
		t.Errorf("%s: the sweep, the strategy set or the configurations measured differ with early stopping", name)
	}
	return stops
}

// fataler is what sameDecision needs of a *testing.T or *rapid.T.
type fataler interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// crowdScenario is a small scenario whose unbounded strategy stops early.
const crowdScenario = `name = "crowd"
seed = 3
duration = "40s"
[workload]
sessions = 24
think = { dist = "uniform", min = "200ms", max = "1s" }
calls = [ { tool = "t", count = 4 } ]
[services.s]
rpm = 300
latency = { dist = "lognormal", p50 = "100ms", p95 = "400ms" }
headers = "standard"
[tools.t]
service = "s"
[[strategy]]
name = "capped"
max_in_flight = 4
retry = { backoff = "full-jitter", base = "500ms", cap = "10s", attempts = 5 }
[[strategy]]
name = "unbounded"
retry = { backoff = "exponential", base = "100ms", cap = "1s", attempts = 2 }
`

// On a small scenario whose unbounded strategy stops early, and on
// generated scenarios (the decision's property test's, of which some stop
// early; not under the race detector, where they take minutes: the long
// suite decides 100 of them), the decision with early stopping is the
// decision without it.
func TestEarlyStopKeepsTheDecision(t *testing.T) {
	src := crowdScenario
	sc, err := scenarios.Parse("crowd.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Rule: Rule{MaxShare: DefaultMaxRateLimitedShare}, Parallel: 1, NoLoad: true}
	a, err := Decide(context.Background(), sc, o)
	if err != nil {
		t.Fatal(err)
	}
	o.NoEarlyStop = true
	ref, err := Decide(context.Background(), sc, o)
	if err != nil {
		t.Fatal(err)
	}
	if sameDecision(t, sc.Name, a, ref) != 1 {
		t.Errorf("unbounded did not stop early: %s", a.Decision.Sentence)
	}
	if racebuild.On {
		return
	}
	checkEarlyStop(t, 12, 5)
}

// checkEarlyStop decides n generated scenarios from rapid's seed seed with
// and without early stopping and compares the decisions.
func checkEarlyStop(t *testing.T, n int, seed uint64) {
	withChecks(t, n, seed)
	stops := 0
	rapid.Check(t, func(rt *rapid.T) {
		sc := randomDecisionScenario(rt)
		o := Options{Rule: Rule{MaxShare: DefaultMaxRateLimitedShare}, Parallel: 1, NoLoad: true}
		a, err := Decide(context.Background(), sc, o)
		if err != nil {
			rt.Fatal(err)
		}
		o.NoEarlyStop = true
		ref, err := Decide(context.Background(), sc, o)
		if err != nil {
			rt.Fatal(err)
		}
		stops += sameDecision(rt, sc.Name, a, ref)
	})
	if stops == 0 {
		t.Errorf("no run of %d scenarios stopped early: the test compares nothing", n)
	}
	t.Logf("%d of %d scenarios' runs stopped early", stops, n)
}

// fails's arithmetic at its edge: with at most 100 more turns answered and
// none answered yet, 6 failed turns keep the share below 95% (100 ÷ 106 =
// 94.3%), 5 do not (100 ÷ 105 = 95.2%); with 10 answered, 6 failed do
// (110 ÷ 116 = 94.8%), 5 do not (110 ÷ 115 = 95.7%).
func TestFailsAtTheEdge(t *testing.T) {
	s := &earlyStops{more: func(now, end time.Duration) int64 { return 100 }, window: time.Minute}
	for _, c := range []struct {
		turns, failed int64
		want          bool
	}{{6, 6, true}, {5, 5, false}, {16, 6, true}, {15, 5, false}, {0, 0, false}} {
		// With A answered and F failed: (A + 100) ÷ (A + F + 100) < 0.95.
		a := float64(c.turns - c.failed)
		oracle := (a+100)/(a+float64(c.failed)+100) < MinAnsweredShare
		if got, m := s.fails(0, c.turns, c.failed); got != c.want || got != oracle || m != 100 {
			t.Errorf("%d turns, %d failed: fails = %v (bound %d), want %v (oracle %v)", c.turns, c.failed, got, m, c.want, oracle)
		}
	}
}

// A run that may yet meet the rule is not stopped: tier3's unbounded
// under limits 100 times higher answers every turn.
func TestEarlyStopLeavesARunThatMayMeetTheRule(t *testing.T) {
	sc, err := scenarios.Builtin("tier3")
	if err != nil {
		t.Fatal(err)
	}
	c := *sc
	c.Services = append([]scenarios.Service(nil), sc.Services...)
	c.Services[0].RequestsPerMinute *= 100
	c.Services[0].TokensPerMinute *= 100
	c.Services[0].Burst *= 100
	s := newEarlyStops(&c, Rule{}, time.Minute)
	if s == nil {
		t.Fatal("no bound")
	}
	res, err := sim.Run(context.Background(), &c, s.options(sim.Options{Strategies: []string{"unbounded"}, Duration: time.Minute, Parallel: 1}))
	if err != nil {
		t.Fatal(err)
	}
	r := res.Strategies[0]
	if r.StoppedAtS != 0 || r.AnswerLatencyMs.AnsweredShare < MinAnsweredShare {
		t.Errorf("stopped at %v s, answered %v: want a whole run that meets the share", r.StoppedAtS, r.AnswerLatencyMs.AnsweredShare)
	}
}
