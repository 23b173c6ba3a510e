package main

import (
	"errors"
	"io"
	"os"
	"runtime/debug"

	"github.com/simbench/simbench/reports"
	"github.com/simbench/simbench/results"
)

// CompareCmd compares two runs metric by metric.
type CompareCmd struct {
	Old    string    `arg:"" name:"a" help:"The old run: a results.json file or a run's directory."`
	New    string    `arg:"" name:"b" help:"The new run: a results.json file or a run's directory."`
	Stdout io.Writer `kong:"-"` // nil: os.Stdout
}

// Run prints, per strategy in both runs and per metric that changed, the
// old and new values, the delta and the change in percent, marked better or
// worse when the change counts (see reports.Change). A missing or
// unreadable results file, or two runs with no strategy in common, is
// invalid input (exit code 2).
func (c *CompareCmd) Run() error {
	// Reading, not simulating: the collector's default pace (main sets
	// sim.GCPercent, 400, for the engine) keeps compare of two results
	// files at the size cap within 272 MiB (results.MaxFileBytes).
	defer debug.SetGCPercent(debug.SetGCPercent(100))
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
	err = reports.Compare(out, a, b)
	if errors.Is(err, reports.ErrNothingInCommon) {
		return codedError{err, exitInvalid}
	}
	return err
}
