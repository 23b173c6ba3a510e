package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime/debug"

	"github.com/simbench/simbench/decision"
	"github.com/simbench/simbench/gate"
	"github.com/simbench/simbench/live"
	"github.com/simbench/simbench/reports"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sim"
	"github.com/simbench/simbench/trace"
)

// RunOptions are a run's options: what to simulate, how to decide, where
// to write, what to print and what to hold the results to.
type RunOptions struct {
	// Sim are the simulation's options (MaxMemory the heap's budget, in
	// bytes); the decision runs with their seeds, duration, parallelism
	// and cache.
	Sim sim.Options
	// Live, when set, runs in real time with these options, their
	// Options replaced by Sim.
	Live *live.LiveOptions
	// Trace is the file to write every attempt to ("": none); HDR the
	// folder of the HdrHistogram logs ("": none).
	Trace, HDR string
	// Rule is the decision's choice rule; NoRecommend keeps the
	// arithmetic only, without the load check.
	Rule        decision.Rule
	NoRecommend bool
	// Dir is where results.json and, unless NoReports, the reports go.
	Dir       string
	NoReports bool
	// JSON prints results.json instead of the table, which Table shapes.
	JSON  bool
	Table reports.TableOptions
	// Thresholds are the bounds the results are held to; AllowInvalid
	// accepts a live run the machine could not keep the timing of.
	Thresholds   []scenarios.Threshold
	AllowInvalid bool
	// Out takes the results; Stderr the thresholds' verdicts with JSON.
	Out, Stderr io.Writer
	// Bars show the simulation's and the decision's progress.
	Bars Bars
	// AfterSim, when set, is called when the simulation is done, before
	// the decision (tests).
	AfterSim func()
}

// Run simulates sc, decides what to set, writes Dir/results.json (and the
// reports) atomically, prints the comparison, and holds the results to
// the thresholds. On Ctrl-C (ctx ends) it writes what was measured,
// marked partial, and returns an Interrupted error.
func Run(ctx context.Context, sc *scenarios.Scenario, o RunOptions) error {
	// The binary collects garbage lazily (sim.GCPercent); a soft limit at
	// the budget keeps the heap within it when the live set grows.
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(o.Sim.MaxMemory))
	res, runErr := simulate(ctx, sc, &o)
	if res == nil {
		return runErr
	}
	if o.AfterSim != nil {
		o.AfterSim()
	}
	if runErr == nil {
		if err := o.decide(ctx, sc, res); err != nil {
			return err
		}
	}
	if err := o.write(res); err != nil {
		return err
	}
	switch {
	case errors.Is(runErr, context.Canceled):
		return errorf(Interrupted, "interrupted: partial results written to %s", o.Dir)
	case runErr != nil:
		return runErr
	case ctx.Err() != nil && res.Decision == nil && !o.NoRecommend:
		// Ctrl-C after the simulation, while the decision's sweep ran: the
		// comparison is whole and written, the decision is left out.
		return errorf(Interrupted, "interrupted while deciding what to set: the comparison is complete and written to %s, without the decision", o.Dir)
	}
	return o.gate(res)
}

// gate holds the results to validity (a live run's timing) and to the
// thresholds.
func (o *RunOptions) gate(res *results.Results) error {
	if err := gate.CheckValid(res); err != nil && !o.AllowInvalid {
		return &Error{Kind: InvalidRun, Err: err}
	}
	if len(o.Thresholds) > 0 {
		w := o.Out
		if o.JSON {
			w = o.Stderr
		}
		return gate.CheckThresholds(w, res, o.Thresholds)
	}
	return nil
}

