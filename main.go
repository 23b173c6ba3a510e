// Command simbench compares strategies for running an AI agent's parallel tool
// calls against rate-limited APIs, in virtual time or live against fake
// servers on loopback, and recommends a concurrency cap.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/alecthomas/kong"
	"github.com/posener/complete"
	"github.com/willabides/kongplete"

	"github.com/simbench/simbench/decision"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sim"
)

// version may be stamped at build time with -ldflags "-X main.version=…";
// when it is not, the version comes from the build info (see buildVersion).
var version string

// CLI is the command line; each command lives in its own file.
type CLI struct {
	Version kong.VersionFlag `help:"Print the version and exit."`

	// Commands are added here, one field per command, each defined in cmd_<name>.go.
	Run       RunCmd       `cmd:"" help:"Run a scenario's strategies and compare them: in virtual time, or with --live in real time against fake servers on 127.0.0.1."`
	Sweep     SweepCmd     `cmd:"" help:"Run one strategy over a range of concurrency caps and seeds, mark the knee and the chosen cap, and print the decision."`
	Recommend RecommendCmd `cmd:"" help:"Say what to set: the cap and pace each service's limits allow, shown line by line, verified by simulation over seeds."`
	Serve     ServeCmd     `cmd:"" help:"Serve a scenario's fake rate-limited services on 127.0.0.1 until Ctrl-C, then print what the clients did."`
	Worker    WorkerCmd    `cmd:"" help:"Run one member of a live fleet (member I of N) against a provider and a Redis given by URL, starting with the others at a rendezvous on Redis; write its results for 'report --merge'."`
	Check     CheckCmd     `cmd:"" help:"Serve a scenario's services, run a client against them (simbench check NAME -- CMD ARGS...) or wait for one, and grade each client: in flight, 429s, early retries, jitter, attempts per call, cancellation, writes; exit 1 on a FAIL."`
	Validate  ValidateCmd  `cmd:"" help:"Check scenario files or built-in names and list every problem."`
	Scenarios ScenariosCmd `cmd:"" help:"List the built-in scenarios with their descriptions."`
	Report    ReportCmd    `cmd:"" help:"Re-render a run's report.html, report.md and plots from its results.json, and print the comparison."`
	Compare   CompareCmd   `cmd:"" help:"Compare two runs (results.json files or run directories) metric by metric: better or worse when the change counts (any change on the same seeds, a significant one on different seeds), else within noise or undecided. The method: docs/decision.md, How compare judges a change."`
	Gate      GateCmd      `cmd:"" help:"Compare go test -bench output against the baseline; exit 1 on a regression, 2 on missing data."`
	Calibrate CalibrateCmd `cmd:"" help:"Fit a scenario to traces of tool calls (simbench, OpenTelemetry JSON or CSV): latency, error and 429 rates, limits, fan-out, think time or arrival rate."`

	InstallCompletions InstallCompletionsCmd `cmd:"" help:"Print the line that turns on tab completion for your login shell (bash, zsh or fish); add it to the shell's startup file (delete it to turn completion off). Needs an installed binary (make build, or go install)."`
}

// exitCodesHelp ends every --help: what the exit codes mean.
const exitCodesHelp = `Exit codes: 0 ok; 1 failure, regression or threshold not met; 2 invalid input
(scenario, flag, results or benchmark file); 3 invalid live run (the machine
could not keep the scenario's timing, or the provider gave no HTTP answer;
--allow-invalid accepts it); 70 a bug in
simbench (please report the message and stack); 130 interrupted (what was
measured has been written; a second Ctrl-C or SIGTERM exits at once, writing
nothing more).

Environment: SIMBENCH_SEED, SIMBENCH_DURATION, SIMBENCH_OUT, SIMBENCH_MAX_SHARE,
SIMBENCH_ADDR, … set the flags of the same name (see each command's --help).`

func main() {
	catchSignalsEarly()
	debug.SetGCPercent(sim.GCPercent) // see sim.GCPercent for the measurement
	os.Exit(runMain(os.Args[1:], os.Stdout, os.Stderr))
}

// exitRequest carries kong's request to exit (after --help, --version, a
// completion) out of its parser as a panic, so that runMain, not kong,
// decides how the process ends.
type exitRequest struct{ code int }

