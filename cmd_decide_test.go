package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/kong"

	"github.com/simbench/simbench/calibrate"
	"github.com/simbench/simbench/decision"
	"github.com/simbench/simbench/results"
)

// The check: run, sweep and recommend print the same decision for
// tier3 (here over 40 virtual seconds and 2 seeds, to stay quick), and
// results.json carries it as one object.
func TestRunSweepRecommendAgree(t *testing.T) {
	t.Parallel() // minutes under the race detector: share the cores with the other slow ones
	d := positiveDuration(40 * time.Second)
	var runOut, sweepOut, recOut bytes.Buffer
	run := &RunCmd{Scenario: "tier3", Duration: d, Seeds: 2, Out: t.TempDir(), NoReports: true, JSON: true, Stdout: &runOut}
	if err := run.Run(); err != nil {
		t.Fatal(err)
	}
	sweep := &SweepCmd{Scenario: "tier3", Duration: d, Seeds: 2, MaxShare: decision.DefaultMaxRateLimitedShare, Tolerance: decision.DefaultTolerance, Out: t.TempDir(), JSON: true, Stdout: &sweepOut}
	if err := sweep.Run(); err != nil {
		t.Fatal(err)
	}
	rec := &RecommendCmd{Scenario: "tier3", Duration: d, Seeds: 2, MaxShare: decision.DefaultMaxRateLimitedShare, Tolerance: decision.DefaultTolerance, JSON: true, Stdout: &recOut}
	if err := rec.Run(); err != nil {
		t.Fatal(err)
	}
	var r results.Results
	var s results.Sweep
	var c decision.Report
	for _, x := range []struct {
		b *bytes.Buffer
		v any
	}{{&runOut, &r}, {&sweepOut, &s}, {&recOut, &c}} {
		if err := json.Unmarshal(x.b.Bytes(), x.v); err != nil {
			t.Fatal(err)
		}
	}
	if r.Decision == nil || s.Decision == nil || c.Decision == nil {
		t.Fatalf("a decision is missing: run %v, sweep %v, recommend %v", r.Decision != nil, s.Decision != nil, c.Decision != nil)
	}
	want := c.Decision
	for name, got := range map[string]*results.Decision{"run": r.Decision, "sweep": s.Decision} {
		if got.Sentence != want.Sentence || got.MaxInFlight != want.MaxInFlight || got.Pace["openai"] != want.Pace["openai"] {
			t.Errorf("%s decided %q, recommend %q", name, got.Sentence, want.Sentence)
		}
	}
	if want.MaxInFlight < 1 || want.Headroom <= 0 || want.Pace["openai"].RequestsPerMinute != 10000*want.Headroom || !strings.HasPrefix(want.Sentence, "with strategy bounded-64, set max_in_flight = ") {
		t.Errorf("decision %+v: want a cap, openai paced at the headroom of its 10,000 requests/min, a sentence that says set", want)
	}
	if len(want.Evidence.Seeds) != 2 || want.Expected.P95LoMs > want.Expected.P95Ms || want.Expected.P95HiMs < want.Expected.P95Ms {
		t.Errorf("evidence %+v, expected %+v: want 2 seeds and an interval around the p95", want.Evidence, want.Expected)
	}
	if r.Recommendation["openai"].VerifiedCap != want.MaxInFlight {
		t.Errorf("results.json's recommendation verified %d, the decision %d", r.Recommendation["openai"].VerifiedCap, want.MaxInFlight)
	}
}

// Flags no run can use are invalid input, exit 2, with a message.
func TestDecisionFlagsRejected(t *testing.T) {
	for _, args := range [][]string{
		{"run", "tier3", "--duration", "0s"},
		{"sweep", "tier3", "--duration", "0s"},
		{"recommend", "tier3", "--seeds", "0"},
		{"sweep", "tier3", "--seeds", "0"},
		{"run", "tier3", "--seeds", "-1"},
		{"sweep", "tier3", "--cap", "8..1"},
		{"recommend", "tier3", "--emit", "yaml"},
	} {
		var cli CLI
		parser, err := kong.New(&cli, kong.Name("simbench"), decisionVars, kong.Exit(func(int) {}))
		if err != nil {
			t.Fatal(err)
		}
		kctx, err := parser.Parse(args)
		if err == nil {
			err = kctx.Run()
		}
		if err == nil {
			t.Errorf("%v: accepted", args)
			continue
		}
		var pe *kong.ParseError
		var ec interface{ ExitCode() int }
		if !errors.As(err, &pe) && !(errors.As(err, &ec) && ec.ExitCode() == exitInvalid) {
			t.Errorf("%v: %v, want a parse error or exit %d", args, err, exitInvalid)
		}
	}
}

