package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

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
	minChange, err := parsePercent(c.MinChange)
	if err != nil {
		return codedError{fmt.Errorf("--min-change: %w", err), exitInvalid}
	}
	base, err := parseBenchFile(c.Baseline, nil)
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
	cur, err := parseBenchFile(file, stdin)
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

// parseBenchFile parses a benchmark output file, or stdin for "-".
func parseBenchFile(name string, stdin io.Reader) (*gate.Set, error) {
	if name == "-" {
		return gate.Parse(stdin, "stdin")
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("gate: %w", err)
	}
	defer f.Close()
	return gate.Parse(f, name)
}

// parsePercent reads "10%" or "10" as 0.10; the value must be above 0.
func parsePercent(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%")), 64)
	if err != nil || !(v > 0) || math.IsInf(v, 1) {
		return 0, fmt.Errorf("%q is not a percentage above 0 (10%% or 10)", s)
	}
	return v / 100, nil
}
