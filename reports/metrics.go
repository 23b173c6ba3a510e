package reports

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/simbench/simbench/internal/numfmt"
	"github.com/simbench/simbench/results"
)

// direction says which way a metric improves.
type direction int

const (
	neutral direction = iota // a property, not a score: never marked best
	lowerBetter
	higherBetter
)

// metric is one column of the comparison table and one row of Compare: the
// definitions of DESIGN.md's metrics, used by every report.
type metric struct {
	header string // short column header, units included
	name   string // longer name for Compare and HTML titles
	dir    direction
	// value reads the metric; ok is false when it does not apply (the
	// latency of a strategy that completed no turn).
	value  func(s *results.StrategyResult) (v float64, ok bool)
	format func(float64) string
	// reliable marks a metric that a strategy can improve by failing: fast
	// failures shorten turns and free sessions for more of them. Only the
	// strategies that fail the fewest turns compete for its best mark.
	reliable bool
}

func count(v float64) string { return fixed(v, 0, false) }

func millis(v float64) string { return numfmt.Millis(v) }

// answerMillis formats a time to answer like millis, and Unanswered as "—".
func answerMillis(v results.AnswerMs) string { return numfmt.AnswerMillis(float64(v)) }

func dec1(v float64) string { return fixed(v, 1, false) }
func dec2(v float64) string { return fixed(v, 2, false) }

func always(f func(s *results.StrategyResult) float64) func(*results.StrategyResult) (float64, bool) {
	return func(s *results.StrategyResult) (float64, bool) { return f(s), true }
}

func latency(f func(l results.Summary) float64) func(*results.StrategyResult) (float64, bool) {
	return func(s *results.StrategyResult) (float64, bool) { return f(s.TurnLatencyMs), s.Turns > 0 }
}

// answerP95 reads the p95 time to answer: +Inf when that turn got no
// answer, and absent from results written before the field existed.
func answerP95(s *results.StrategyResult) (float64, bool) {
	a := s.AnswerLatencyMs
	return float64(a.P95), s.Turns > 0 && (a.AnsweredShare > 0 || !a.P95.Answered())
}

// answeredGoodput reads the goodput of answered turns; absent from results
// written before the field existed (successful calls but none answered).
func answeredGoodput(s *results.StrategyResult) (float64, bool) {
	return s.AnsweredGoodputPerS, s.AnsweredGoodputPerS > 0 || s.GoodputPerS == 0 || s.FailedTurns == s.Turns
}

// metrics returns the columns for the given results: DESIGN.md's metrics,
// then peak in flight for each service any of them mentions (one column
// titled "peak in flight" when there is a single service).
func metrics(rs ...*results.Results) []metric {
	ms := []metric{
		{"turns", "turns completed", higherBetter, always(func(s *results.StrategyResult) float64 { return float64(s.Turns) }), count, true},
		{"failed turns", "turns with a failed call", lowerBetter, always(func(s *results.StrategyResult) float64 { return float64(s.FailedTurns) }), count, false},
		{"calls", "calls completed", higherBetter, always(func(s *results.StrategyResult) float64 { return float64(s.Calls) }), count, true},
		{"attempts", "attempts (calls + retries)", neutral, always(func(s *results.StrategyResult) float64 { return float64(s.Attempts) }), count, false},
		{"p50 ms", "turn latency p50 (ms)", lowerBetter, latency(func(l results.Summary) float64 { return l.P50 }), millis, true},
		{"p95 ms", "turn latency p95 (ms)", lowerBetter, latency(func(l results.Summary) float64 { return l.P95 }), millis, true},
		{"p99 ms", "turn latency p99 (ms)", lowerBetter, latency(func(l results.Summary) float64 { return l.P99 }), millis, true},
		{"answer p95", "time to answer p95 (ms; a failed turn is never answered)", lowerBetter, answerP95, func(v float64) string { return answerMillis(results.AnswerMs(v)) }, false},
		{"goodput/s", "goodput (successful calls of turns answered in full, per s)", higherBetter, answeredGoodput, dec2, false},
		{"429s", "rate limited (429s)", lowerBetter, always(func(s *results.StrategyResult) float64 { return float64(s.RateLimited) }), count, false},
		{"failed", "failed calls", lowerBetter, always(func(s *results.StrategyResult) float64 { return float64(s.Failed) }), count, false},
		{"early", "early retries", lowerBetter, always(func(s *results.StrategyResult) float64 { return float64(s.EarlyRetries) }), count, false},
		{"wasted s", "wasted work (s)", lowerBetter, always(func(s *results.StrategyResult) float64 { return s.WastedWorkS }), dec1, false},
		{"races", "write races", lowerBetter, always(func(s *results.StrategyResult) float64 { return float64(s.WriteRaces) }), count, false},
	}
	services := map[string]bool{}
	unfinished := false
	for _, r := range rs {
		if r == nil {
			continue
		}
		for _, s := range r.Strategies {
			unfinished = unfinished || s.UnfinishedTurns > 0
			for name := range s.PeakInFlight {
				services[name] = true
			}
		}
	}
	if unfinished {
		// After "failed turns": turns still running when the run ended.
		ms = slices.Insert(ms, 2, metric{"unfinished", "turns unfinished at the end of the run", neutral,
			always(func(s *results.StrategyResult) float64 { return float64(s.UnfinishedTurns) }), count, false})
	}
	names := slices.Sorted(maps.Keys(services))
	for _, name := range names {
		header, long := "peak "+name, "peak in flight at "+name
		if len(names) == 1 {
			header, long = "peak", "peak in flight at "+name
		}
		ms = append(ms, metric{header, long, neutral, func(s *results.StrategyResult) (float64, bool) {
			v, ok := s.PeakInFlight[name]
			return float64(v), ok
		}, count, false})
	}
	return ms
}

