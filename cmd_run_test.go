package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/simbench/simbench/reports"
)

func TestRunWritesResultsAndTable(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	cmd := &RunCmd{Scenario: "burst-8", Duration: positiveDuration(30 * time.Second), Out: dir, Stdout: &out}
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	res, err := reports.ReadResults(filepath.Join(dir, "results.json"))
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
	cmd := &RunCmd{Scenario: "tier3", Out: dir, Stdout: &bytes.Buffer{}, NoReports: true, parent: ctx}
	err := cmd.Run()
	var ec interface{ ExitCode() int }
	if !errors.As(err, &ec) || ec.ExitCode() != exitInterrupted {
		t.Fatalf("err = %v, want exit code %d", err, exitInterrupted)
	}
	res, rerr := reports.ReadResults(filepath.Join(dir, "results.json"))
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
	cmd := &RunCmd{Scenario: file, Strategy: []string{"paced"}, Duration: positiveDuration(10 * time.Second), Live: true, TimeScale: 0.05,
		Out: dir, NoReports: true, Stdout: &out}
	err := cmd.Run()
	var ec interface{ ExitCode() int }
	if !errors.As(err, &ec) || ec.ExitCode() != exitInvalidRun || !strings.Contains(err.Error(), "paced") {
		t.Fatalf("err = %v, want exit %d naming the strategy", err, exitInvalidRun)
	}
	res, rerr := reports.ReadResults(filepath.Join(dir, "results.json"))
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
	for in, want := range map[string]int64{"512MiB": 512 << 20, "4GiB": 4 << 30, "2GB": 2e9, "1000": 1000} {
		if got, err := parseByteSize(in); err != nil || got != want {
			t.Errorf("parseByteSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"0", "-1GiB", "lots", "1e30GiB"} {
		if _, err := parseByteSize(bad); err == nil {
			t.Errorf("parseByteSize(%q) accepted", bad)
		}
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
