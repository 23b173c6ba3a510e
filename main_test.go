package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
	"go.uber.org/goleak"

	"github.com/simbench/simbench/results"
)

// The commands start servers, simulations and progress bars: every goroutine
// they start must be gone when they return. The commands' run cache is a
// folder of the test run's own (SIMBENCH_CACHE), never the user's.
// asSimbench, set in the environment, makes the test binary run as
// simbench: what a live run of several processes starts as its members
// (os.Executable is the test binary). TestMain sets it for every process
// the tests start, so that none runs the tests instead.
const asSimbench = "SIMBENCH_TEST_AS_SIMBENCH"

func TestMain(m *testing.M) {
	if os.Getenv(asSimbench) != "" {
		catchSignalsEarly() // as main does
		os.Exit(runMain(os.Args[1:], os.Stdout, os.Stderr))
	}
	if err := os.Setenv(asSimbench, "1"); err != nil {
		panic(err)
	}
	dir, err := os.MkdirTemp("", "simbench-test-cache-")
	if err != nil {
		panic(err)
	}
	if err := os.Setenv(cacheEnv, dir); err != nil {
		panic(err)
	}
	if exampleBin, err = os.MkdirTemp("", "simbench-test-examples-"); err != nil {
		panic(err)
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		os.RemoveAll(dir)
		os.RemoveAll(exampleBin)
		os.Exit(code)
	}))
}

// exampleBin is the folder of the example clients the tests build
// (buildExample), removed when the tests end.
var exampleBin string

