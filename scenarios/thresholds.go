package scenarios

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/simbench/simbench/results"
)

// ThresholdMetrics are the metrics a threshold may bound: the figures of
// results' registry that have a threshold name, in its order. Those in ms
// there (answer_p95, turn_p95, …) are times in seconds here, whose bound is
// written as a duration ("5s", "5000ms"): the table shows them in ms, so a
// bare number is refused; the shares are in [0, 1], written as a fraction
// or a percent ("0.01", "1%"); goodput_per_s is successful calls per
// second; failed_turns and early_retries are counts.
var ThresholdMetrics = results.ThresholdNames()

// Threshold bounds one metric of a run, in the manner of k6: the run fails
// unless Metric Op Value holds for every strategy, or for Strategy alone.
type Threshold struct {
	// Strategy names the one strategy the threshold applies to; "" means
	// every strategy.
	Strategy string
	// Metric is one of ThresholdMetrics.
	Metric string
	// Op is one of "<", "<=", ">", ">=", "==".
	Op string
	// Value is the bound, in the metric's unit (seconds for times).
	Value float64
	// Source says where the threshold came from ("FILE:LINE: key" or the
	// flag's text), for messages.
	Source string

	durationValue bool // the bound was written as a duration
	percentValue  bool // the bound was written as a percent
}

// Holds reports whether v meets the threshold.
func (t *Threshold) Holds(v float64) bool {
	switch t.Op {
	case "<":
		return v < t.Value
	case "<=":
		return v <= t.Value
	case ">":
		return v > t.Value
	case ">=":
		return v >= t.Value
	case "==":
		return v == t.Value
	}
	return false
}

// String gives the threshold as a flag would: "[strategy:]metric<value".
func (t *Threshold) String() string {
	v := strconv.FormatFloat(t.Value, 'g', -1, 64)
	if IsTimeMetric(t.Metric) {
		v += "s"
	}
	s := t.Metric + t.Op + v
	if t.Strategy != "" {
		s = t.Strategy + ":" + s
	}
	return s
}

// ParseThreshold reads a threshold written as "[STRATEGY:]METRIC OP VALUE",
// such as "answer_p95<1s" or "bounded-64:rate_limited_share <= 0.01".
func ParseThreshold(s string) (Threshold, error) {
	i := strings.IndexAny(s, "<>=")
	if i < 0 {
		return Threshold{}, fmt.Errorf("threshold %q: want [STRATEGY:]METRIC<VALUE, with one of < <= > >= ==", s)
	}
	left := strings.TrimSpace(s[:i])
	t, err := parseBound(s[i:])
	if err != nil {
		return Threshold{}, fmt.Errorf("threshold %q: %v", s, err)
	}
	if j := strings.LastIndexByte(left, ':'); j >= 0 {
		t.Strategy, left = strings.TrimSpace(left[:j]), strings.TrimSpace(left[j+1:])
	}
	t.Metric = left
	if err := t.checkMetric(); err != nil {
		return Threshold{}, fmt.Errorf("threshold %q: %v", s, err)
	}
	t.Source = s
	return t, nil
}

func (t *Threshold) checkMetric() error {
	if !slices.Contains(ThresholdMetrics, t.Metric) {
		return fmt.Errorf("no metric %q; use one of %s", t.Metric, strings.Join(ThresholdMetrics, ", "))
	}
	if t.durationValue && !IsTimeMetric(t.Metric) {
		return fmt.Errorf("%s is not a time; give a number, not a duration", t.Metric)
	}
	if IsTimeMetric(t.Metric) && !t.durationValue {
		v := strconv.FormatFloat(t.Value, 'g', -1, 64)
		return fmt.Errorf("%s is a time, which the table shows in ms: a bare %s would be read as %s s; write the unit, such as %sms or %ss", t.Metric, v, v, v, v)
	}
	f, _ := results.ThresholdFigure(t.Metric)
	share := f.Unit == results.UnitShare
	if t.percentValue && !share {
		return fmt.Errorf("%s is not a share; give a number, not a percent", t.Metric)
	}
	if share && !t.percentValue && t.Value > 1 {
		v := strconv.FormatFloat(t.Value, 'g', -1, 64)
		return fmt.Errorf("%s is a fraction in [0, 1], which the table shows as a percent: write %s%% or %s", t.Metric, v, strconv.FormatFloat(t.Value/100, 'g', -1, 64))
	}
	if IsTimeMetric(t.Metric) && t.Value < 0 {
		return fmt.Errorf("%s is a time, never below 0; %v s can never be measured", t.Metric, t.Value)
	}
	return nil
}

