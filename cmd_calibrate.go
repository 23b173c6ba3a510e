package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/simbench/simbench/calibrate"
	"github.com/simbench/simbench/scenarios"
)

// CalibrateCmd fits a scenario to traces of real (or simulated) tool calls.
type CalibrateCmd struct {
	Traces     []string  `arg:"" name:"trace" help:"Trace files: simbench traces (run --trace), OpenTelemetry JSON exports with GenAI attributes, or CSV with --csv-columns."`
	Out        string    `short:"o" required:"" placeholder:"scenario.toml" help:"Where the scenario goes; empirical distributions are written beside it as <name>-<what>.txt."`
	Format     string    `enum:"auto,simbench,otel,csv" default:"auto" help:"The traces' format: auto (.csv is CSV; a JSON object holding resourceSpans is OpenTelemetry; other JSON Lines are simbench), simbench, otel or csv."`
	CSVColumns string    `name:"csv-columns" placeholder:"FIELD=COLUMN,..." help:"For CSV: which column holds each field, e.g. start=ts,latency_ms=dur,service=svc,status=code,turn=turn_id. Fields: session, turn, call, kind, service, tool, attempt, intended, start, start_ms, end, end_ms, latency_s, latency_ms, status, outcome, tokens, retry_after."`
	Strategy   string    `short:"s" placeholder:"NAME" help:"Fit to the sections of this strategy only: a trace from 'run --trace' holds one section per strategy, and calibrating from several merges their sessions and 429s. Required when the traces hold more than one."`
	KSMax      float64   `name:"ks-max" default:"${ks_max}" placeholder:"D" help:"The Kolmogorov–Smirnov distance above which a lognormal fit is poor and the recorded values are used instead (default ${ks_max})."`
	Stdout     io.Writer `kong:"-"` // nil: os.Stdout
}

// Run reads every trace (streaming), fits the scenario, writes it and its
// empirical files, loads it back to check it, and prints what was fitted.
// Unreadable or invalid traces, a bad flag and traces without attempts
// are invalid input (exit code 2), reported with the file and line.
func (c *CalibrateCmd) Run() error {
	out, _ := console(c.Stdout, nil)
	opts := calibrate.ReadOptions{Strategy: c.Strategy}
	if c.Format != "auto" {
		opts.Format = calibrate.Format(c.Format)
	}
	if c.CSVColumns != "" {
		cols, err := calibrate.ParseCSVColumns(c.CSVColumns)
		if err != nil {
			return codedError{fmt.Errorf("--csv-columns: %w", err), exitInvalid}
		}
		opts.CSVColumns = cols
	}
	if c.KSMax == 0 {
		c.KSMax = calibrate.DefaultKSMax // a struct built without kong's defaults
	}
	if c.KSMax < 0 || c.KSMax >= 1 {
		return codedError{fmt.Errorf("--ks-max %g: want a distance between 0 and 1", c.KSMax), exitInvalid}
	}
	if !strings.HasSuffix(c.Out, ".toml") {
		return codedError{fmt.Errorf("--out %q: a scenario file ends in .toml", c.Out), exitInvalid}
	}
	cal := calibrate.New(calibrate.Options{KSMax: c.KSMax})
	for _, path := range c.Traces {
		if err := cal.ReadFile(path, opts); err != nil {
			return codedError{err, exitInvalid}
		}
	}
	if names := cal.Strategies(); len(names) > 1 && c.Strategy == "" {
		return codedError{fmt.Errorf("the traces hold sections of %d strategies, %s: calibrating from them together would merge different systems; choose one with --strategy NAME",
			len(names), quoteList(names)), exitInvalid}
	}
	res, err := cal.Fit()
	if err != nil {
		return codedError{err, exitInvalid}
	}
	written, err := res.WriteScenario(c.Out)
	switch {
	case errors.Is(err, calibrate.ErrTooLarge):
		return codedError{err, exitInvalid}
	case errors.Is(err, calibrate.ErrBug):
		return codedError{err, exitBug}
	case err != nil:
		return err
	}
	if _, err := scenarios.Load(c.Out); err != nil {
		return codedError{fmt.Errorf("the scenario written does not load (a bug in calibrate): %w", err), exitBug}
	}
	if err := res.WriteSummary(out); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nwrote %s\n", strings.Join(written, ", "))
	return nil
}

// quoteList writes names quoted and comma-separated: "a", "b", "c".
func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}
