package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/simbench/simbench/gate"
)

// exitRegression is the gate's exit code when the new run is worse than
// the baseline.
const exitRegression = 1

// GateCmd compares a benchmark run against the committed baseline.
type GateCmd struct {
	Baseline  string    `default:"bench/baseline.txt" env:"SIMBENCH_BASELINE" help:"The baseline: go test -bench output, refreshed on purpose with make baseline."`
	MinChange string    `default:"10%" help:"Smallest significant change of a noisy unit (ns/op, B/op, allocs/op) that counts, in percent."`
	File      string    `arg:"" optional:"" default:"bench/new.txt" help:"The new run's go test -bench output, or - for standard input."`
	Stdin     io.Reader `kong:"-"` // nil: os.Stdin
	Stdout    io.Writer `kong:"-"` // nil: os.Stdout
}

// Run prints the comparison table and the summary line. The exit code is
// 1 when something regressed, 2 for invalid input or missing data (a
// benchmark or deterministic unit of the baseline that the new run lacks,
// an empty file), 0 when the gate passes.
func (c *GateCmd) Run() error {
	minChange, err := gate.ParsePercent(c.MinChange)
	if err != nil {
		return codedError{fmt.Errorf("--min-change: %w", err), exitInvalid}
	}
	base, err := gate.ParseFile(c.Baseline, nil)
	if err != nil {
		return codedError{err, exitInvalid}
	}
	file := c.File
	if file == "" {
		file = "bench/new.txt"
	}
	stdin := c.Stdin
	if stdin == nil {
		stdin = os.Stdin
	}
	cur, err := gate.ParseFile(file, stdin)
	if err != nil {
		return codedError{err, exitInvalid}
	}

	report := gate.Compare(base, cur, gate.Options{MinChange: minChange})
	out := c.Stdout
	if out == nil {
		out = os.Stdout
	}
	if err := report.WriteTable(out); err != nil {
		return err
	}
	switch err := report.Err(); {
	case errors.Is(err, gate.ErrMissingData):
		return codedError{err, exitInvalid}
	case err != nil:
		return codedError{err, exitRegression}
	}
	return nil
}
