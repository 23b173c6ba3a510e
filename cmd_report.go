package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/simbench/simbench/decision"
	"github.com/simbench/simbench/gate"
	"github.com/simbench/simbench/live"
	"github.com/simbench/simbench/reports"
	"github.com/simbench/simbench/results"
)

// ReportCmd re-renders a run's reports from its results.json.
type ReportCmd struct {
	Dir              string    `arg:"" name:"dir" help:"A run's or a sweep's output directory (results.json, sweep.json), or a results file; the reports are written beside it."`
	RateLimit        float64   `placeholder:"N" help:"Draw this limit in requests/s on the requests plot instead of the one results.json records."`
	ConcurrencyLimit int       `placeholder:"N" help:"Draw this limit on requests in flight on the in-flight plot instead of the one results.json records."`
	Sweep            string    `placeholder:"FILE" help:"A sweep to plot, with each load's knee and chosen cap marked: the sweep.json 'simbench sweep' writes (default: DIR/sweep.json when present), or a JSON array of sweep points."`
	MaxRateLimited   float64   `name:"max-share" aliases:"max-rate-limited" default:"${max_share}" placeholder:"SHARE" env:"SIMBENCH_MAX_SHARE" help:"The 429 share drawn as the sweep's threshold, for a sweep file that does not record its own (--max-rate-limited is the old name)."`
	Color            string    `enum:"auto,always,never" default:"auto" help:"Colour the table: auto (when standard output is a terminal and NO_COLOR is unset), always or never."`
	More             []string  `arg:"" optional:"" name:"dirs" help:"With --merge: the other fleet members' folders."`
	Merge            bool      `help:"Combine the folders of a live fleet's members (simbench worker --out DIR, one per member) into one results.json in --out, as one process running the whole fleet reports it: counts summed, percentiles from the pooled histograms. A member whose folder holds no results is named, and the command exits 1 after writing the others' merge."`
	Out              string    `placeholder:"OUT" help:"With --merge: the folder to write the merged results.json and reports to."`
	AllowInvalid     bool      `help:"With --merge: exit 0 even when the merged run is invalid (it is still marked invalid). Without it such a run exits 3, as worker and run --live do."`
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
	if c.Merge || c.Out != "" {
		return c.merge()
	}
	if len(c.More) > 0 {
		return codedError{fmt.Errorf("one folder to report on, %d given: to combine a fleet's members, add --merge and --out", 1+len(c.More)), exitInvalid}
	}
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

// merge combines fleet members' folders into one results.json in --out,
// with its reports, and prints the table. A folder without results (a
// member that never wrote them) leaves that member missing, and a member
// that did not run a strategy (its results list it as missing) leaves the
// strategy without it: the others' merge is written, and the error (exit
// 1) names what is missing. Otherwise a merged run marked invalid exits 3
// unless --allow-invalid. An unreadable member or members of different
// runs are invalid input.
func (c *ReportCmd) merge() error {
	if !c.Merge || c.Out == "" {
		return codedError{errors.New("--merge and --out go together: simbench report --merge DIR DIR... --out OUT"), exitInvalid}
	}
	var members []*live.Member
	var absent []string
	for _, dir := range append([]string{c.Dir}, c.More...) {
		m, err := live.ReadMember(dir)
		if errors.Is(err, fs.ErrNotExist) {
			absent = append(absent, dir)
			continue
		}
		if err != nil {
			return codedError{err, exitInvalid}
		}
		members = append(members, m)
	}
	if len(members) == 0 {
		return codedError{fmt.Errorf("no member results in %s: run simbench worker --out DIR for each member first", strings.Join(absent, ", ")), exitInvalid}
	}
	res, mergeErr := live.MergeMembers(members)
	if res == nil {
		return codedError{mergeErr, exitInvalid}
	}
	if err := results.Write(c.Out, res); err != nil {
		return err
	}
	if _, err := reports.WriteAll(c.Out, res, reports.Options{}); err != nil {
		return fmt.Errorf("writing reports: %w", err)
	}
	out := c.Stdout
	if out == nil {
		out = os.Stdout
	}
	if err := reports.WriteTable(out, res, c.colored()); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nmerged %s of %d: %s\n", plural(len(members), "member"), members[0].Results.Fleet.Of, filepath.Join(c.Out, results.ResultsFile))
	if mergeErr != nil {
		if len(absent) > 0 {
			mergeErr = fmt.Errorf("%w (no results in %s)", mergeErr, strings.Join(absent, ", "))
		}
		return codedError{mergeErr, exitFailure}
	}
	if err := gate.CheckValid(res); err != nil && !c.AllowInvalid {
		return codedError{err, exitInvalidRun}
	}
	return nil
}