// cli runs simbench with args as main would and returns the exit code and
// what it printed.
func cli(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = runMain(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// captureStdout runs f with os.Stdout sent to a file (commands that print
// to standard output, as they do under main) and returns what it printed.
func captureStdout(t *testing.T, f func()) string {
	t.Helper()
	file, err := os.Create(filepath.Join(t.TempDir(), "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	stdout := os.Stdout
	os.Stdout = file
	defer func() { os.Stdout = stdout }()
	f()
	b, err := os.ReadFile(file.Name())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// parseOnly parses args into a CLI without running the command.
func parseOnly(t *testing.T, args ...string) *CLI {
	t.Helper()
	var c CLI
	parser, err := kong.New(&c, kong.Vars{"version": "test"}, decisionVars)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parser.Parse(args); err != nil {
		t.Fatalf("parse %q: %v", args, err)
	}
	return &c
}

// An unknown flag gets the one-line error and where to find the flags, not
// the whole help.
func TestUnknownFlagIsOneLineAndAHint(t *testing.T) {
	code, out, errOut := cli("run", "tier3", "--bogus")
	if code != exitInvalid {
		t.Errorf("exit %d, want %d", code, exitInvalid)
	}
	want := "simbench: unknown flag --bogus\nrun 'simbench run --help' for usage\n"
	if errOut != want || out != "" {
		t.Errorf("stderr %q, stdout %q; want stderr %q and nothing on stdout", errOut, out, want)
	}
}

func TestUnknownScenarioSuggestsANear(t *testing.T) {
	tests := []struct {
		give string
		want string // "" for no suggestion
	}{
		{"tier4", "did you mean tier3?"},
		{"burst8", "did you mean burst-8?"},
		{"cancle.toml", "did you mean cancel?"},
		{"completely-different", ""},
	}
	for _, tt := range tests {
		code, _, errOut := cli("run", tt.give, "--out", t.TempDir())
		if code != exitInvalid || !strings.Contains(errOut, tt.give) {
			t.Errorf("run %s: exit %d, %q", tt.give, code, errOut)
		}
		if tt.want == "" && strings.Contains(errOut, "did you mean") || !strings.Contains(errOut, tt.want) {
			t.Errorf("run %s: %q, want %q", tt.give, errOut, tt.want)
		}
	}
	var code int
	out := captureStdout(t, func() { code, _, _ = cli("validate", "tier4") })
	if code != exitInvalid || !strings.Contains(out, "did you mean tier3?") {
		t.Errorf("validate tier4: exit %d, %q", code, out)
	}
}

func TestHelpListsExitCodesAndLive(t *testing.T) {
	code, out, _ := cli("run", "--help")
	if code != 0 {
		t.Errorf("run --help exit %d", code)
	}
	for _, want := range []string{"--live", "in virtual time, or with --live", "Exit codes:", "3 invalid live run", "70 a bug", "130 interrupted", "$SIMBENCH_SEED"} {
		if !strings.Contains(out, want) {
			t.Errorf("run --help lacks %q:\n%s", want, out)
		}
	}
}

func TestVersionFromBuildInfo(t *testing.T) {
	info := func(version string, settings ...debug.BuildSetting) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) {
			return &debug.BuildInfo{Main: debug.Module{Version: version}, Settings: settings}, true
		}
	}
	rev := debug.BuildSetting{Key: "vcs.revision", Value: "0123456789abcdef0123"}
	dirty := debug.BuildSetting{Key: "vcs.modified", Value: "true"}
	clean := debug.BuildSetting{Key: "vcs.modified", Value: "false"}
	tests := []struct {
		name    string
		stamped string
		read    func() (*debug.BuildInfo, bool)
		want    string
	}{
		{"stamped with -ldflags", "v9.9.9", info("v1.2.3"), "v9.9.9"},
		{"go install of a tag", "", info("v1.2.3", rev), "v1.2.3"},
		{"built from a clean checkout", "", info("(devel)", rev, clean), "0123456789ab"},
		{"built with changes", "", info("(devel)", rev, dirty), "0123456789ab+modified"},
		{"no VCS stamp", "", info("(devel)"), "devel"},
		{"no build info", "", func() (*debug.BuildInfo, bool) { return nil, false }, "devel"},
	}
	for _, tt := range tests {
		if got := buildVersion(tt.stamped, tt.read); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
	code, out, _ := cli("--version")
	if want := buildVersion(version, debug.ReadBuildInfo) + "\n"; code != 0 || out != want || out == "dev\n" {
		t.Errorf("--version: exit %d, %q, want %q", code, out, want)
	}
}

// A panic in a command is a bug: exit 70 with the message and the stack,
// never 2, which means invalid input.
func TestPanicIsReportedAsABug(t *testing.T) {
	var errOut bytes.Buffer
	code := protect(&errOut, func(...any) error { panic("index out of range [-1]") })
	if code != exitBug {
		t.Errorf("exit %d, want %d", code, exitBug)
	}
	for _, want := range []string{"simbench: bug: index out of range [-1]", "please report", "goroutine ", "main_test.go"} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("bug report lacks %q:\n%s", want, errOut.String())
		}
	}
	if code := protect(&errOut, func(...any) error { return codedError{errors.New("bad"), exitInvalid} }); code != exitInvalid {
		t.Errorf("a coded error gave exit %d", code)
	}
	if code := protect(&errOut, func(...any) error { return errors.New("plain") }); code != exitFailure {
		t.Errorf("a plain error gave exit %d", code)
	}
}

func TestEnvironmentSetsFlags(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("SIMBENCH_SEED", "7")
	t.Setenv("SIMBENCH_DURATION", "5s")
	t.Setenv("SIMBENCH_OUT", dir)
	var code int
	var errOut string
	captureStdout(t, func() { code, _, errOut = cli("run", "burst-8", "--no-reports") })
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	res, err := results.Read(filepath.Join(dir, results.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	if res.Seed != 7 || res.DurationS != 5 {
		t.Errorf("results seed %d, duration %g s; want the environment's 7 and 5", res.Seed, res.DurationS)
	}
	t.Setenv("SIMBENCH_MAX_SHARE", "0.05")
	t.Setenv("SIMBENCH_ADDR", "127.0.0.1:9")
	c := parseOnly(t, "sweep", "tier3")
	if c.Sweep.MaxShare != 0.05 || c.Sweep.Seed == nil || *c.Sweep.Seed != 7 || c.Sweep.Out != dir {
		t.Errorf("sweep from the environment: %+v", c.Sweep)
	}
	if c := parseOnly(t, "report", "x"); c.Report.MaxRateLimited != 0.05 {
		t.Errorf("report --max-share from the environment: %g", c.Report.MaxRateLimited)
	}
	if c := parseOnly(t, "serve", "tier3"); c.Serve.Addr != "127.0.0.1:9" {
		t.Errorf("serve --addr from the environment: %q", c.Serve.Addr)
	}
}

// sweep, recommend and report name the 429 share alike, and sweep and
// recommend take --seed.
func TestCommonFlagNames(t *testing.T) {
	c := parseOnly(t, "sweep", "tier3", "--max-share", "0.01", "--seed", "5")
	if c.Sweep.MaxShare != 0.01 || c.Sweep.Seed == nil || *c.Sweep.Seed != 5 {
		t.Errorf("sweep: %+v", c.Sweep)
	}
	c = parseOnly(t, "recommend", "tier3", "--max-share", "0.01", "--seed", "5")
	if c.Recommend.MaxShare != 0.01 || c.Recommend.Seed == nil || *c.Recommend.Seed != 5 {
		t.Errorf("recommend: %+v", c.Recommend)
	}
	for _, flag := range []string{"--max-share", "--max-rate-limited"} {
		if c := parseOnly(t, "report", "dir", flag, "0.01"); c.Report.MaxRateLimited != 0.01 {
			t.Errorf("report %s: %g", flag, c.Report.MaxRateLimited)
		}
	}
}

// Shell completion answers the shell's COMP_LINE request and exits 0.
func TestCompletion(t *testing.T) {
	t.Setenv("COMP_LINE", "simbench ru")
	code, out, errOut := cli()
	if code != 0 || !strings.Contains(out, "run") || strings.Contains(out, "serve") {
		t.Errorf("completing 'simbench ru': exit %d, %q, %q", code, out, errOut)
	}
	t.Setenv("COMP_LINE", "simbench run tie")
	if code, out, _ := cli(); code != 0 || !strings.Contains(out, "tier3") {
		t.Errorf("completing a scenario name: exit %d, %q", code, out)
	}
}

// install-completions has no flag it would ignore: kongplete's --uninstall
// was read only after the line was printed.
func TestInstallCompletionsHasNoIgnoredFlag(t *testing.T) {
	if code, _, errOut := cli("install-completions", "--uninstall"); code != exitInvalid || !strings.Contains(errOut, "unknown flag --uninstall") {
		t.Errorf("install-completions --uninstall: exit %d, %q; want %d and unknown flag", code, errOut, exitInvalid)
	}
	code, out, errOut := cli("install-completions")
	switch {
	case code == 0 && !strings.Contains(out, "complete -C"):
		t.Errorf("install-completions printed %q, want a complete -C line", out)
	case code != 0 && !strings.Contains(errOut, "shell"):
		t.Errorf("install-completions: exit %d, %q; want the line or an error naming the shell", code, errOut)
	}
}