// IsTimeMetric reports whether a threshold metric is a time, in seconds
// (results.ThresholdIsTime).
func IsTimeMetric(metric string) bool { return results.ThresholdIsTime(metric) }

// parseBound reads "OP VALUE", VALUE a number or a duration.
func parseBound(s string) (Threshold, error) {
	s = strings.TrimSpace(s)
	var t Threshold
	for _, op := range []string{"<=", ">=", "==", "<", ">"} {
		if rest, ok := strings.CutPrefix(s, op); ok {
			t.Op, s = op, strings.TrimSpace(rest)
			break
		}
	}
	if t.Op == "" {
		return t, fmt.Errorf("no comparison; start with one of < <= > >= ==")
	}
	if p, ok := strings.CutSuffix(s, "%"); ok {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return t, fmt.Errorf("%q is not a finite percent such as 1%%", s)
		}
		t.Value, t.percentValue = v/100, true
		return t, nil
	}
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return t, fmt.Errorf("%q is not a finite number; no measured figure compares with it", s)
		}
		t.Value = v
		return t, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return t, fmt.Errorf("%q is neither a number nor a duration such as 5s", s)
	}
	t.Value, t.durationValue = d.Seconds(), true
	return t, nil
}

// decodeThresholds reads the [thresholds] table: metric = "OP VALUE" keys
// for every strategy, and [thresholds.STRATEGY] tables for one.
func (d *decoder) decodeThresholds(sc *Scenario, t *table) []Threshold {
	var out []Threshold
	for _, k := range t.keys() {
		// A strategy's table is keyed by a name the file chooses: it is
		// read from the map directly, so that it is not listed as a key.
		if v, isTable := t.m[k].(map[string]any); isTable {
			if sc.Strategy(k) == nil {
				t.add(k, "names no strategy of the scenario; the strategies are %s", strings.Join(strategyNames(sc), ", "))
				continue
			}
			st := d.table(t.key(k), v)
			for _, m := range st.keys() {
				if th, ok := d.threshold(st, m, k); ok {
					out = append(out, th)
				}
			}
			st.finish()
			continue
		}
		if th, ok := d.threshold(t, k, ""); ok {
			out = append(out, th)
		}
	}
	// Every key was read above, so no key is unknown: only the metrics are
	// reported as accepted, the strategies' names being the file's own.
	if d.accepts != nil {
		for _, k := range t.known {
			d.accepts(t.key(k), true, nil)
		}
	}
	return out
}

func strategyNames(sc *Scenario) []string {
	var names []string
	for i := range sc.Strategies {
		names = append(names, sc.Strategies[i].Name)
	}
	return names
}

// threshold reads one metric = "OP VALUE" key.
func (d *decoder) threshold(t *table, metric, strategy string) (Threshold, bool) {
	s, ok := t.str(metric)
	if !ok {
		return Threshold{}, false
	}
	th, err := parseBound(s)
	if err == nil {
		th.Metric, th.Strategy = metric, strategy
		err = th.checkMetric()
	}
	if err != nil {
		t.add(metric, "%v", err)
		return Threshold{}, false
	}
	at := d.pos.lookup(t.key(metric))
	th.Source = fmt.Sprintf("%s:%d: %s", d.file, at.line, t.key(metric))
	return th, true
}
