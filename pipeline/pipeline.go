// Package pipeline runs what simbench's commands run: simulate → decide →
// write → gate. run, sweep and recommend each wire their flags into
// options and make one call here; the steps they share (deciding with its
// progress bars, writing outputs over an earlier run's, printing the
// decision and a sweep) are written once, in this package.
//
// Errors that mean more than a failure carry a Kind (*Error), which the
// command turns into its exit code.
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/simbench/simbench/decision"
	"github.com/simbench/simbench/reports"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sim"
)

// Kind is what an error of the pipeline means for the exit code.
type Kind int

// The kinds of error the pipeline returns in an *Error.
const (
	// Invalid: the input (a flag or a scenario) cannot be used.
	Invalid Kind = iota + 1
	// InvalidRun: a live run the machine could not keep the timing of.
	InvalidRun
	// Interrupted: the context ended the pipeline (Ctrl-C); what was
	// measured has been written, as the message says.
	Interrupted
)

// Error is an error of a Kind.
type Error struct {
	// Kind says what went wrong, and so the command's exit code.
	Kind Kind
	// Err is the error carried, whose message is the Error's.
	Err error
}

// Error returns the message of the error carried.
func (e *Error) Error() string { return e.Err.Error() }

// Unwrap returns the error carried.
func (e *Error) Unwrap() error { return e.Err }

// errorf makes an *Error of kind k.
func errorf(k Kind, format string, args ...any) *Error {
	return &Error{Kind: k, Err: fmt.Errorf(format, args...)}
}

// Bars show progress on a terminal. A nil field shows none.
type Bars struct {
	// Decision starts the bars of a decision's steps and returns the
	// decision's decision.Options.Steps and what waits for the bars to end.
	Decision func() (steps StepsFunc, wait func())
	// Sim starts the bars of a simulation with options opts, setting
	// opts.Progress, and returns what ends them (aborted: the run failed).
	Sim func(opts *sim.Options) (wait func(aborted bool))
}

// StepsFunc is decision.Options.Steps: called before each step of the
// decision's search with its name, its runs and each run's simulated
// time, it returns what follows the runs and what ends the step.
type StepsFunc = func(step string, runs int, each time.Duration) (update func(strategy string, done, total time.Duration), finish func(aborted bool))

// decide runs the decision o asks for over sc, only the arithmetic when
// arithmetic is set, showing its steps through bars when set.
func decide(ctx context.Context, sc *scenarios.Scenario, o decision.Options, arithmetic bool, bars func() (StepsFunc, func())) (*decision.Result, error) {
	run := decision.Decide
	if arithmetic {
		run = decision.Arithmetic
	}
	if bars != nil {
		steps, wait := bars()
		o.Steps = steps
		defer wait()
	}
	return run(ctx, sc, o)
}

// removeStale removes from dir the files of names, the outputs a command
// may write, that this run did not write (written): a figure an earlier run
// drew, such as sweep.png before --no-recommend, must not pass for this
// run's. Files simbench never writes are left alone.
func removeStale(dir string, names, written []string) error {
	for _, n := range names {
		if slices.Contains(written, n) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing %s, an earlier run's output: %w", filepath.Join(dir, n), err)
		}
	}
	return nil
}

// writeJSON writes v as results.Encode encodes it to out.
func writeJSON(out io.Writer, v any) error {
	data, err := results.Encode(v)
	if err != nil {
		return err
	}
	_, err = out.Write(data)
	return err
}

// printDecision prints the decision's lines, then a blank line; nothing
// when there is no decision.
func printDecision(out io.Writer, d *results.Decision) {
	if d == nil {
		return
	}
	for _, line := range reports.DecisionLines(d) {
		fmt.Fprintln(out, line)
	}
	fmt.Fprintln(out)
}

// partialTitle is the title of a sweep's table when Ctrl-C stopped it.
func partialTitle(scenario, strategy string) string {
	return "PARTIAL (interrupted) sweep of " + scenario + " · strategy " + strategy + " · the caps measured before Ctrl-C, each over the seeds that finished"
}

func fmtFloat(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

func seedsText(n int) string {
	if n == 1 {
		return "1 seed"
	}
	return fmt.Sprintf("%d seeds", n)
}
