package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/simbench/simbench/reports"
	"github.com/simbench/simbench/sim"
)

// RunCmd runs a scenario's strategies and compares them.
type RunCmd struct {
	Scenario     string        `arg:"" name:"file|name" predictor:"scenario" help:"A scenario file, or the name of a built-in scenario (see 'simbench scenarios')."`
	Strategy     []string      `short:"s" sep:"," placeholder:"NAME" help:"Run only these strategies, comma-separated (default: all)."`
	Seed         *uint64       `env:"SIMBENCH_SEED" help:"Replace the scenario's seed."`
	Duration     time.Duration `placeholder:"10m" env:"SIMBENCH_DURATION" help:"Replace the scenario's (virtual) duration."`
	Out          string        `short:"o" placeholder:"DIR" env:"SIMBENCH_OUT" help:"Where results.json, the plots and the reports go (default: out/<scenario>)."`
	JSON         bool          `help:"Print results.json to standard output instead of the table."`
	NoReports    bool          `help:"Write results.json only: no plots, report.html or report.md."`
	Parallel     int           `env:"SIMBENCH_PARALLEL" help:"Strategies simulated at once (default: the number of CPUs)."`
	Live         bool          `help:"Run in real time with real HTTP clients against fake servers on 127.0.0.1, one strategy after another."`
	TimeScale    float64       `default:"1" placeholder:"F" env:"SIMBENCH_TIME_SCALE" help:"With --live: multiply every duration by F and divide every rate by F (0.01 plays 10 minutes in 6 seconds)."`
	AllowInvalid bool          `help:"With --live: exit 0 even when a strategy's run is invalid (the machine could not keep its timing); it is still marked invalid. Without it such a run exits 3."`
	Stdout       io.Writer     `kong:"-"` // nil: os.Stdout

	isTerminal func() bool     // tests: pretend stdout is (not) a terminal
	parent     context.Context // tests: a context to cancel in place of Ctrl-C
}

// Run simulates, writes DIR/results.json (and the reports) atomically, and
// prints the comparison. On Ctrl-C it writes what was measured, marked
// partial, and exits with code 130.
func (c *RunCmd) Run() error {
	sc, err := openScenario(c.Scenario)
	if err != nil {
		return err
	}
	out, tty := console(c.Stdout, c.isTerminal)
	ctx, stop := interruptible(c.parent)
	defer stop()

	opts := sim.Options{Strategies: c.Strategy, Seed: c.Seed, Duration: c.Duration, Parallel: c.Parallel}
	if _, err := opts.Apply(sc); err != nil {
		return codedError{err, exitInvalid}
	}
	scale := c.TimeScale
	if scale == 0 {
		scale = 1 // the flag's default, for callers that build the struct
	}
	if scale < 0 || (scale != 1 && !c.Live) {
		return codedError{fmt.Errorf("--time-scale must be above 0 and goes with --live (got %g)", c.TimeScale), exitInvalid}
	}
	var bars *progress
	if tty && !c.JSON {
		bars = newProgress(out, sc, &opts)
		opts.Progress = bars.update
	}
	var res *sim.Results
	var runErr error
	if c.Live {
		res, runErr = sim.RunLive(ctx, sc, sim.LiveOptions{Options: opts, TimeScale: scale})
	} else {
		res, runErr = sim.Run(ctx, sc, opts)
	}
	if bars != nil {
		bars.wait(runErr != nil)
	}
	if res == nil {
		return runErr
	}
	plans, _ := planServices(sc, 0)
	for _, p := range plans {
		if res.Recommendation == nil {
			res.Recommendation = map[string]sim.Recommendation{}
		}
		res.Recommendation[p.Service.Name] = p.Recommendation()
	}
	if runErr == nil {
		// What the workload offers, against what the limits sustain: a run
		// whose load does not fit says so under its recommendation. An
		// interrupt here leaves the check out and still writes the results.
		load, err := checkLoad(ctx, sc, opts, plans)
		switch {
		case err != nil && ctx.Err() == nil:
			return err
		case load != nil:
			load.Annotate(res.Recommendation)
		}
	}

	dir := c.Out
	if dir == "" {
		dir = filepath.Join("out", sc.Name)
	}
	if err := writeResults(dir, res, !c.NoReports, reportOptions(plans)); err != nil {
		return err
	}
	if c.JSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			return err
		}
	} else {
		if err := reports.WriteTable(out, res, colour(tty)); err != nil {
			return err
		}
		fmt.Fprintf(out, "\nresults: %s\n", filepath.Join(dir, reports.ResultsFile))
		if !c.NoReports {
			fmt.Fprintf(out, "report:  %s\n", filepath.Join(dir, reports.HTMLFile))
		}
	}
	if runErr != nil {
		if errors.Is(runErr, context.Canceled) {
			return codedError{fmt.Errorf("interrupted: partial results written to %s", dir), exitInterrupted}
		}
		return runErr
	}
	if err := invalidRun(res); err != nil && !c.AllowInvalid {
		return err
	}
	return nil
}

// invalidRun is the exit-3 error of a run with an invalid strategy (a live
// run the machine could not keep the timing of), naming each; nil when
// every strategy is valid.
func invalidRun(res *sim.Results) error {
	var names []string
	for _, s := range res.Strategies {
		if s.Invalid != "" {
			names = append(names, s.Name)
		}
	}
	if len(names) == 0 && res.Invalid == "" {
		return nil
	}
	what := "the run is invalid"
	if len(names) > 0 {
		what = "invalid: " + strings.Join(names, ", ")
	}
	return codedError{fmt.Errorf("%s (%s); the results are written and marked so; --allow-invalid exits 0 anyway", what, res.Invalid), exitInvalidRun}
}

// reportOptions draws the limits of the service most calls go to on the
// timeline plots. (The plans' arithmetic reaches the reports through the
// recommendation in the results, so `simbench report` can redraw it.)
func reportOptions(plans []reports.Plan) reports.Options {
	var opts reports.Options
	if p := dominant(plans); p != nil {
		opts.RateLimitPerS = p.Service.RPM / 60
		opts.ConcurrencyLimit = p.Service.MaxConcurrent
	}
	return opts
}

// writeResults writes results.json atomically, then the reports.
func writeResults(dir string, res *sim.Results, withReports bool, opts reports.Options) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := reports.WriteFileAtomic(filepath.Join(dir, reports.ResultsFile), append(data, '\n'), 0o644); err != nil {
		return err
	}
	if withReports {
		if _, err := reports.WriteAll(dir, res, opts); err != nil {
			return fmt.Errorf("writing reports: %w", err)
		}
	}
	return nil
}
