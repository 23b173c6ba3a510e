package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/simbench/simbench/calibrate"
	"github.com/simbench/simbench/decision"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/trace"
)

func TestRunWritesResultsAndTable(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	cmd := &RunCmd{Scenario: "burst-8", Duration: positiveDuration(30 * time.Second), Out: dir, Stdout: &out}
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	res, err := results.Read(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Scenario != "burst-8" || res.DurationS != 30 || res.Partial || len(res.Strategies) == 0 {
		t.Errorf("results %+v", res)
	}
	for _, s := range res.Strategies {
		if !strings.Contains(out.String(), s.Name) {
			t.Errorf("table lacks strategy %s:\n%s", s.Name, out.String())
		}
	}
	for _, f := range []string{"report.html", "report.md", "latency-cdf.png"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	if strings.Contains(out.String(), "\x1b[") {
		t.Error("colour codes in output that is not a terminal")
	}
}

func TestRunInterruptedWritesPartial(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// No cache: with tier3 cached by an earlier test, nothing is left to
	// interrupt but the decision, and the whole comparison is written
	// (not partial), as documented.
	cmd := &RunCmd{Scenario: "tier3", Out: dir, Stdout: &bytes.Buffer{}, NoReports: true, cacheFlags: cacheFlags{NoCache: true}, parent: ctx}
	err := cmd.Run()
	var ec interface{ ExitCode() int }
	if !errors.As(err, &ec) || ec.ExitCode() != exitInterrupted {
		t.Fatalf("err = %v, want exit code %d", err, exitInterrupted)
	}
	res, rerr := results.Read(filepath.Join(dir, "results.json"))
	if rerr != nil || !res.Partial {
		t.Fatalf("results after interrupt: %v, partial %v", rerr, res != nil && res.Partial)
	}
}

func TestRunRejectsBadInput(t *testing.T) {
	tests := []struct {
		give RunCmd
		want string
	}{
		{RunCmd{Scenario: "no-such-scenario"}, "no-such-scenario"},
		{RunCmd{Scenario: "tier3", Strategy: []string{"fastest"}}, `has no strategy fastest (it has sequential, unbounded, bounded-64)`},
	}
	for _, tt := range tests {
		tt.give.Stdout = &bytes.Buffer{}
		tt.give.Out = t.TempDir()
		err := tt.give.Run()
		var ec interface{ ExitCode() int }
		if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.As(err, &ec) || ec.ExitCode() != exitInvalid {
			t.Errorf("%s: err = %v, want exit %d and %q", tt.give.Scenario, err, exitInvalid, tt.want)
		}
	}
}

func TestRunJSON(t *testing.T) {
	var out bytes.Buffer
	cmd := &RunCmd{Scenario: "burst-8", Duration: positiveDuration(10 * time.Second), Out: t.TempDir(), Stdout: &out, JSON: true, NoReports: true}
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "{") || !strings.Contains(out.String(), `"scenario": "burst-8"`) {
		t.Errorf("--json printed %q", out.String()[:min(200, out.Len())])
	}
}

// liveInvalidScenario writes burst-8 with whole-second Retry-After headers,
// which any time scale below 1 stretches: every strategy of a scaled live
// run of it is invalid, whatever the machine.
func liveInvalidScenario(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("scenarios", "burst-8.toml"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(data), `headers = "none"`, `headers = "anthropic"`, 1)
	p := filepath.Join(t.TempDir(), "burst-8-anthropic.toml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRunLiveInvalidExits3(t *testing.T) {
	file := liveInvalidScenario(t)
	dir := t.TempDir()
	var out bytes.Buffer
	cmd := bounded(t, &RunCmd{Scenario: file, Strategy: []string{"paced"}, Duration: positiveDuration(10 * time.Second), Live: true, TimeScale: 0.05,
		Out: dir, NoReports: true, Stdout: &out})
	err := cmd.Run()
	var ec interface{ ExitCode() int }
	if !errors.As(err, &ec) || ec.ExitCode() != exitInvalidRun || !strings.Contains(err.Error(), "paced") {
		t.Fatalf("err = %v, want exit %d naming the strategy", err, exitInvalidRun)
	}
	res, rerr := results.Read(filepath.Join(dir, "results.json"))
	if rerr != nil || res.Strategies[0].Invalid == "" {
		t.Fatalf("results: %v, %+v", rerr, res)
	}
	if !strings.Contains(out.String(), "paced (INVALID)") {
		t.Errorf("the table does not mark the row:\n%s", out.String())
	}

	cmd.AllowInvalid = true
	cmd.Stdout = &bytes.Buffer{}
	if err := cmd.Run(); err != nil {
		t.Errorf("with --allow-invalid: %v, want exit 0", err)
	}
}

// A run past its memory budget is refused before it allocates: invalid
// input, exit 2, saying what to change.
func TestRunPastMemoryBudgetIsExit2(t *testing.T) {
	err := (&RunCmd{Scenario: "tier3", MaxMemory: 1 << 20, Out: t.TempDir(), NoReports: true, Stdout: &bytes.Buffer{}}).Run()
	if exitCode(err) != exitInvalid || !strings.Contains(fmt.Sprint(err), "above the budget of 1.0 MiB") {
		t.Errorf("err = %v (exit %d), want exit %d naming the budget", err, exitCode(err), exitInvalid)
	}
}

// Ctrl-C after the simulation, while the decision's sweep runs: the
// comparison is written whole, without a decision, and the exit code says
// the run was interrupted.
func TestRunInterruptedWhileDeciding(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := &RunCmd{Scenario: "burst-8", Duration: positiveDuration(10 * time.Second), Out: dir, Stdout: &bytes.Buffer{}, NoReports: true, parent: ctx, afterSim: cancel}
	err := cmd.Run()
	if exitCode(err) != exitInterrupted || !strings.Contains(fmt.Sprint(err), "without the decision") {
		t.Fatalf("err = %v (exit %d), want exit %d saying the decision is left out", err, exitCode(err), exitInterrupted)
	}
	res, rerr := results.Read(filepath.Join(dir, "results.json"))
	if rerr != nil || res.Partial || res.Decision != nil || len(res.Strategies) == 0 {
		t.Fatalf("results: %v; want the whole comparison without a decision", rerr)
	}
}

// runThresholds runs tier3 for 20 virtual seconds with the flags and
// returns its output and error.
func runThresholds(t *testing.T, scenario string, flags ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	cmd := &RunCmd{Scenario: scenario, Duration: positiveDuration(20 * time.Second), Out: t.TempDir(), Stdout: &out,
		NoReports: true, NoRecommend: true, Threshold: flags}
	err := cmd.Run()
	return out.String(), err
}

func TestRunThresholdFailsNamingStrategies(t *testing.T) {
	out, err := runThresholds(t, "tier3", "answer_p95<1s")
	if err == nil || exitCode(err) != 1 {
		t.Fatalf("err = %v, want exit 1\n%s", err, out)
	}
	for _, name := range []string{"sequential", "unbounded"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error %q does not name %s", err, name)
		}
	}
	if !strings.Contains(out, "answer_p95<1s") || !strings.Contains(out, "FAIL") {
		t.Errorf("output lacks the threshold's verdicts:\n%s", out)
	}
}

func TestRunThresholdPasses(t *testing.T) {
	out, err := runThresholds(t, "tier3", "answered_share>=0", "sequential:failed_turns>=0")
	if err != nil {
		t.Fatalf("err = %v\n%s", err, out)
	}
	if strings.Contains(out, "FAIL") || !strings.Contains(out, "pass") {
		t.Errorf("output:\n%s", out)
	}
}

func TestRunThresholdWithoutDataFails(t *testing.T) {
	// Every call fails and none is retried: no turn is answered, so no
	// time to answer has data.
	dir := t.TempDir()
	path := filepath.Join(dir, "never.toml")
	src := `name = "never"
duration = "10s"
[workload]
sessions = 2
think = { dist = "lognormal", p50 = "1s", p95 = "2s" }
calls = [ { tool = "lookup", count = 1 } ]
[services.api]
rps = 5
latency = { dist = "lognormal", p50 = "10ms", p95 = "20ms" }
[services.api.faults]
error_rate = 1.0
[tools.lookup]
service = "api"
tokens = 10
[[strategy]]
name = "sequential"
fan_out = 1
`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runThresholds(t, path, "answer_p50<1h")
	if err == nil || exitCode(err) != 1 || !strings.Contains(out, "no data") {
		t.Fatalf("err = %v, want exit 1 with no data\n%s", err, out)
	}
}

func TestRunThresholdsTableHonoured(t *testing.T) {
	src, err := os.ReadFile("scenarios/burst-8.toml")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "b.toml")
	body := string(src) + "\n[thresholds]\nanswered_share = \">= 0\"\n[thresholds.no-jitter]\nanswer_p99 = \"< 1ms\"\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runThresholds(t, path)
	if err == nil || exitCode(err) != 1 || !strings.Contains(err.Error(), "answer_p99<0.001s failed for no-jitter") {
		t.Fatalf("err = %v, want the table's no-jitter threshold to fail\n%s", err, out)
	}
	if !strings.Contains(out, "b.toml:") || strings.Count(out, "answered_share>=0") != 1 {
		t.Errorf("output lacks the table's thresholds with their lines:\n%s", out)
	}
}

