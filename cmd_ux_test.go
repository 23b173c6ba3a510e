package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/kong"

	"github.com/simbench/simbench/check"
	"github.com/simbench/simbench/decision"
	"github.com/simbench/simbench/fakeapi"
	"github.com/simbench/simbench/internal/numfmt"
	"github.com/simbench/simbench/reports"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sim"
)

// parseAndRun runs simbench with args as the command line would, and
// returns the error the command ended with.
func parseAndRun(t *testing.T, args ...string) error {
	t.Helper()
	var cli CLI
	parser, err := kong.New(&cli, kong.Name("simbench"), decisionVars, kong.Exit(func(int) {}))
	if err != nil {
		t.Fatal(err)
	}
	kctx, err := parser.Parse(args)
	if err == nil {
		err = kctx.Run()
	}
	return err
}

// --seeds 0 is refused by every command that takes seeds, as invalid
// input with a message that says what is wanted; run used to take it as
// "not set".
func TestSeedsZeroRefusedEverywhere(t *testing.T) {
	for _, cmd := range []string{"run", "sweep", "recommend"} {
		err := parseAndRun(t, cmd, "burst-8", "--seeds", "0", "--duration", "1s", "--out", t.TempDir())
		var pe *kong.ParseError
		if err == nil || !errors.As(err, &pe) || !strings.Contains(err.Error(), "want at least 1 seed") {
			t.Errorf("%s --seeds 0: %v, want a parse error (exit %d) saying at least 1 seed", cmd, err, exitInvalid)
		}
	}
	t.Setenv("SIMBENCH_SEEDS", "0")
	if err := parseAndRun(t, "run", "burst-8", "--duration", "1s", "--out", t.TempDir()); err == nil || !strings.Contains(err.Error(), "want at least 1 seed") {
		t.Errorf("SIMBENCH_SEEDS=0 run: %v, want refused", err)
	}
}

// A --cap range says what it expands to, since A..B doubles.
func TestCapRangeSaysWhatItRuns(t *testing.T) {
	tests := []struct{ give, want string }{
		{"1..8", "--cap 1..8 runs the caps 1, 2, 4, 8 (A..B doubles from A; 1..8/1 runs every cap)"},
		{"2..9/3", "--cap 2..9/3 runs the caps 2, 5, 8, 9\n"},
	}
	for _, tt := range tests {
		var out, errOut bytes.Buffer
		cmd := &SweepCmd{Scenario: "burst-8", Cap: tt.give, Seeds: 1, MaxShare: 0.001, Tolerance: 0.05, Duration: positiveDuration(5 * time.Second),
			Out: t.TempDir(), cacheFlags: cacheFlags{NoCache: true}, Stdout: &out, Stderr: &errOut}
		if err := cmd.Run(); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(errOut.String(), tt.want) {
			t.Errorf("--cap %s: standard error %q, want %q", tt.give, errOut.String(), tt.want)
		}
	}
}