// decide puts the decision (what to set, verified by a sweep over seeds)
// and the arithmetic it starts from into res, as recommend computes them,
// reading from and adding to the simulation's cache the runs it needs;
// NoRecommend keeps the arithmetic only. An interrupt leaves them out and
// returns nil: the results are still written.
func (o *RunOptions) decide(ctx context.Context, sc *scenarios.Scenario, res *results.Results) error {
	do := decision.Options{Rule: o.Rule, Seeds: o.Sim.Seeds, Seed: o.Sim.Seed, Duration: o.Sim.Duration,
		Cache: o.Sim.Cache, Parallel: o.Sim.Parallel}
	bars := o.Bars.Decision
	if o.NoRecommend {
		// The arithmetic only, without the load check: the demand it
		// measures is a simulation of its own, which a run asked to skip
		// the decision should not pay for. No bars: the search's steps,
		// shown as they run since the first minute of a run is often the
		// decision, are not run.
		do.NoLoad, bars = true, nil
	}
	switch d, err := decide(ctx, sc, do, o.NoRecommend, bars); {
	case err != nil && ctx.Err() == nil:
		return err
	case err == nil:
		d.Merge(res)
	}
	return nil
}

// simulate runs the scenario, in virtual time or live, with the trace, the
// HDR logs and the progress bars o asks for, and returns what was
// measured (nil when nothing was) and the run's error.
func simulate(ctx context.Context, sc *scenarios.Scenario, o *RunOptions) (*results.Results, error) {
	opts := o.Sim
	if o.Trace != "" {
		tw, err := trace.Create(o.Trace)
		if err != nil {
			return nil, err
		}
		opts.Trace = tw
		// Aborted unless the run measured something: a failed run leaves
		// no trace, an interrupted one keeps what was measured.
		defer tw.Abort()
	}
	var hdrs sim.HDRSet
	if o.HDR != "" {
		if err := sim.MakeHDRDir(o.HDR); err != nil {
			return nil, errorf(Invalid, "--hdr %s: %w", o.HDR, err)
		}
		opts.HDR = hdrs.Add
	}
	var wait func(aborted bool)
	if o.Bars.Sim != nil {
		wait = o.Bars.Sim(&opts)
	}
	var res *results.Results
	var runErr error
	if o.Live != nil {
		lo := *o.Live
		lo.Options = opts
		res, runErr = live.RunLive(ctx, sc, lo)
	} else {
		res, runErr = sim.RunSeeds(ctx, sc, opts)
	}
	if wait != nil {
		wait(runErr != nil)
	}
	if res == nil {
		return nil, runErr
	}
	if opts.Trace != nil {
		if err := opts.Trace.Close(); err != nil {
			return nil, err
		}
	}
	if o.HDR != "" {
		if err := hdrs.WriteFiles(o.HDR); err != nil {
			return nil, fmt.Errorf("--hdr: %w", err)
		}
	}
	return res, runErr
}

// write writes Dir/results.json and, unless NoReports, the reports beside
// it, then prints the results: as JSON with JSON, else the comparison
// table and where the files are.
func (o *RunOptions) write(res *results.Results) error {
	if err := results.Write(o.Dir, res); err != nil {
		return err
	}
	var written []string
	if !o.NoReports {
		var err error
		if written, err = reports.WriteAll(o.Dir, res, reports.Options{}); err != nil {
			return fmt.Errorf("writing reports: %w", err)
		}
	}
	if err := removeStale(o.Dir, reports.Outputs(), written); err != nil {
		return err
	}
	out := o.Out
	if o.JSON {
		return writeJSON(out, res)
	}
	if res.Decision != nil {
		// The answer first and last: the table between is longer than a
		// screen, so the end of the run would scroll the first off.
		fmt.Fprintf(out, "%s\n\n", res.Decision.Sentence)
	}
	if err := reports.WriteTableWith(out, res, o.Table); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nresults: %s\n", filepath.Join(o.Dir, results.ResultsFile))
	if !o.NoReports {
		fmt.Fprintf(out, "report:  %s\n", filepath.Join(o.Dir, reports.HTMLFile))
	}
	if res.Decision != nil {
		fmt.Fprintf(out, "\n%s\n", res.Decision.Sentence)
	}
	return nil
}
