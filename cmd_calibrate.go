package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/simbench/simbench/calibrate"
	"github.com/simbench/simbench/scenarios"
)

// CalibrateCmd fits a scenario to traces of real (or simulated) tool calls.
type CalibrateCmd struct {
	Traces     []string  `arg:"" name:"trace" help:"Trace files: simbench traces (run --trace), OpenTelemetry JSON exports with GenAI attributes, or CSV with --csv-columns."`
	Out        string    `short:"o" required:"" placeholder:"scenario.toml" help:"Where the scenario goes; empirical distributions are written beside it as <name>-<what>.txt."`
	Format     string    `enum:"auto,simbench,otel,csv" default:"auto" help:"The traces' format: auto (.csv is CSV; a JSON object holding resourceSpans is OpenTelemetry; other JSON Lines are simbench), simbench, otel or csv."`
	CSVColumns string    `name:"csv-columns" placeholder:"FIELD=COLUMN,..." help:"For CSV: which column holds each field, e.g. start=ts,latency_ms=dur,service=svc,status=code,turn=turn_id. Fields: session, turn, call, kind, service, tool, attempt, intended, start, start_ms, end, end_ms, latency_s, latency_ms, status, outcome, tokens, retry_after."`
	KSMax      float64   `name:"ks-max" default:"0.05" placeholder:"D" help:"The Kolmogorov–Smirnov distance above which a lognormal fit is poor and the recorded values are used instead (default 0.05)."`
	Stdout     io.Writer `kong:"-"` // nil: os.Stdout
}

// Run reads every trace (streaming), fits the scenario, writes it and its
// empirical files, loads it back to check it, and prints what was fitted.
// Unreadable or invalid traces, a bad flag and traces without attempts
// are invalid input (exit code 2), reported with the file and line.
func (c *CalibrateCmd) Run() error {
	out, _ := console(c.Stdout, nil)
	opts := calibrate.ReadOptions{}
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
	res, err := cal.Fit()
	if err != nil {
		return codedError{err, exitInvalid}
	}
	written, err := res.WriteScenario(c.Out)
	if err != nil {
		return err
	}
	if _, err := scenarios.Load(c.Out); err != nil {
		return fmt.Errorf("the scenario written does not load: %w", err)
	}
	printCalibration(out, res)
	fmt.Fprintf(out, "\nwrote %s\n", strings.Join(written, ", "))
	return nil
}

// printCalibration prints what was read and fitted, a line per service.
func printCalibration(w io.Writer, r *calibrate.Result) {
	for _, s := range r.Sources {
		fmt.Fprintf(w, "read %s (%s): %d attempts", s.Path, s.Format, s.Records)
		if s.Skipped > 0 {
			fmt.Fprintf(w, ", %d other spans skipped", s.Skipped)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "service\tattempts\tp50\tp95\tlatency fit\tKS\t429s\terrors\tlimits")
	for _, s := range r.Services {
		fit := "lognormal"
		if s.Latency.Poor {
			fit = "empirical (the lognormal fit is poor)"
		}
		limits := "none known"
		if s.LimitSource != "" {
			var parts []string
			if s.Limits.RPS > 0 {
				parts = append(parts, fmt.Sprintf("rps %g", s.Limits.RPS))
			}
			if s.Limits.RPM > 0 {
				parts = append(parts, fmt.Sprintf("rpm %g", s.Limits.RPM))
			}
			if s.Limits.TPM > 0 {
				parts = append(parts, fmt.Sprintf("tpm %g", s.Limits.TPM))
			}
			limits = strings.Join(parts, ", ")
			if strings.HasPrefix(s.LimitSource, "inferred") {
				limits += " (inferred)"
			}
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%.4f\t%.2f%%\t%.2f%%\t%s\n", s.Name, s.Attempts,
			secs(s.P50), secs(s.P95), fit, s.Latency.KS, 100*s.RateLimitedShare, 100*s.ErrorRate, limits)
	}
	tw.Flush()
	wl := r.Workload
	fmt.Fprintln(w)
	if wl.Closed {
		fmt.Fprintf(w, "workload: closed model, %d sessions", wl.Sessions)
		if wl.TurnsPerSession > 0 {
			fmt.Fprintf(w, " of %d turns", wl.TurnsPerSession)
		}
		fmt.Fprintf(w, " (%d seen, %.1f turns each)", wl.SessionsSeen, wl.MeanTurnsPerSession)
	} else {
		fmt.Fprintf(w, "workload: open model, %s arrivals at %.3f turns/s", wl.Arrival, wl.ArrivalRate)
	}
	fmt.Fprintf(w, "; %d turns, %.2f tool calls per turn (%d to %d)", wl.Turns, wl.FanOutMean, wl.FanOutMin, wl.FanOutMax)
	if wl.ModelCalls > 0 {
		fmt.Fprintf(w, ", model calls in %.0f%% of turns", 100*wl.ModelTurnShare)
	}
	fmt.Fprintln(w)
}

func secs(s float64) string {
	return time.Duration(s * float64(time.Second)).Round(time.Millisecond).String()
}
