package reports

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/simbench/simbench/results"
)

// WriteSweepPlots writes the sweep plot of sw into dir (PNG and SVG), one
// line per load, each row's knee and chosen cap marked and sw.MaxShare
// drawn as the threshold, and returns the names of the files written.
func WriteSweepPlots(dir string, sw *results.Sweep) ([]string, error) {
	o := Options{Sweep: sw.Rows, SweepStrategy: sw.Strategy, MaxRateLimitedShare: sw.MaxShare}
	if sw.Decision != nil {
		o.Tolerance = sw.Decision.Evidence.Tolerance
	}
	return WritePlots(dir, &results.Results{Scenario: sw.Scenario}, o)
}

// WriteSweep writes a sweep as one aligned table per load, the chosen cap
// and the knee marked; title names the scenario and the strategy, rule
// says in words how the cap was chosen, and maxShare is the largest 429
// share the rule accepted (named when no cap qualified). Points that are
// means over seeds show the p95's 95% interval.
func WriteSweep(w io.Writer, title string, rows []results.SweepRow, rule string, maxShare float64) error {
	fmt.Fprintf(w, "%s\nchosen: %s\n", title, rule)
	fmt.Fprintln(w, "p50, p95: time to a full answer; a failed turn counts as never answered (—: that share of turns got none)")
	for _, row := range rows {
		fmt.Fprintf(w, "\nload: %s\n", row.Load)
		tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "cap\tp50 ms\tp95 ms\tanswered\tgoodput/s\t429 share\t\t")
		for _, p := range row.Points {
			var marks []string
			if p.Cap == row.Chosen {
				marks = append(marks, "← chosen")
			}
			if p.Cap == row.Knee {
				marks = append(marks, "← knee")
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s%%\t%s\t%.3f%%\t%s\t\n", p.Cap, answerMillis(p.P50Ms), p95Text(p), dec1(100*p.AnsweredShare), dec2(p.GoodputPerS), p.RateLimitedShare*100, strings.Join(marks, " "))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if row.Chosen == 0 {
			fmt.Fprintf(w, "no cap kept 429s at or below %.2f%% and answered 95%% of turns: try smaller caps or a token bucket, or lighten the load\n", maxShare*100)
		}
	}
	return nil
}

// p95Text shows a point's p95 time to answer, with its interval's half
// width when the point is a mean over seeds whose values differ ("3,449
// ±21"; no "±" when every seed gave the same value).
func p95Text(p results.SweepPoint) string {
	hw := float64(p.P95HiMs-p.P95LoMs) / 2
	if p.Seeds < 2 || !p.P95Ms.Answered() || !p.P95HiMs.Answered() || !(hw > 0) {
		return answerMillis(p.P95Ms)
	}
	return answerMillis(p.P95Ms) + " ±" + halfWidthText(hw, millis)
}
