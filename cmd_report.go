package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/simbench/simbench/reports"
)

// ReportCmd re-renders a run's reports from its results.json.
type ReportCmd struct {
	Dir              string    `arg:"" name:"dir" help:"A run's output directory holding results.json, or a results file; the reports are written beside it."`
	RateLimit        float64   `placeholder:"N" help:"The service's limit in requests/s, drawn on the requests plot (default: no line)."`
	ConcurrencyLimit int       `placeholder:"N" help:"The service's limit on requests in flight, drawn on the in-flight plot (default: no line)."`
	Sweep            string    `placeholder:"FILE" help:"A JSON array of sweep points ({\"cap\", \"p50_ms\", \"p95_ms\", \"goodput_per_s\", \"rate_limited_share\"}) to plot, with the knee and chosen cap marked."`
	MaxRateLimited   float64   `name:"max-share" aliases:"max-rate-limited" default:"0.001" placeholder:"SHARE" env:"SIMBENCH_MAX_SHARE" help:"Largest share of 429s (429s ÷ attempts) the sweep's chosen cap may have (--max-rate-limited is the old name)."`
	Color            string    `enum:"auto,always,never" default:"auto" help:"Colour the table: auto (when standard output is a terminal and NO_COLOR is unset), always or never."`
	Stdout           io.Writer `kong:"-"` // nil: os.Stdout

	isTerminal func() bool // tests: pretend stdout is (not) a terminal
}

// Run reads DIR/results.json, writes the plots, report.html and report.md
// beside it (each file atomically), and prints the comparison table. A
// missing or unreadable results file is invalid input (exit code 2).
func (c *ReportCmd) Run() error {
	res, err := reports.ReadResults(c.Dir)
	if err != nil {
		return codedError{err, exitInvalid}
	}
	dir := c.Dir
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		dir = filepath.Dir(dir)
	}
	opts := reports.Options{
		RateLimitPerS:       c.RateLimit,
		ConcurrencyLimit:    c.ConcurrencyLimit,
		MaxRateLimitedShare: c.MaxRateLimited,
	}
	if c.Sweep != "" {
		if opts.Sweep, err = readSweep(c.Sweep); err != nil {
			return codedError{err, exitInvalid}
		}
	}
	names, err := reports.WriteAll(dir, res, opts)
	if err != nil {
		return err
	}
	out := c.Stdout
	if out == nil {
		out = os.Stdout
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

// readSweep reads sweep points from a JSON file.
func readSweep(path string) ([]reports.SweepPoint, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var pts []reports.SweepPoint
	if err := json.Unmarshal(data, &pts); err != nil {
		return nil, fmt.Errorf("reading sweep %s: %w", path, err)
	}
	return pts, nil
}
