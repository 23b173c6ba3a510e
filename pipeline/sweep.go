package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/simbench/simbench/decision"
	"github.com/simbench/simbench/reports"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
)

// SweepOptions are a sweep's options: the sweep the decision runs, where
// its files go and how it is printed.
type SweepOptions struct {
	// Sweep is the decision's sweep (its Seeds the seeds of each cap).
	Sweep decision.SweepOptions
	// Dir is where sweep.json and the sweep plots go.
	Dir string
	// JSON prints sweep.json instead of the table.
	JSON bool
	// Out takes the sweep.
	Out io.Writer
}

// Sweep runs the decision's sweep over sc, writes sweep.json and the sweep
// plots to Dir, and prints a table per load with the knee and the chosen
// cap marked. On Ctrl-C (ctx ends) it writes and prints the points
// measured, marked partial, and returns an Interrupted error; input the
// sweep cannot use is an Invalid one.
func Sweep(ctx context.Context, sc *scenarios.Scenario, o SweepOptions) error {
	sw, err := decision.Sweep(ctx, sc, o.Sweep)
	switch {
	case err != nil && ctx.Err() != nil && sw == nil:
		return errorf(Interrupted, "interrupted before any cap was measured: nothing written")
	case errors.As(err, new(decision.InputError)):
		return &Error{Kind: Invalid, Err: err}
	case err != nil && ctx.Err() == nil:
		return err
	}
	if err := WriteSweep(sc.Name, sw, o); err != nil {
		return err
	}
	if sw.Partial {
		return errorf(Interrupted, "interrupted: the points measured are written to %s, marked partial", filepath.Join(o.Dir, results.SweepFile))
	}
	return nil
}

// WriteSweep writes sw, the sweep of the scenario named scenario, as
// sweep.json and the sweep plots to Dir (removing an earlier sweep's
// plots this one does not draw), then prints it (as JSON with JSON).
func WriteSweep(scenario string, sw *results.Sweep, o SweepOptions) error {
	if err := results.WriteSweep(o.Dir, sw); err != nil {
		return err
	}
	written, err := reports.WriteSweepPlots(o.Dir, sw)
	if err != nil {
		return err
	}
	if err := removeStale(o.Dir, []string{"sweep.png", "sweep.svg"}, written); err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(o.Out, sw)
	}
	return printSweep(o.Out, scenario, sw, o)
}

// printSweep shows the decision (when the sweep made one) and the sweep's
// table.
func printSweep(out io.Writer, scenario string, sw *results.Sweep, o SweepOptions) error {
	printDecision(out, sw.Decision)
	title := fmt.Sprintf("sweep of %s · strategy %s as written · %s", scenario, sw.Strategy, seedsText(o.Sweep.Seeds))
	if sw.Partial {
		title = partialTitle(scenario, sw.Strategy)
	}
	if sw.Decision != nil && len(o.Sweep.Loads) == 0 {
		title = fmt.Sprintf("sweep of %s · strategy %s paced at headroom %s · %s · %s", scenario, sw.Strategy, fmtFloat(sw.Decision.Headroom), sw.Decision.Knob, seedsText(o.Sweep.Seeds))
	}
	if err := reports.WriteSweep(out, title, sw.Rows, o.Sweep.Rule.String(), o.Sweep.Rule.MaxShare); err != nil {
		return err
	}
	if sw.Decision == nil && !sw.Partial {
		fmt.Fprintln(out, "\nthe caps and strategy are as given; `simbench recommend` decides what to set over its own range")
	}
	fmt.Fprintf(out, "\nplots and sweep.json: %s\n", o.Dir)
	if sw.Decision != nil {
		// Again last: the table has scrolled the first off the screen.
		fmt.Fprintf(out, "\n%s\n", sw.Decision.Sentence)
	}
	return nil
}