func TestRunThresholdFlagRejected(t *testing.T) {
	for _, f := range []string{"answer_p95", "nosuch<1", "rate_limited_share<1s", "nosuch:answer_p95<1s"} {
		_, err := runThresholds(t, "burst-8", f)
		if exitCode(err) != exitInvalid {
			t.Errorf("--threshold %q: err = %v, want exit %d", f, err, exitInvalid)
		}
	}
}

func TestRunTraceWritesSections(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.jsonl")
	cmd := &RunCmd{Scenario: "burst-8", Duration: positiveDuration(10 * time.Second), Out: t.TempDir(), Stdout: &bytes.Buffer{},
		NoReports: true, NoRecommend: true, Trace: path}
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), `"simbench_trace":1`); n < 2 || !strings.Contains(string(data), `"outcome":"success"`) {
		t.Errorf("trace has %d headers:\n%.500s", n, data)
	}
}

// roundTrip runs strategy traced of the built-in scenario name for d with a
// trace, calibrates a scenario from the trace, and runs the calibrated
// scenario's strategy compare and the original scenario with that same
// strategy, with the same seed and duration. It returns both results and
// both scenarios' binding limits.
func roundTrip(t *testing.T, name, traced, compare string, d time.Duration) (orig, cal *results.StrategyResult, origBinding, calBinding string) {
	t.Helper()
	dir := t.TempDir()
	sc, err := scenarios.Builtin(name)
	if err != nil {
		t.Fatal(err)
	}
	tracePath := filepath.Join(dir, "run.jsonl")
	w, err := trace.Create(tracePath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sim.Run(context.Background(), sc, sim.Options{Strategies: []string{traced}, Duration: d, Trace: w}); err != nil {
		w.Abort()
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	c := calibrate.New(calibrate.Options{Seed: 1})
	if err := c.ReadFile(tracePath, calibrate.ReadOptions{}); err != nil {
		t.Fatal(err)
	}
	fit, err := c.Fit()
	if err != nil {
		t.Fatal(err)
	}
	calPath := filepath.Join(dir, "cal.toml")
	if _, err := fit.WriteScenario(calPath); err != nil {
		t.Fatal(err)
	}
	csc, err := scenarios.Load(calPath)
	if err != nil {
		t.Fatal(err)
	}
	// The same strategy on both sides: calibrate's own when it writes one
	// of that name, else the original's.
	st := csc.Strategy(compare)
	if st == nil {
		if st = sc.Strategy(compare); st == nil {
			t.Fatalf("neither scenario has a strategy %q", compare)
		}
		csc.Strategies = append(csc.Strategies, *st)
	}
	csc.Seed, csc.Duration = sc.Seed, d
	osc := *sc
	osc.Strategies = []scenarios.Strategy{*st}
	run := func(s *scenarios.Scenario) *results.StrategyResult {
		res, err := sim.Run(context.Background(), s, sim.Options{Strategies: []string{compare}})
		if err != nil {
			t.Fatal(err)
		}
		return &res.Strategies[0]
	}
	binding := func(s *scenarios.Scenario) string {
		plans, _ := decision.PlanServices(s, 0.9)
		if p := decision.Dominant(plans); p != nil {
			return p.Recommendation().BindingLimit
		}
		return ""
	}
	if testing.Verbose() {
		data, _ := os.ReadFile(calPath)
		t.Logf("calibrated scenario:\n%s", data)
	}
	return run(&osc), run(csc), binding(&osc), binding(csc)
}

// TestTraceCalibrateRoundTrip is the round trip: run --trace, then
// calibrate, then run the calibrated scenario; its time to answer (p50 and
// p95) must be within 5% of the original's for the same strategy, and the
// binding limit the same. The strategies compared answer (nearly) every
// turn, so both percentiles are times. retry-after-herd is not among the
// scenarios: its fixed-window limiter and its Retry-After precision
// ("openai" headers) are not in a trace, so the calibrated scenario gets a
// token bucket and whole-second delays, and its p95 over one virtual
// minute moves by 12% from one seed to the next on the original alone.
// The traces cover five virtual minutes: one minute of research-agent holds
// some 60 model calls, too few to fit the tail of their latency to within
// the 5% asked of the p95 (a reshuffle of the draws, such as the network
// delay's, moved it by 6%).
func TestTraceCalibrateRoundTrip(t *testing.T) {
	t.Parallel() // minutes under the race detector: share the cores with the other slow ones
	for _, tc := range []struct{ scenario, traced, compare string }{
		{"tier3", "sequential", "sequential"},
		{"burst-8", "paced", "paced"},
		{"research-agent", "sequential", "sequential"},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			orig, cal, ob, cb := roundTrip(t, tc.scenario, tc.traced, tc.compare, 5*time.Minute)
			t.Logf("original p50 %v p95 %v answered %v binding %s; calibrated p50 %v p95 %v answered %v binding %s",
				orig.AnswerLatencyMs.P50, orig.AnswerLatencyMs.P95, orig.AnswerLatencyMs.AnsweredShare, ob,
				cal.AnswerLatencyMs.P50, cal.AnswerLatencyMs.P95, cal.AnswerLatencyMs.AnsweredShare, cb)
			for _, p := range []struct {
				what     string
				got, was results.AnswerMs
			}{{"p50", cal.AnswerLatencyMs.P50, orig.AnswerLatencyMs.P50}, {"p95", cal.AnswerLatencyMs.P95, orig.AnswerLatencyMs.P95}} {
				if !p.was.Answered() || !p.got.Answered() || math.Abs(float64(p.got-p.was)) > 0.05*float64(p.was) {
					t.Errorf("time to answer %s: calibrated %v ms, original %v ms: more than 5%% apart", p.what, p.got, p.was)
				}
			}
			if ob != cb {
				t.Errorf("binding limit: calibrated %q, original %q", cb, ob)
			}
		})
	}
}