// The check of one answer: for one scenario and its seeds,
// recommend --emit, sweep, run's decision, results.json, report.html and
// check's in_flight rule give the same cap and pace; a client that runs
// exactly the emitted cap passes check's in_flight, whose rule names the
// arithmetic's cap beside it. hedging decides a cap above its arithmetic's.
func TestOneAnswerEverywhere(t *testing.T) {
	t.Parallel() // several decisions under the race detector
	const scenario, service = "hedging", "lookup"
	cache := cacheFlags{cache: sim.NewCache(t.TempDir(), "test", func(msg string) { t.Log(msg) })}
	var emitted bytes.Buffer
	rec := &RecommendCmd{Scenario: scenario, Seeds: decision.DefaultSeeds, MaxShare: decision.DefaultMaxRateLimitedShare, Tolerance: decision.DefaultTolerance,
		Emit: "toml", Stdout: &emitted, cacheFlags: cache}
	if err := rec.Run(); err != nil {
		t.Fatal(err)
	}
	capRe, headroomRe := regexp.MustCompile(`(?m)^max_in_flight = (\d+)$`), regexp.MustCompile(`(?m)^headroom = ([0-9.]+)$`)
	m := capRe.FindStringSubmatch(emitted.String())
	if m == nil || !strings.Contains(emitted.String(), "token_bucket = true") {
		t.Fatalf("recommend --emit toml sets no global cap or no pace:\n%s", emitted.String())
	}
	wantCap, _ := strconv.Atoi(m[1])
	headroom := 1.0
	if h := headroomRe.FindStringSubmatch(emitted.String()); h != nil {
		headroom, _ = strconv.ParseFloat(h[1], 64)
	}
	sc, err := scenarios.Builtin(scenario)
	if err != nil {
		t.Fatal(err)
	}
	wantPace := headroom * sc.Service(service).RequestsPerMinute // the emitted bucket's rate, worked out from the file

	var sweepOut, runOut bytes.Buffer
	sweep := &SweepCmd{Scenario: scenario, Seeds: decision.DefaultSeeds, MaxShare: decision.DefaultMaxRateLimitedShare, Tolerance: decision.DefaultTolerance,
		Out: t.TempDir(), JSON: true, Stdout: &sweepOut, cacheFlags: cache}
	if err := sweep.Run(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	run := &RunCmd{Scenario: scenario, Out: dir, JSON: true, Stdout: &runOut, cacheFlags: cache}
	if err := run.Run(); err != nil {
		t.Fatal(err)
	}
	var s results.Sweep
	var r, file results.Results
	if err := json.Unmarshal(sweepOut.Bytes(), &s); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(runOut.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, results.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	for name, d := range map[string]*results.Decision{"sweep": s.Decision, "run": r.Decision, "results.json": file.Decision} {
		if d == nil || d.MaxInFlight != wantCap || d.Pace[service].RequestsPerMinute != wantPace {
			t.Errorf("%s decided %+v, want max_in_flight %d and %s paced at %g requests/min as recommend --emit", name, d, wantCap, service, wantPace)
		}
	}
	html, err := os.ReadFile(filepath.Join(dir, reports.HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("set max_in_flight = %d and pace %s at %s requests/min", wantCap, service, numfmt.Num(wantPace))
	if !strings.Contains(string(html), want) {
		t.Errorf("report.html does not say %q", want)
	}

	d, err := (&CheckCmd{cacheFlags: cache}).decide(t.Context(), sc, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	rules := check.RulesFor(sc, d)
	plans, _ := decision.PlanServices(sc, headroom)
	arithmetic := plans[0].MaxInFlight
	if arithmetic == wantCap {
		t.Fatalf("the arithmetic's cap is the decision's, %d: the scenario no longer tells the two apart", wantCap)
	}
	// A client at exactly the emitted cap: wantCap attempts overlapping.
	var recs []fakeapi.Record
	for i := range wantCap {
		recs = append(recs, fakeapi.Record{Client: "c", Service: service, Identity: uint64(i), Arrived: time.Millisecond, Answered: time.Second,
			Status: 200, Kind: fakeapi.KindOK, Admitted: true})
	}
	for _, l := range check.Grade(scenario, recs, rules).Lines {
		if l.Check != check.CheckInFlight {
			continue
		}
		wantRule := fmt.Sprintf("at most %d in flight (the cap simbench recommend --emit sets, strategy %s paced at %s requests/min; the Little's-law arithmetic alone gives %d",
			wantCap, d.Tuned.Name, numfmt.Num(wantPace), arithmetic)
		if l.Verdict != check.Pass || !strings.HasPrefix(l.Rule, wantRule) {
			t.Errorf("in_flight of a client at the emitted cap: %s, rule %q; want PASS by %q…", l.Verdict, l.Rule, wantRule)
		}
	}
}

// A service written rps = 100 is paced in requests/s, the file's unit, in
// the decision's sentence and settings; one written rpm stays per minute.
func TestPaceInTheFilesUnit(t *testing.T) {
	tests := []struct{ scenario, want, wantNot string }{
		{"retry-after-herd", `pace api at [0-9.]+ requests/s\b`, "requests/min"},
		{"hedging", `pace lookup at [0-9,]+ requests/min`, "requests/s"},
	}
	for _, tt := range tests {
		var out bytes.Buffer
		rec := &RecommendCmd{Scenario: tt.scenario, Seeds: 1, MaxShare: decision.DefaultMaxRateLimitedShare, Tolerance: decision.DefaultTolerance,
			Duration: positiveDuration(30 * time.Second), Stdout: &out, cacheFlags: cacheFlags{NoCache: true}}
		if err := rec.Run(); err != nil {
			t.Fatal(err)
		}
		first, settings, _ := strings.Cut(out.String(), "\n")
		settings, _, _ = strings.Cut(settings, "\n")
		if !regexp.MustCompile(tt.want).MatchString(first) || strings.Contains(first, tt.wantNot) || strings.Contains(settings, tt.wantNot) {
			t.Errorf("%s: sentence %q and settings %q: want %q, never %q", tt.scenario, first, settings, tt.want, tt.wantNot)
		}
	}
}

// run, sweep and recommend print the one-line answer first and again as
// their last line, so that it is on the screen when they end.
func TestAnswerFirstAndLast(t *testing.T) {
	d := positiveDuration(30 * time.Second)
	cache := cacheFlags{cache: sim.NewCache(t.TempDir(), "test", func(msg string) { t.Log(msg) })}
	var runOut, sweepOut, recOut bytes.Buffer
	cmds := map[string]interface{ Run() error }{
		"run": &RunCmd{Scenario: "retry-after-herd", Duration: d, Seeds: 1, Out: t.TempDir(), NoReports: true, Stdout: &runOut, cacheFlags: cache},
		"sweep": &SweepCmd{Scenario: "retry-after-herd", Duration: d, Seeds: 1, MaxShare: decision.DefaultMaxRateLimitedShare, Tolerance: decision.DefaultTolerance,
			Out: t.TempDir(), Stdout: &sweepOut, Stderr: io.Discard, cacheFlags: cache},
		"recommend": &RecommendCmd{Scenario: "retry-after-herd", Duration: d, Seeds: 1, MaxShare: decision.DefaultMaxRateLimitedShare, Tolerance: decision.DefaultTolerance,
			Stdout: &recOut, cacheFlags: cache},
	}
	outs := map[string]*bytes.Buffer{"run": &runOut, "sweep": &sweepOut, "recommend": &recOut}
	var answer string
	for _, name := range []string{"recommend", "sweep", "run"} {
		if err := cmds[name].Run(); err != nil {
			t.Fatal(name, err)
		}
		lines := strings.Split(strings.TrimRight(outs[name].String(), "\n"), "\n")
		first, last := lines[0], lines[len(lines)-1]
		if answer == "" {
			answer = first
		}
		if !strings.HasPrefix(first, "with strategy ") || first != answer || last != answer {
			t.Errorf("%s: first line %q, last %q; want both the answer %q", name, first, last, answer)
		}
	}
}

// A threshold copied from the table's milliseconds is refused, exit 2,
// not read as seconds.
func TestThresholdBareTimeRefused(t *testing.T) {
	err := parseAndRun(t, "run", "burst-8", "--duration", "1s", "--no-recommend", "--no-cache", "--out", t.TempDir(), "--threshold", "answer_p95<5000")
	if exitCode(err) != exitInvalid || !strings.Contains(err.Error(), "write the unit, such as 5000ms or 5000s") {
		t.Errorf("--threshold answer_p95<5000: %v (exit %d), want exit %d saying to write the unit", err, exitCode(err), exitInvalid)
	}
}

// A run removes from --out the outputs an earlier run wrote that it did
// not (sweep.png after --no-recommend, every report after --no-reports),
// and leaves the user's own files alone.
func TestRunRemovesStaleOutputs(t *testing.T) {
	dir := t.TempDir()
	cache := cacheFlags{cache: sim.NewCache(t.TempDir(), "test", func(msg string) { t.Log(msg) })}
	run := func(noRecommend, noReports bool) {
		t.Helper()
		cmd := &RunCmd{Scenario: "retry-after-herd", Duration: positiveDuration(30 * time.Second), Seeds: 1, Out: dir,
			NoRecommend: noRecommend, NoReports: noReports, Stdout: io.Discard, cacheFlags: cache}
		if err := cmd.Run(); err != nil {
			t.Fatal(err)
		}
	}
	exists := func(name string) bool {
		_, err := os.Stat(filepath.Join(dir, name))
		return err == nil
	}
	run(false, false)
	if !exists("sweep.png") || !exists("report.html") {
		t.Fatal("a run with its decision wrote no sweep.png or report.html")
	}
	mine := []string{"notes.txt", "mine.png", "sweep-old.png"}
	for _, n := range mine {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("mine"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run(true, false)
	if exists("sweep.png") || exists("sweep.svg") || !exists("report.html") || !exists("in-flight.png") {
		t.Errorf("after --no-recommend: sweep.png %v, sweep.svg %v, report.html %v, in-flight.png %v; want only the sweep gone",
			exists("sweep.png"), exists("sweep.svg"), exists("report.html"), exists("in-flight.png"))
	}
	run(true, true)
	for _, n := range reports.Outputs() {
		if exists(n) {
			t.Errorf("after --no-reports, %s is still there", n)
		}
	}
	for _, n := range append(mine, results.ResultsFile) {
		if !exists(n) {
			t.Errorf("%s was removed", n)
		}
	}
}
