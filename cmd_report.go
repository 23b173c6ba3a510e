package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"

	"github.com/simbench/simbench/decision"
	"github.com/simbench/simbench/reports"
	"github.com/simbench/simbench/results"
)

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
	// Reading, not simulating: the collector's default pace (main sets
	// sim.GCPercent, 400, for the engine) keeps the strict read of a
	// results file at the size cap within about twice the file.
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	dir := c.Dir
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		dir = filepath.Dir(dir)
	}
	sweepPath := c.Sweep
	if sweepPath == "" {
		if fi, err := os.Stat(filepath.Join(dir, results.SweepFile)); err == nil && !fi.IsDir() && dir == c.Dir {
			sweepPath = filepath.Join(dir, results.SweepFile)
		}
	}
	opts := reports.Options{
		RateLimitPerS:       c.RateLimit,
		ConcurrencyLimit:    c.ConcurrencyLimit,
		MaxRateLimitedShare: c.MaxRateLimited,
	}
	var sw *results.Sweep
	if sweepPath != "" {
		var err error
		if sw, err = decision.ReadSweep(sweepPath, c.MaxRateLimited); err != nil {
			return codedError{err, exitInvalid}
		}
		opts.Sweep, opts.SweepStrategy, opts.MaxRateLimitedShare = sw.Rows, sw.Strategy, sw.MaxShare
	}
	out := c.Stdout
	if out == nil {
		out = os.Stdout
	}
	res, err := results.Read(c.Dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && sweepPath != "" && c.Sweep == "" {
			// A sweep's directory: the sweep plot is all it has.
			names, err := reports.WriteSweepPlots(dir, sw)
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
