package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/simbench/simbench/reports"
	"github.com/simbench/simbench/results"
)

// failOnVerdicts are the verdicts --fail-on accepts.
var failOnVerdicts = []string{reports.Worse, reports.Undecided}

// CompareCmd compares two runs metric by metric.
type CompareCmd struct {
	Old       string    `arg:"" name:"a" help:"The old run: a results.json file or a run's directory."`
	New       string    `arg:"" name:"b" help:"The new run: a results.json file or a run's directory."`
	FailOn    []string  `name:"fail-on" sep:"," placeholder:"VERDICT" help:"Exit 1 when any metric's verdict is one of these (comma-separated): worse (a regression, for CI), undecided (too few seeds to tell a change from noise). Default: exit 0 whatever changed."`
	MinEffect float64   `name:"min-effect" default:"5" placeholder:"PERCENT" help:"Runs of different seeds: the smallest change, in percent of the old value, the seeds must be able to see before a change that is not significant counts as within noise; with fewer seeds it is undecided, with the seeds a side that would do (default 5; 0: the default). Runs of the same seeds count any change."`
	Stdout    io.Writer `kong:"-"` // nil: os.Stdout
}

// Run prints, per strategy in both runs and per metric that changed, the
// old and new values, the delta, the change in percent with its 95%
// interval and the verdict (see reports.Change): runs of the same seeds
// are compared seed by seed and any change counts; runs of different
// seeds by Welch's t-test over the seeds, family-wise. A missing or
// unreadable results file, two runs with no strategy in common, or a bad
// flag is invalid input (exit code 2); a verdict named by --fail-on exits
// 1 after the comparison is printed.
func (c *CompareCmd) Run() error {
	// Reading, not simulating: the collector's default pace (main sets
	// sim.GCPercent, 400, for the engine) keeps compare of two results
	// files at the size cap within 272 MiB (results.MaxFileBytes).
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	for _, v := range c.FailOn {
		if !slices.Contains(failOnVerdicts, v) {
			return codedError{fmt.Errorf("--fail-on %q: want %s (comma-separated)", v, strings.Join(failOnVerdicts, " or ")), exitInvalid}
		}
	}
	if !(c.MinEffect >= 0 && c.MinEffect < 1000) {
		return codedError{fmt.Errorf("--min-effect %v: want a percentage above 0 and below 1000, like 5", c.MinEffect), exitInvalid}
	}
	a, err := results.Read(c.Old)
	if err != nil {
		return codedError{err, exitInvalid}
	}
	b, err := results.Read(c.New)
	if err != nil {
		return codedError{err, exitInvalid}
	}
	out := c.Stdout
	if out == nil {
		out = os.Stdout
	}
	n, err := reports.Compare(out, a, b, reports.CompareOptions{MinEffect: c.MinEffect / 100})
	if errors.Is(err, reports.ErrNothingInCommon) {
		return codedError{err, exitInvalid}
	}
	if err != nil {
		return err
	}
	var failed []string
	if slices.Contains(c.FailOn, reports.Worse) && n.Worse > 0 {
		failed = append(failed, fmt.Sprintf("%d worse", n.Worse))
	}
	if slices.Contains(c.FailOn, reports.Undecided) && n.Undecided > 0 {
		failed = append(failed, fmt.Sprintf("%d undecided", n.Undecided))
	}
	if failed != nil {
		return codedError{fmt.Errorf("compare: %s (--fail-on %s)", strings.Join(failed, ", "), strings.Join(c.FailOn, ",")), exitFailure}
	}
	return nil
}
