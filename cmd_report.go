package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/simbench/simbench/reports"
	"github.com/simbench/simbench/sim"
)

// SweepFile is the name `simbench sweep` gives its JSON in its output
// directory; `simbench report DIR` plots it when present.
const SweepFile = "sweep.json"

// ReportCmd re-renders a run's reports from its results.json.
type ReportCmd struct {
	Dir              string    `arg:"" name:"dir" help:"A run's or a sweep's output directory (results.json, sweep.json), or a results file; the reports are written beside it."`
	RateLimit        float64   `placeholder:"N" help:"Draw this limit in requests/s on the requests plot instead of the one results.json records."`
	ConcurrencyLimit int       `placeholder:"N" help:"Draw this limit on requests in flight on the in-flight plot instead of the one results.json records."`
	Sweep            string    `placeholder:"FILE" help:"A sweep to plot, with each load's knee and chosen cap marked: the sweep.json 'simbench sweep' writes (default: DIR/sweep.json when present), or a JSON array of sweep points."`
	MaxRateLimited   float64   `name:"max-share" aliases:"max-rate-limited" default:"0.001" placeholder:"SHARE" env:"SIMBENCH_MAX_SHARE" help:"The 429 share drawn as the sweep's threshold, for a sweep file that does not record its own (--max-rate-limited is the old name)."`
	Color            string    `enum:"auto,always,never" default:"auto" help:"Colour the table: auto (when standard output is a terminal and NO_COLOR is unset), always or never."`
	Stdout           io.Writer `kong:"-"` // nil: os.Stdout

	isTerminal func() bool // tests: pretend stdout is (not) a terminal
}

// Run reads DIR/results.json and the sweep, writes the plots, report.html
// and report.md beside them (each file atomically), and prints the
// comparison table. A sweep's directory, with sweep.json and no
// results.json, gets its sweep plot. The figures come out identical to the
// ones the run or sweep wrote: everything they draw is in the JSON. A
// missing or unreadable input is invalid (exit code 2).
func (c *ReportCmd) Run() error {
	dir := c.Dir
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		dir = filepath.Dir(dir)
	}
	sweepPath := c.Sweep
	if sweepPath == "" {
		if fi, err := os.Stat(filepath.Join(dir, SweepFile)); err == nil && !fi.IsDir() && dir == c.Dir {
			sweepPath = filepath.Join(dir, SweepFile)
		}
	}
	opts := reports.Options{
		RateLimitPerS:       c.RateLimit,
		ConcurrencyLimit:    c.ConcurrencyLimit,
		MaxRateLimitedShare: c.MaxRateLimited,
	}
	var sweepScenario string
	if sweepPath != "" {
		sw, err := readSweep(sweepPath, c.MaxRateLimited)
		if err != nil {
			return codedError{err, exitInvalid}
		}
		opts.Sweep, opts.SweepStrategy, opts.MaxRateLimitedShare = sw.Rows, sw.Strategy, sw.MaxShare
		sweepScenario = sw.Scenario
	}
	out := c.Stdout
	if out == nil {
		out = os.Stdout
	}
	res, err := reports.ReadResults(c.Dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && sweepPath != "" && c.Sweep == "" {
			// A sweep's directory: the sweep plot is all it has.
			names, err := reports.WritePlots(dir, &sim.Results{Scenario: sweepScenario}, opts)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(out, "wrote %d files in %s: the sweep plots\n", len(names), dir)
			return err
		}
		return codedError{err, exitInvalid}
	}
	names, err := reports.WriteAll(dir, res, opts)
	if err != nil {
		return err
	}
	if err := reports.WriteTable(out, res, c.colored()); err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "\nwrote %d files in %s: %s, %s and the plots\n", len(names), dir, reports.HTMLFile, reports.MarkdownFile)
	return err
}

// colored says whether the table gets ANSI colour.
func (c *ReportCmd) colored() bool {
	switch c.Color {
	case "always":
		return true
	case "never":
		return false
	}
	_, tty := console(c.Stdout, c.isTerminal)
	return colour(tty)
}

// sweepFile holds what the sweep plot needs from sweep.json (see sweepOut).
type sweepFile struct {
	Scenario string             `json:"scenario"`
	Strategy string             `json:"strategy"`
	MaxShare float64            `json:"max_rate_limited_share"`
	Rows     []reports.SweepRow `json:"rows"`
}

// readSweep reads a sweep: the object `simbench sweep` writes, or a bare
// array of points, taken as one load whose knee and chosen cap are found
// with maxShare (which also stands in for a file that records no share).
func readSweep(path string, maxShare float64) (*sweepFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var sw sweepFile
	if b := bytes.TrimSpace(data); len(b) > 0 && b[0] == '[' {
		var pts []reports.SweepPoint
		if err := json.Unmarshal(b, &pts); err != nil {
			return nil, fmt.Errorf("reading sweep %s: %w", path, err)
		}
		sw.Rows = []reports.SweepRow{reports.NewSweepRow("", pts, reports.Rule{MaxShare: maxShare})}
	} else if err := json.Unmarshal(data, &sw); err != nil {
		return nil, fmt.Errorf("reading sweep %s: %w", path, err)
	}
	if sw.MaxShare == 0 {
		sw.MaxShare = maxShare
	}
	n := 0
	for _, r := range sw.Rows {
		n += len(r.Points)
	}
	if n == 0 {
		return nil, fmt.Errorf("reading sweep %s: no sweep points", path)
	}
	return &sw, nil
}
