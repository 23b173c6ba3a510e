package gate

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
)

// Thresholds returns the thresholds a run of sc is held to: the
// scenario's [thresholds] that apply to its strategies (one naming a
// strategy the run left out does not), then those given on the command
// line with --threshold (flags, each "[STRATEGY:]METRIC<VALUE"). An error
// names a flag that does not parse or names a strategy the run does not
// have.
func Thresholds(sc *scenarios.Scenario, flags []string) ([]scenarios.Threshold, error) {
	var out []scenarios.Threshold
	for _, t := range sc.Thresholds {
		if t.Strategy == "" || sc.Strategy(t.Strategy) != nil {
			out = append(out, t)
		}
	}
	for _, f := range flags {
		t, err := scenarios.ParseThreshold(f)
		if err != nil {
			return nil, fmt.Errorf("--threshold: %w", err)
		}
		if t.Strategy != "" && sc.Strategy(t.Strategy) == nil {
			return nil, fmt.Errorf("--threshold %q: the run has no strategy %q", f, t.Strategy)
		}
		t.Source = "--threshold " + f
		out = append(out, t)
	}
	return out, nil
}

// CheckThresholds writes every threshold with each strategy's measured
// value and whether it passed to w, and returns an error naming the
// failures when any failed. A metric with no data fails.
func CheckThresholds(w io.Writer, res *results.Results, ts []scenarios.Threshold) error {
	fmt.Fprintln(w, "\nthresholds:")
	var failed []string
	for _, t := range ts {
		fmt.Fprintf(w, "  %s  (%s)\n", t.String(), t.Source)
		var bad []string
		for i := range res.Strategies {
			s := &res.Strategies[i]
			if t.Strategy != "" && t.Strategy != s.Name {
				continue
			}
			v, ok := s.Metric(t.Metric)
			verdict, shown := "pass", strconv.FormatFloat(v, 'g', 6, 64)
			switch {
			case !ok:
				verdict, shown = "FAIL", "no data"
			case !t.Holds(v):
				verdict = "FAIL"
			}
			if ok && scenarios.IsTimeMetric(t.Metric) {
				shown += "s"
			}
			if verdict == "FAIL" {
				bad = append(bad, s.Name)
			}
			fmt.Fprintf(w, "    %-24s %-12s %s\n", s.Name, shown, verdict)
		}
		if len(bad) > 0 {
			failed = append(failed, fmt.Sprintf("%s failed for %s", t.String(), strings.Join(bad, ", ")))
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("thresholds: %s", strings.Join(failed, "; "))
	}
	return nil
}

// InvalidRunError says that a run's figures cannot be trusted (a live run
// the machine could not keep the timing of): the strategies marked invalid
// and the run's reasons.
type InvalidRunError struct {
	// Strategies names the invalid strategies (empty when the reasons
	// apply to the whole run); Reason is results.Results.Invalid.
	Strategies []string
	Reason     string
}

func (e *InvalidRunError) Error() string {
	what := "the run is invalid"
	if len(e.Strategies) > 0 {
		what = "invalid: " + strings.Join(e.Strategies, ", ")
	}
	return fmt.Sprintf("%s (%s); the results are written and marked so; --allow-invalid exits 0 anyway", what, e.Reason)
}

// CheckValid returns an *InvalidRunError when res or one of its
// strategies is marked invalid, naming each such strategy; nil when every
// figure can be trusted.
func CheckValid(res *results.Results) error {
	var names []string
	for _, s := range res.Strategies {
		if s.Invalid != "" {
			names = append(names, s.Name)
		}
	}
	if len(names) == 0 && res.Invalid == "" {
		return nil
	}
	return &InvalidRunError{Strategies: names, Reason: res.Invalid}
}
