// Command simbench compares strategies for running an AI agent's parallel tool
// calls against rate-limited APIs, in virtual time or live against fake
// servers on loopback, and recommends a concurrency cap.
package main

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"

	"github.com/alecthomas/kong"

	"github.com/simbench/simbench/sim"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// CLI is the command line; each command lives in its own file.
type CLI struct {
	Version kong.VersionFlag `help:"Print the version and exit."`

	// Commands are added here, one field per command, each defined in cmd_<name>.go.
	Run       RunCmd       `cmd:"" help:"Run a scenario's strategies in virtual time and compare them."`
	Sweep     SweepCmd     `cmd:"" help:"Run one strategy over a range of concurrency caps and mark the knee and the best cap."`
	Recommend RecommendCmd `cmd:"" help:"Compute the concurrency cap each service's limits allow, shown line by line, and verify it by simulation."`
	Serve     ServeCmd     `cmd:"" help:"Serve a scenario's fake rate-limited services on 127.0.0.1 until Ctrl-C, then print what the clients did."`
	Validate  ValidateCmd  `cmd:"" help:"Check scenario files or built-in names and list every problem."`
	Scenarios ScenariosCmd `cmd:"" help:"List the built-in scenarios with their descriptions."`
	Report    ReportCmd    `cmd:"" help:"Re-render a run's report.html, report.md and plots from its results.json, and print the comparison."`
	Compare   CompareCmd   `cmd:"" help:"Compare two runs (results.json files or run directories) metric by metric, better or worse marked."`
	Gate      GateCmd      `cmd:"" help:"Compare go test -bench output against the baseline; exit 1 on a regression, 2 on missing data."`
	Calibrate CalibrateCmd `cmd:"" help:"Fit a scenario to traces of tool calls (simbench, OpenTelemetry JSON or CSV): latency, error and 429 rates, limits, fan-out, think time or arrival rate."`
}

func main() {
	var cli CLI
	sim.Version = version
	debug.SetGCPercent(sim.GCPercent) // see sim.GCPercent for the measurement
	ctx := kong.Parse(&cli,
		kong.Name("simbench"),
		kong.Description("Run an agent's parallel tool calls against rate-limited APIs, compare scheduling strategies, and pick a concurrency cap."),
		kong.UsageOnError(),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
		kong.Vars{"version": version},
		// A command line kong cannot parse is invalid input, like a bad
		// scenario file: exit 2, not kong's own 80.
		kong.Exit(func(code int) {
			if code == 80 {
				code = exitInvalid
			}
			os.Exit(code)
		}),
	)
	if err := ctx.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "simbench:", err)
		os.Exit(exitCode(err))
	}
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
	return 1
}
