package reports

import (
	"maps"
	"slices"

	"github.com/simbench/simbench/sim"
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
	value  func(s *sim.StrategyResult) (v float64, ok bool)
	format func(float64) string
}

func count(v float64) string { return fixed(v, 0, false) }

func millis(v float64) string {
	if v >= 100 {
		return fixed(v, 0, false)
	}
	return fixed(v, 1, false)
}

func dec1(v float64) string { return fixed(v, 1, false) }
func dec2(v float64) string { return fixed(v, 2, false) }

func always(f func(s *sim.StrategyResult) float64) func(*sim.StrategyResult) (float64, bool) {
	return func(s *sim.StrategyResult) (float64, bool) { return f(s), true }
}

func latency(f func(l sim.Summary) float64) func(*sim.StrategyResult) (float64, bool) {
	return func(s *sim.StrategyResult) (float64, bool) { return f(s.TurnLatencyMs), s.Turns > 0 }
}

// metrics returns the columns for the given results: DESIGN.md's metrics,
// then peak in flight for each service any of them mentions (one column
// titled "peak in flight" when there is a single service).
func metrics(rs ...*sim.Results) []metric {
	ms := []metric{
		{"turns", "turns completed", higherBetter, always(func(s *sim.StrategyResult) float64 { return float64(s.Turns) }), count},
		{"calls", "calls completed", higherBetter, always(func(s *sim.StrategyResult) float64 { return float64(s.Calls) }), count},
		{"attempts", "attempts (calls + retries)", neutral, always(func(s *sim.StrategyResult) float64 { return float64(s.Attempts) }), count},
		{"p50 ms", "turn latency p50 (ms)", lowerBetter, latency(func(l sim.Summary) float64 { return l.P50 }), millis},
		{"p95 ms", "turn latency p95 (ms)", lowerBetter, latency(func(l sim.Summary) float64 { return l.P95 }), millis},
		{"p99 ms", "turn latency p99 (ms)", lowerBetter, latency(func(l sim.Summary) float64 { return l.P99 }), millis},
		{"goodput/s", "goodput (successful calls/s)", higherBetter, always(func(s *sim.StrategyResult) float64 { return s.GoodputPerS }), dec2},
		{"429s", "rate limited (429s)", lowerBetter, always(func(s *sim.StrategyResult) float64 { return float64(s.RateLimited) }), count},
		{"failed", "failed calls", lowerBetter, always(func(s *sim.StrategyResult) float64 { return float64(s.Failed) }), count},
		{"early", "early retries", lowerBetter, always(func(s *sim.StrategyResult) float64 { return float64(s.EarlyRetries) }), count},
		{"wasted s", "wasted work (s)", lowerBetter, always(func(s *sim.StrategyResult) float64 { return s.WastedWorkS }), dec1},
		{"races", "write races", lowerBetter, always(func(s *sim.StrategyResult) float64 { return float64(s.WriteRaces) }), count},
	}
	services := map[string]bool{}
	for _, r := range rs {
		if r == nil {
			continue
		}
		for _, s := range r.Strategies {
			for name := range s.PeakInFlight {
				services[name] = true
			}
		}
	}
	names := slices.Sorted(maps.Keys(services))
	for _, name := range names {
		header, long := "peak "+name, "peak in flight at "+name
		if len(names) == 1 {
			header, long = "peak", "peak in flight at "+name
		}
		ms = append(ms, metric{header, long, neutral, func(s *sim.StrategyResult) (float64, bool) {
			v, ok := s.PeakInFlight[name]
			return float64(v), ok
		}, count})
	}
	return ms
}

// best returns, for metric m, which strategies hold the best value. Nothing
// is marked for a neutral metric, with fewer than two applicable values, or
// when all of them are equal (a mark would say nothing).
func best(m metric, ss []sim.StrategyResult) []bool {
	marked := make([]bool, len(ss))
	if m.dir == neutral {
		return marked
	}
	var vals []float64
	for i := range ss {
		if v, ok := m.value(&ss[i]); ok {
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
		if v, ok := m.value(&ss[i]); ok && v == want {
			marked[i] = true
		}
	}
	return marked
}

// cellText formats strategy s's value of m, "–" when it does not apply.
func cellText(m metric, s *sim.StrategyResult) string {
	v, ok := m.value(s)
	if !ok {
		return "–"
	}
	return m.format(v)
}