// failedShare is the fraction of a strategy's turns that failed.
func failedShare(s *results.StrategyResult) float64 {
	if s.Turns == 0 {
		return 0
	}
	return float64(s.FailedTurns) / float64(s.Turns)
}

// reliableSlack is how much more often than the most reliable strategy a
// strategy may fail turns and still compete for a reliable metric's mark.
const reliableSlack = 0.01

// contends reports, for each strategy, whether it competes for a reliable
// metric's best mark: its failed-turn share is within reliableSlack of the
// lowest.
func contends(ss []results.StrategyResult) []bool {
	out := make([]bool, len(ss))
	least := 1.0
	for i := range ss {
		least = min(least, failedShare(&ss[i]))
	}
	for i := range ss {
		out[i] = failedShare(&ss[i]) <= least+reliableSlack
	}
	return out
}

// best returns, for metric m, which strategies hold the best value. Nothing
// is marked for a neutral metric, with fewer than two applicable values, or
// when all of them are equal (a mark would say nothing). For a reliable
// metric only the strategies that fail the fewest turns compete, so a
// strategy cannot win on latency by failing fast.
func best(m metric, ss []results.StrategyResult) []bool {
	marked := make([]bool, len(ss))
	if m.dir == neutral {
		return marked
	}
	in := make([]bool, len(ss))
	for i := range in {
		in[i] = true
	}
	if m.reliable {
		in = contends(ss)
	}
	for i := range ss {
		in[i] = in[i] && ss[i].Invalid == "" // an invalid run is never best
	}
	var vals []float64
	for i := range ss {
		if v, ok := meanValue(m, &ss[i]); ok && in[i] {
			vals = append(vals, v)
		}
	}
	if len(vals) < 2 {
		return marked
	}
	lo, hi := slices.Min(vals), slices.Max(vals)
	if lo == hi {
		return marked
	}
	want := lo
	if m.dir == higherBetter {
		want = hi
	}
	for i := range ss {
		if v, ok := meanValue(m, &ss[i]); ok && in[i] && v == want {
			marked[i] = true
		}
	}
	return marked
}

// cellText formats strategy s's value of m, "–" when it does not apply:
// the mean over the seeds with its 95% interval's half width ("3,449 ±21")
// when the run carries several seeds.
func cellText(m metric, s *results.StrategyResult) string {
	if xs := seedValues(m, s, 1); xs != nil {
		iv := results.IntervalOf(xs)
		if math.IsInf(iv.Mean, 0) {
			return m.format(iv.Mean)
		}
		if hw := iv.HalfWidth(); hw > 0 {
			return m.format(iv.Mean) + " ±" + m.format(hw)
		}
		return m.format(iv.Mean)
	}
	v, ok := m.value(s)
	if !ok {
		return "–"
	}
	return m.format(v)
}

// extraMetrics are the columns shown only on request (--columns): means
// and Little's L.
func extraMetrics() []metric {
	return []metric{
		{"mean ms", "turn latency mean (ms)", lowerBetter, latency(func(l results.Summary) float64 { return l.Mean }), millis, true},
		{"answer mean", "mean time to answer of the answered turns (ms)", lowerBetter, func(s *results.StrategyResult) (float64, bool) {
			return s.AnswerLatencyMs.Mean, s.AnswerLatencyMs.AnsweredShare > 0
		}, millis, true},
		{"answered", "share of turns answered in full (%)", higherBetter, func(s *results.StrategyResult) (float64, bool) {
			return 100 * s.AnswerLatencyMs.AnsweredShare, s.Turns > 0
		}, dec1, false},
		{"calls ok/s", "successful calls per s, those of failed turns included", neutral, always(func(s *results.StrategyResult) float64 { return s.GoodputPerS }), dec2, false},
		{"answered/s", "turns answered in full per s", higherBetter, always(func(s *results.StrategyResult) float64 { return s.AnsweredTurnsPerS }), dec2, false},
		{"L turns", "turns in the system, time-averaged (Little's L)", neutral, always(func(s *results.StrategyResult) float64 { return s.TurnsInSystem }), dec2, false},
		{"L attempts", "attempts in service, time-averaged (Little's L)", neutral, always(func(s *results.StrategyResult) float64 { return s.AttemptsInService }), dec2, false},
	}
}

// Columns lists the names the terminal table's columns can be chosen by:
// the default columns, then the ones shown only on request.
func Columns() []string {
	var out []string
	for _, m := range append(metrics(), extraMetrics()...) {
		out = append(out, m.header)
	}
	return out
}

// CheckColumns reports an error naming the columns that exist when names
// holds one that does not (nil: every name is a column or a set).
func CheckColumns(names []string) error {
	_, err := selectMetrics(names)
	return err
}

// selectMetrics returns the columns named, in the order named ("all": the
// default ones then the extra ones; "default": the default ones), or an
// error listing the names that exist.
func selectMetrics(names []string, rs ...*results.Results) ([]metric, error) {
	if len(names) == 0 {
		return metrics(rs...), nil
	}
	all := append(metrics(rs...), extraMetrics()...)
	var out []metric
	for _, n := range names {
		switch n {
		case "all":
			out = append(out, all...)
			continue
		case "default":
			out = append(out, metrics(rs...)...)
			continue
		}
		i := slices.IndexFunc(all, func(m metric) bool { return m.header == n })
		if i < 0 {
			var have []string
			for _, m := range all {
				have = append(have, m.header)
			}
			return nil, fmt.Errorf("no column %q: the columns are %s, or all, or default", n, strings.Join(have, ", "))
		}
		out = append(out, all[i])
	}
	return out, nil
}