// The check on compare: two seed ranges of tier3, five seeds each,
// show no significant change; halving the cap is worse, significantly.
func TestCompareSeedsOfTier3(t *testing.T) {
	d := positiveDuration(time.Minute)
	run := func(file string, seed uint64) string {
		t.Helper()
		dir := t.TempDir()
		cmd := &RunCmd{Scenario: file, Strategy: []string{"bounded-64"}, Seed: &seed, Seeds: 5, Duration: d, Out: dir, NoReports: true, NoRecommend: true, Stdout: &bytes.Buffer{}}
		if err := cmd.Run(); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	a, b := run("tier3", 42), run("tier3", 7)
	var out bytes.Buffer
	if err := (&CompareCmd{Old: a, New: b, Stdout: &out}).Run(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "0 better, 0 worse") {
		t.Errorf("seeds 42–46 against 7–11: want no significant change:\n%s", out.String())
	}

	src, err := os.ReadFile("scenarios/tier3.toml")
	if err != nil {
		t.Fatal(err)
	}
	halved := strings.Replace(string(src), "max_in_flight = 64", "max_in_flight = 32", 1)
	file := t.TempDir() + "/tier3.toml"
	if err := os.WriteFile(file, []byte(halved), 0o644); err != nil {
		t.Fatal(err)
	}
	c := run(file, 7)
	out.Reset()
	if err := (&CompareCmd{Old: a, New: c, Stdout: &out}).Run(); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	var p95 string
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, "  p95 ms") {
			p95 = line
		}
	}
	// Only a strategy changed: the scenario's conditions are the same.
	if !strings.HasSuffix(strings.TrimSpace(p95), "worse") || strings.Contains(text, "scenario file differs") {
		t.Errorf("halved cap: want p95 worse, significantly, and no warning about the conditions:\n%s", text)
	}
}

// recommend says when it extended the range it swept.
func TestRecommendSaysItExtended(t *testing.T) {
	var out bytes.Buffer
	rec := &RecommendCmd{Scenario: "mixed-read-write", Duration: positiveDuration(2 * time.Minute), Seeds: 1, MaxShare: 0.001, Tolerance: 0.05, Stdout: &out}
	if err := rec.Run(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "range extended: the chosen cap") {
		t.Errorf("recommend does not say it extended the range:\n%s", out.String())
	}
}

// TestDecisionDefaultsAreTheDecisions builds the command line as main does
// and checks that each decision flag's default, and each help text that
// names a default of the decision, is the decision's constant: a command
// that wrote its own literal, and a literal that drifted, fail here.
func TestDecisionDefaultsAreTheDecisions(t *testing.T) {
	var cli CLI
	parser, err := kong.New(&cli, kong.Name("simbench"), kong.Vars{"version": "test"}, decisionVars)
	if err != nil {
		t.Fatal(err)
	}
	flags := map[string]*kong.Flag{}
	for _, n := range parser.Model.Node.Children {
		for _, f := range n.Flags {
			flags[n.Name+" --"+f.Name] = f
		}
	}
	want := map[string]float64{
		"--max-share": decision.DefaultMaxRateLimitedShare,
		"--tolerance": decision.DefaultTolerance,
		"--seeds":     decision.DefaultSeeds,
	}
	for _, cmd := range []string{"sweep", "recommend"} {
		for flag, w := range want {
			f := flags[cmd+" "+flag]
			if f == nil {
				t.Errorf("%s has no %s flag", cmd, flag)
				continue
			}
			if got, err := strconv.ParseFloat(f.Default, 64); err != nil || got != w {
				t.Errorf("%s %s: default %q, the decision's constant is %v", cmd, flag, f.Default, w)
			}
		}
	}
	for key, w := range map[string]float64{
		"report --max-share": decision.DefaultMaxRateLimitedShare,
		"calibrate --ks-max": calibrate.DefaultKSMax,
	} {
		if f := flags[key]; f == nil {
			t.Errorf("no flag %s", key)
		} else if got, err := strconv.ParseFloat(f.Default, 64); err != nil || got != w {
			t.Errorf("%s: default %q, the package's constant is %v", key, f.Default, w)
		}
	}
	for key, text := range map[string]string{
		"calibrate --ks-max":   "(default " + strconv.FormatFloat(calibrate.DefaultKSMax, 'g', -1, 64) + ")",
		"run --seeds":          strconv.Itoa(decision.DefaultSeeds) + " for the decision",
		"recommend --headroom": "else " + strconv.FormatFloat(decision.DefaultHeadroom, 'g', -1, 64) + ")",
	} {
		if f := flags[key]; f == nil || !strings.Contains(f.Help, text) {
			t.Errorf("%s: help does not say %q", key, text)
		}
	}
}
