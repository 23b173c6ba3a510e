package calibrate

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteSummary writes what was read and fitted to w: a line per trace
// file, a table with a row per service (attempts, latency percentiles and
// fit, 429 and error rates, limits), and the workload in a line.
func (r *Result) WriteSummary(w io.Writer) error {
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
	if err := tw.Flush(); err != nil {
		return err
	}
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
	_, err := fmt.Fprintln(w)
	return err
}

// secs shows seconds as a duration to the millisecond ("1.234s").
func secs(s float64) string {
	return time.Duration(s * float64(time.Second)).Round(time.Millisecond).String()
}
