package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/simbench/simbench/check"
	"github.com/simbench/simbench/internal/proc"
	"github.com/simbench/simbench/internal/proc/proctest"
	"github.com/simbench/simbench/internal/racebuild"
)

// examples holds the example clients built so far, one build each per test
// binary: name → *exampleBuild.
var examples sync.Map

// exampleBuild is one example client's build: its path or error, once.
type exampleBuild struct {
	once sync.Once
	bin  string
	err  error
}

// sdkExamples are the example clients built on openai-go, which the test
// binary is compiled with too (cmd_serve_agent_test.go): under the race
// detector buildExample builds them with -race, so that openai-go's
// packages come from the build cache instead of being compiled a second
// time without it (minutes on a fresh clone). The other examples build
// without it: the naive client must fire fast enough to be rate limited.
var sdkExamples = map[string]bool{"openaigo": true, "nested": true}

// buildExample builds the example client examples/name, once per test
// binary, into the folder TestMain removes, and returns the binary's path.
func buildExample(t *testing.T, name string) string {
	t.Helper()
	v, _ := examples.LoadOrStore(name, new(exampleBuild))
	b := v.(*exampleBuild)
	b.once.Do(func() {
		b.bin = filepath.Join(exampleBin, name)
		args := []string{"build", "-o", b.bin}
		if racebuild.On && sdkExamples[name] {
			args = append(args, "-race")
		}
		if out, err := exec.Command("go", append(args, "./examples/"+name)...).CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build of examples/%s: %v\n%s", name, err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.bin
}

// runCheck runs simbench check on scenario with the example client name
// and its args, and returns the report and the command's error.
func runCheck(t *testing.T, scenario, name string, args ...string) (*check.Report, error) {
	t.Helper()
	return runCheckArgv(t, scenario, append([]string{buildExample(t, name)}, args...))
}

// runCheckArgv runs simbench check on scenario with the client command
// argv, and returns the report and the command's error.
func runCheckArgv(t *testing.T, scenario string, argv []string) (*check.Report, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := &CheckCmd{Scenario: scenario, Command: append([]string{"--"}, argv...), JSON: true,
		Stdout: &out, Stderr: &errOut}
	runErr := cmd.Run()
	var rep check.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("the report is not JSON: %v\n%s\nstderr:\n%s", err, out.String(), errOut.String())
	}
	return &rep, runErr
}

// verdicts maps each check of the report to its verdict.
func verdicts(rep *check.Report) map[string]check.Verdict {
	v := map[string]check.Verdict{}
	for _, l := range rep.Lines {
		v[l.Check] = l.Verdict
	}
	return v
}

// The 320 calls of its first turn go out at once, about twice tier3's burst,
// so that a client slowed by a busy machine still meets 429s (24 sessions,
// 192 calls, met none twice at a load of 12).
//
// tier3 speaks OpenAI's headers, whose retry-after-ms tells a client of a
// 10,000-requests/min key to wait about 6ms: a retry sent "at once" by a
// client the race detector and a busy machine slow down arrives later than
// that (CI saw 0 of 915 retries early). The same scenario with Retry-After
// in whole seconds tells it to wait at least 1s, which no retry sent at
// once outlasts, so early_retries measures the client rather than the load.
func TestCheckFailsAClientThatFiresEveryCallAtOnceWithoutBackoff(t *testing.T) {
	rep, err := runCheck(t, tier3WithWholeSecondRetryAfter(t), "naive", "-sessions", "40", "-turns", "3")
	if exitCode(err) != exitFailure {
		t.Fatalf("exit code %d (%v), want %d", exitCode(err), err, exitFailure)
	}
	v := verdicts(rep)
	for _, c := range []string{check.CheckInFlight, check.CheckEarly} {
		if v[c] != check.Fail {
			t.Errorf("%s is %s, want FAIL; the report:\n%+v", c, v[c], rep.Lines)
		}
	}
	// Its retries go out at once, so the herds are there; how many of
	// them check lays to the missing cap (see in_flight) rather than to
	// jitter depends on how fast the client sends: a client the machine
	// slows spreads its retries as jitter would (under the race detector
	// and a load of 6 CI saw 7 of 27 herds, this machine 1 of 27). So
	// jitter is FAIL or WARN, or PASS only with the crowds laid on the
	// missing cap, never a PASS that says nothing of them.
	for _, l := range rep.Lines {
		if l.Check != check.CheckJitter {
			continue
		}
		if l.Verdict != check.Fail && l.Verdict != check.Warn &&
			(l.Verdict != check.Pass || !strings.Contains(l.Figure, "the missing cap's doing")) {
			t.Errorf("jitter is %s (%s), want FAIL or WARN, or PASS on the missing cap's crowds", l.Verdict, l.Figure)
		}
	}
	if rep.Verdict != check.Fail {
		t.Errorf("verdict %s, want FAIL", rep.Verdict)
	}
}

// tier3WithWholeSecondRetryAfter writes tier3 with its service's headers
// "standard" (Retry-After only, in whole seconds) and returns the file.
func tier3WithWholeSecondRetryAfter(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("scenarios", "tier3.toml"))
	if err != nil {
		t.Fatal(err)
	}
	const from, to = `headers = "openai"`, `headers = "standard"`
	if bytes.Count(b, []byte(from)) != 1 {
		t.Fatalf("scenarios/tier3.toml has %d lines %s, want 1", bytes.Count(b, []byte(from)), from)
	}
	file := filepath.Join(t.TempDir(), "tier3-standard.toml")
	if err := os.WriteFile(file, bytes.Replace(b, []byte(from), []byte(to), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// wantNoFault fails t unless every line of rep passed or had nothing to
// measure, and check exited 0 or, with a NOT MEASURED line, 4.
func wantNoFault(t *testing.T, rep *check.Report, err error) {
	t.Helper()
	want := 0
	if rep.Count()[check.NotMeasured] > 0 {
		want = exitNotMeasured
	}
	if codeOf(err) != want {
		t.Errorf("exit code %d (%v), want %d; the report:\n%+v", codeOf(err), err, want, rep.Lines)
	}
	for _, l := range rep.Lines {
		if l.Verdict != check.Pass && l.Verdict != check.NotMeasured {
			t.Errorf("%s %s %s: %s (rule: %s)", l.Client, l.Verdict, l.Check, l.Figure, l.Rule)
		}
	}
}

func TestCheckPassesTheSchedRunnerAtTheRecommendedSettings(t *testing.T) {
	t.Parallel() // real time waiting on a client process: share it with the other slow ones
	rep, err := runCheck(t, "tier3", "schedrunner", "-sessions", "40", "-turns", "1")
	if len(rep.Lines) == 0 || rep.Requests != 320 {
		t.Fatalf("%d lines, %d requests; want lines for 320 requests", len(rep.Lines), rep.Requests)
	}
	wantNoFault(t, rep, err)
	// tier3 sends it no 429: nothing to measure of its retries, which is
	// exit 4, not a pass.
	if v := verdicts(rep); v[check.CheckJitter] != check.NotMeasured || exitCode(err) != exitNotMeasured {
		t.Errorf("jitter %s, exit %d; want NOT MEASURED and %d", v[check.CheckJitter], exitCode(err), exitNotMeasured)
	}
}

func TestCheckWithoutAClientFails(t *testing.T) {
	var out bytes.Buffer
	d := positiveDuration(1) // serve 1 ns: no client can come
	cmd := &CheckCmd{Scenario: "tier3", Duration: d, Stdout: &out, Stderr: new(bytes.Buffer)}
	err := cmd.Run()
	if exitCode(err) != exitFailure {
		t.Fatalf("exit code %d (%v), want %d", exitCode(err), err, exitFailure)
	}
	if !strings.Contains(out.String(), "FAIL  client        no requests arrived") {
		t.Errorf("output:\n%s", out.String())
	}
}

func TestCheckServesMetrics(t *testing.T) {
	var errOut bytes.Buffer
	cmd := &CheckCmd{Scenario: "tier3", Command: []string{"--", "true"}, Stdout: new(bytes.Buffer), Stderr: &errOut}
	cmd.Run() // no requests: a FAIL, beside the point here
	if !strings.Contains(errOut.String(), "/metrics\n") {
		t.Errorf("check names no /metrics endpoint:\n%s", errOut.String())
	}
}

func TestCheckReportsAFailingCommand(t *testing.T) {
	var out bytes.Buffer
	cmd := &CheckCmd{Scenario: "tier3", Command: []string{"--", "false"}, Stdout: &out, Stderr: new(bytes.Buffer)}
	err := cmd.Run()
	if !errors.Is(err, check.ErrCommand) || exitCode(err) != exitFailure {
		t.Fatalf("exit code %d (%v), want %d", exitCode(err), err, exitFailure)
	}
	if !strings.Contains(out.String(), "the client command exits 0") {
		t.Errorf("output:\n%s", out.String())
	}
}

// A client started through a shell, as npm, make or uv start one, leaves
// no process running once check has exited: check ends the client's whole
// process group, whether the shell waits for its background job (and
// check's --duration ends it) or exits first and leaves the job behind.
// The job here is a sleep that writes its pid; no request arrives, so
// check grades it FAIL (exit 1).
func TestCheckLeavesNoProcessOfTheClientRunning(t *testing.T) {
	for _, tt := range []struct{ name, script string }{
		{"the shell waits", `sleep 300 & echo $! > "$0"; wait`},
		{"the shell exits first", `sleep 300 & echo $! > "$0"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "pid")
			var out, errOut bytes.Buffer
			cmd := &CheckCmd{Scenario: "tier3", Duration: positiveDuration(time.Second),
				Command: []string{"--", "sh", "-c", tt.script, file}, Stdout: &out, Stderr: &errOut}
			err := cmd.Run()
			if exitCode(err) != exitFailure || !strings.Contains(out.String(), "no requests arrived") {
				t.Errorf("exit code %d (%v), want %d with no requests; output:\n%s%s", exitCode(err), err, exitFailure, out.String(), errOut.String())
			}
			// The shell wrote the pid before check could end it, and check
			// waits for the group to be gone before it returns.
			if pid := proctest.ReadPid(t, file); proc.Running(pid) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				t.Errorf("the client's background job (pid %d) still ran after check returned", pid)
			}
		})
	}
}

func TestCheckRefusesABadScenario(t *testing.T) {
	cmd := &CheckCmd{Scenario: "no-such-scenario", Stdout: new(bytes.Buffer), Stderr: new(bytes.Buffer)}
	if code := exitCode(cmd.Run()); code != exitInvalid {
		t.Fatalf("exit code %d, want %d", code, exitInvalid)
	}
}

func TestCheckGradesAnOpenAIGoAgentLoopPerConversation(t *testing.T) {
	t.Parallel() // real time waiting on a client process: share it with the other slow ones
	rep, err := runCheck(t, "tier3", "openaigo", "-sessions", "4")
	wantNoFault(t, rep, err)
	// Each conversation: a model call, its 8 lookups at once, a model call
	// that gets the text answer.
	if rep.Requests != 40 {
		t.Errorf("%d requests graded, want 4 conversations of 10", rep.Requests)
	}
	gaps := map[string]bool{}
	for _, l := range rep.Lines {
		if l.Check == check.CheckAnswerGap {
			gaps[l.Client] = true
		}
		// At most the 8 lookups of one turn: the four conversations
		// graded as one client would reach 32. Fewer than 8 when a loaded
		// machine starts the last lookup after the first was answered.
		if l.Check == check.CheckInFlight && !strings.HasPrefix(l.Client, "key:") && (l.Value < 1 || l.Value > 8) {
			t.Errorf("%s: peak %v in flight, want at most the 8 lookups of a turn", l.Client, l.Value)
		}
	}
	if len(gaps) != 4 || !gaps["session-0"] {
		t.Errorf("answer-gap lines for %v, want one per conversation (session-0 to session-3)", gaps)
	}
}

// failingScenario is a tool service that answers every request 500.
const failingScenario = `
name = "failing"
description = "a tool service that fails every request"
duration = "1m"

[workload]
sessions = 1
calls = [ { tool = "lookup", count = 2 } ]

[services.tools]
rpm = 6000
latency = { dist = "constant", value = "1ms" }
faults = { error_rate = 1.0 }

[tools.lookup]
service = "tools"

[[strategy]]
name = "unbounded"
`

func TestCheckMeasuresNestedRetries(t *testing.T) {
	t.Parallel() // real time waiting on a client process: share it with the other slow ones
	file := filepath.Join(t.TempDir(), "failing.toml")
	if err := os.WriteFile(file, []byte(failingScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	// An SDK's 3 attempts inside an agent's 5 retries of the call.
	rep, err := runCheck(t, file, "naive", "-sessions", "1", "-turns", "1", "-calls", "2", "-attempts", "3", "-outer", "5")
	if exitCode(err) != exitFailure {
		t.Fatalf("exit code %d (%v), want %d", exitCode(err), err, exitFailure)
	}
	for _, l := range rep.Lines {
		if l.Check == check.CheckAttempts && (l.Verdict != check.Fail || l.Value != 15 || !strings.Contains(l.Figure, "2 calls took 30 attempts")) {
			t.Errorf("attempts: %s %v %s, want FAIL at 15 attempts per call", l.Verdict, l.Value, l.Figure)
		}
	}
}

func TestCheckMeasuresAnSDKsRetriesInsideAnAgentsAndTheirBudget(t *testing.T) {
	t.Parallel() // real time waiting on a client process: share it with the other slow ones
	// openai-go's 3 attempts inside a sched.Runner's 5, against
	// nested-retries' first minute of failures: 8 calls of 15 attempts. A retry
	// budget of 2 on the outer layer gives 2 of the 8 calls a second try.
	bin := buildExample(t, "nested")
	tests := []struct {
		name   string
		args   []string
		want   check.Verdict
		figure string
	}{
		{"no budget", nil, check.Fail, "8 calls took 120 attempts: 15.00 per call, at most 15 (nested: 5 tries of up to 3 attempts each)"},
		{"budget", []string{"-budget-max", "2"}, check.Warn, "8 calls took 30 attempts: 3.75 per call, at most 6 (nested: 2 tries of up to 3 attempts each)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, _ := runCheckArgv(t, "nested-retries", append([]string{bin}, tt.args...))
			n := 0
			for _, l := range rep.Lines {
				if l.Check == check.CheckAttempts {
					n++
					if l.Verdict != tt.want || l.Figure != tt.figure {
						t.Errorf("attempts: %s %q, want %s %q", l.Verdict, l.Figure, tt.want, tt.figure)
					}
				}
			}
			if n != 1 {
				t.Errorf("%d attempts lines, want 1 (one client): %+v", n, rep.Lines)
			}
		})
	}
}