// runMain parses args, runs the chosen command and returns the process's
// exit code: 0, the command's code (see exitCodesHelp), 2 for a command line
// that does not parse, 70 for a panic.
func runMain(args []string, stdout, stderr io.Writer) (code int) {
	defer recoverExit(stderr, &code)
	v := simbenchVersion()
	var cli CLI
	parser, err := kong.New(&cli,
		kong.Name("simbench"),
		kong.Description("Run an agent's parallel tool calls against rate-limited APIs, compare scheduling strategies, and pick a concurrency cap."),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
		kong.Help(helpWithExitCodes),
		kong.Vars{"version": v},
		decisionVars,
		kong.Writers(stdout, stderr),
		kong.Exit(func(code int) { panic(exitRequest{code}) }),
	)
	if err != nil {
		return reportBug(stderr, err, debug.Stack())
	}
	kongplete.Complete(parser, kongplete.WithPredictor("scenario", scenarioPredictor()))
	ctx, err := parser.Parse(args)
	if err != nil {
		fmt.Fprintf(stderr, "simbench: %v\n%s\n", err, usageHint(err))
		return exitInvalid
	}
	return protect(stderr, ctx.Run)
}

// recoverExit, deferred, turns a panic into the exit code in *code: kong's
// exit request carries its own code; any other panic is a bug, reported
// with its stack (exitBug).
func recoverExit(stderr io.Writer, code *int) {
	if r := recover(); r != nil {
		if e, ok := r.(exitRequest); ok {
			*code = e.code
			return
		}
		*code = reportBug(stderr, r, debug.Stack())
	}
}

// protect runs a command and turns its outcome into an exit code: 0, the
// code the error carries (1 when it carries none), or exitBug for a panic,
// reported with its stack.
func protect(stderr io.Writer, run func(...any) error) (code int) {
	defer recoverExit(stderr, &code)
	if err := run(); err != nil {
		fmt.Fprintln(stderr, "simbench:", err)
		return exitCode(err)
	}
	return 0
}

// reportBug prints a panic as the bug it is, with the stack, and returns
// exitBug, which CI can tell apart from invalid input.
func reportBug(stderr io.Writer, r any, stack []byte) int {
	fmt.Fprintf(stderr, "simbench: bug: %v\n\nThis is a bug in simbench, not a problem with your input; please report it with this message and the stack below.\n\n%s", r, stack)
	return exitBug
}

// usageHint says where the flags of the command a parse error is about are
// listed: "run 'simbench run --help' for usage".
func usageHint(err error) string {
	cmd := "simbench"
	var pe *kong.ParseError
	if errors.As(err, &pe) && pe.Context != nil {
		if n := pe.Context.Selected(); n != nil {
			cmd = n.FullPath()
		}
	}
	return fmt.Sprintf("run '%s --help' for usage", cmd)
}

// helpWithExitCodes prints kong's help, then what the exit codes mean.
func helpWithExitCodes(options kong.HelpOptions, ctx *kong.Context) error {
	if err := kong.DefaultHelpPrinter(options, ctx); err != nil {
		return err
	}
	_, err := fmt.Fprintf(ctx.Stdout, "\n%s\n", exitCodesHelp)
	return err
}

// scenarioPredictor completes a scenario argument: the built-in names and
// the scenario files in the current directory tree.
func scenarioPredictor() complete.Predictor {
	var names []string
	for _, info := range scenarios.List() {
		names = append(names, info.Name)
	}
	return complete.PredictOr(complete.PredictSet(names...), complete.PredictFiles("*.toml"))
}

// simbenchVersion is the version this binary reports (see buildVersion).
func simbenchVersion() string { return buildVersion(version, debug.ReadBuildInfo) }

// buildVersion is the version simbench reports (--version, results.json):
// stamped when the build set one with -ldflags, else the main module's
// version (a go install of a tagged release), else the VCS revision the
// binary was built from (12 hex digits, "+modified" when the tree had
// uncommitted changes), else "devel".
func buildVersion(stamped string, read func() (*debug.BuildInfo, bool)) string {
	if stamped != "" {
		return stamped
	}
	info, ok := read()
	if !ok || info == nil {
		return "devel"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev string
	var modified bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev == "" {
		return "devel"
	}
	rev = rev[:min(len(rev), 12)]
	if modified {
		rev += "+modified"
	}
	return rev
}

// exitCoder is implemented by errors that choose the process exit code.
type exitCoder interface{ ExitCode() int }

// exitCode looks through wrapping: kong's Context.Run joins the command's
// error with its own (errors.Join), so a plain type assertion never matches.
func exitCode(err error) int {
	var ec exitCoder
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	if errors.Is(err, sim.ErrTooLarge) {
		return exitInvalid // a scenario too large for the memory budget
	}
	if errors.As(err, new(decision.InputError)) {
		return exitInvalid // a strategy or option the scenario cannot take
	}
	return exitFailure
}

// plural is n and the word, with an s unless n is 1: "1 scenario",
// "3 scenarios".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