// Ctrl-C keeps the trace of what was measured, as it keeps results.json;
// a run that fails leaves no trace.
func TestRunTraceInterruptedAndFailed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.jsonl")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cmd := &RunCmd{Scenario: "burst-8", Out: t.TempDir(), Stdout: &bytes.Buffer{}, NoReports: true, Trace: path, parent: ctx}
	if err := cmd.Run(); exitCode(err) != exitInterrupted {
		t.Fatalf("err = %v, want exit %d", err, exitInterrupted)
	}
	if data, err := os.ReadFile(path); err != nil || !strings.Contains(string(data), `"simbench_trace":1`) {
		t.Errorf("trace after an interrupt: %v, %q", err, data)
	}
	failed := filepath.Join(t.TempDir(), "failed.jsonl")
	cmd = &RunCmd{Scenario: "tier3", Out: t.TempDir(), Stdout: &bytes.Buffer{}, NoReports: true, Trace: failed, MaxMemory: 1 << 10}
	if err := cmd.Run(); err == nil {
		t.Fatal("a run over its memory budget succeeded")
	}
	entries, _ := os.ReadDir(filepath.Dir(failed))
	if len(entries) != 0 {
		t.Errorf("a failed run left %d files beside its trace", len(entries))
	}
}

// --no-recommend writes each service's arithmetic without the load check,
// whose demand is a simulation of its own: no offered turn rate and no
// load lines in results.json.
func TestRunNoRecommendLeavesTheLoadOut(t *testing.T) {
	dir := t.TempDir()
	cmd := &RunCmd{Scenario: "tier3", Duration: positiveDuration(10 * time.Second), Out: dir, Stdout: &bytes.Buffer{},
		NoReports: true, NoRecommend: true}
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	res, err := results.Read(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Recommendation) == 0 || res.Decision != nil {
		t.Fatalf("recommendation %v, decision %v: want the arithmetic alone", res.Recommendation, res.Decision)
	}
	for name, rec := range res.Recommendation {
		if rec.OfferedTurnsPerMinute != 0 || strings.Contains(rec.Reason, "the workload offers") {
			t.Errorf("%s: offered %v turns/min, reason %q: want no load check", name, rec.OfferedTurnsPerMinute, rec.Reason)
		}
	}
}
