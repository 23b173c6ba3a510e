package gate

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"
)

// WriteTable writes the report as an aligned table — benchmark, unit, old,
// new, delta, verdict (with its note) — one row per benchmark × unit,
// regressions first, then the summary line.
func (r *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "benchmark\tunit\told\tnew\tdelta\tverdict")
	for _, row := range r.Rows {
		unit := row.Unit
		if unit == "" {
			unit = "(all)"
		}
		verdict := row.Verdict.String()
		if row.Note != "" {
			verdict += ": " + row.Note
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", row.Benchmark, unit,
			formatValue(row.Old), formatValue(row.New), formatDelta(row), verdict)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, r.Summary())
	return err
}

// formatValue prints integers whole and other values with 4 significant
// digits, as go test does; "-" for no value.
func formatValue(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case math.Abs(v) >= 1e4:
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// formatDelta prints the relative change in percent ("+4.99%", "+∞"),
// "~" for a noisy change that is not significant (as benchstat), "-"
// without one.
func formatDelta(row Row) string {
	d := row.Delta
	switch {
	case math.IsNaN(d):
		return "-"
	case math.IsInf(d, 1):
		return "+∞"
	case math.IsInf(d, -1):
		return "-∞"
	case row.insignificant:
		return "~"
	}
	return fmt.Sprintf("%+.2f%%", d*100)
}
