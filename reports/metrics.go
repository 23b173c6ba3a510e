package reports

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/simbench/simbench/internal/numfmt"
	"github.com/simbench/simbench/results"
)

// direction says which way a metric improves: its figure's direction in
// results' registry.
type direction = results.Better

const (
	neutral      = results.Neutral // a property, not a score: never marked best
	lowerBetter  = results.Lower
	higherBetter = results.Higher
)

// metric is one column of the comparison table and one row of Compare: the
// definitions of DESIGN.md's metrics, used by every report. Its values are
// a figure of the results (results.StrategyResult.Figure), so a run over
// seeds shows the mean and interval results.json's seed_stats holds.
type metric struct {
	// header, name and dir are the figure's Header, Title and Better in
	// results' registry (fromRegistry): the short column header, units
	// included; the longer name for Compare and the tables' keys; which
	// way it improves.
	header string
	name   string
	dir    direction
	// unscored marks a column that marks no best and that Compare gives no
	// verdict, though its figure has a direction: a strategy can raise it
	// by failing (calls ok/s counts the calls of failed turns; answered
	// goodput is the one to compare by), or it says when the run ended
	// more than how well (unfinished turns).
	unscored bool
	// key names the figure the column shows (results.FigureKeys); scale
	// multiplies it for display (0: 1), as a share shown in percent.
	key    string
	scale  float64
	format func(float64) string
	// reliable marks a metric that a strategy can improve by failing: fast
	// failures shorten turns and free sessions for more of them. Only the
	// strategies whose share of failed turns is within reliableSlack of the lowest compete for its best mark.
	reliable bool
	// share is the mean figure the value is also shown as a percentage
	// of ("579 (2.3%)"; nil: none); ok is false when it does not apply.
	share func(s *results.StrategyResult) (float64, bool)
	// report marks a column the reports' tables show and the terminal's
	// shows on request only (--columns).
	report bool
}

// fromRegistry fills each of ms's header, name and direction from its
// figure in results' registry (results.Lookup); an unscored column's
// direction is neutral. It panics on a key the registry lacks: a column
// of no figure is a programming error that every report test shows.
func fromRegistry(ms ...metric) []metric {
	for i := range ms {
		f, ok := results.Lookup(ms[i].key)
		if !ok {
			panic("reports: no figure " + ms[i].key + " in results' registry")
		}
		ms[i].header, ms[i].name, ms[i].dir = f.Header, f.Title, f.Better
		if ms[i].unscored {
			ms[i].dir = neutral
		}
	}
	return ms
}

// value reads the metric; ok is false when it does not apply (the latency
// of a strategy that completed no turn).
func (m metric) value(s *results.StrategyResult) (float64, bool) {
	v, ok := s.Figure(m.key)
	return v * m.factor(), ok
}

// interval reads the metric's mean and 95% interval over the strategy's
// seeds; ok is false with fewer than two seeds or when it does not apply
// under one of them.
func (m metric) interval(s *results.StrategyResult) (results.Interval, bool) {
	iv, ok := s.SeedInterval(m.key)
	f := m.factor()
	iv.Mean, iv.Lo, iv.Hi = iv.Mean*f, iv.Lo*f, iv.Hi*f
	return iv, ok
}

func (m metric) factor() float64 {
	if m.scale == 0 {
		return 1
	}
	return m.scale
}

func count(v float64) string { return fixed(v, 0, false) }

func millis(v float64) string { return numfmt.Millis(v) }

// answerMillis formats a time to answer like millis, and Unanswered as "—".
func answerMillis(v results.AnswerMs) string { return numfmt.AnswerMillis(float64(v)) }

// answerFloat is answerMillis of a figure's value.
func answerFloat(v float64) string { return numfmt.AnswerMillis(v) }

func dec1(v float64) string { return fixed(v, 1, false) }
func dec2(v float64) string { return fixed(v, 2, false) }

// metrics returns the columns for the given results: DESIGN.md's metrics,
// then peak in flight for each service any of them mentions (one column
// titled "peak in flight" when there is a single service).
func metrics(rs ...*results.Results) []metric {
	ms := fromRegistry([]metric{
		{key: "turns", format: count, reliable: true},
		{key: "failed_turns", format: count},
		{key: "calls", format: count, reliable: true},
		{key: "attempts", format: count},
		{key: "turn_latency_ms.p50", format: millis, reliable: true},
		{key: "turn_latency_ms.p95", format: millis, reliable: true},
		{key: "turn_latency_ms.p99", format: millis, reliable: true},
		{key: "answer_latency_ms.p95", format: answerFloat},
		{key: "answered_goodput_per_s", format: dec2},
		{key: "rate_limited", format: count},
		{key: "failed", format: count},
		{key: "early_retries", format: count},
		{key: "wasted_work_s", format: dec1},
		{key: "write_races", format: count},
	}...)
	if anyHedges(rs) {
		// After "attempts" and "wasted s": what hedged reads cost.
		hs := hedgeMetrics()
		ms = slices.Insert(ms, 4, hs[0])
		i := slices.IndexFunc(ms, func(m metric) bool { return m.key == "wasted_work_s" })
		ms = slices.Insert(ms, i+1, hs[1:]...)
	}
	if anyDaily(rs) {
		// After "429s": how the strategies met a spent daily quota.
		i := slices.IndexFunc(ms, func(m metric) bool { return m.key == "rate_limited" })
		ms = slices.Insert(ms, i+1, fromRegistry(
			metric{key: "daily_quota.failed_fast_turns", format: count},
			metric{key: "daily_quota.spin_s", format: dec1})...)
	}
	services := map[string]bool{}
	unfinished, bound := false, false
	for _, r := range rs {
		if r == nil {
			continue
		}
		for _, s := range r.Strategies {
			unfinished = unfinished || s.UnfinishedTurns > 0
			bound = bound || s.PeakInFlightBound
			for name := range s.PeakInFlight {
				services[name] = true
			}
		}
	}
	if unfinished {
		// After "failed turns": turns still running when the run ended.
		ms = slices.Insert(ms, 2, fromRegistry(metric{key: "unfinished_turns", format: count, unscored: true})...)
	}
	names := slices.Sorted(maps.Keys(services))
	for _, name := range names {
		m := fromRegistry(metric{key: results.PeakFigure + name, format: count})[0]
		header, what := m.header, m.name
		if len(names) == 1 {
			header = "peak"
		}
		if bound {
			// The sum of a fleet's members' peaks: at most, not measured.
			header, what = header+" ≤", what+" (at most: the sum of the members' peaks)"
		}
		m.header, m.name = header, what
		ms = append(ms, m)
	}
	return ms
}

// hedgeMetrics are the figures of hedged reads: columns when a strategy
// hedges (the terminal's shows hedges alone), on request otherwise.
func hedgeMetrics() []metric {
	return fromRegistry([]metric{
		{key: "hedges", format: count, share: unhedgedAttempts},
		{key: "hedges_won", format: count, share: meanOf("hedges"), report: true},
		{key: "cancelled_work_s", format: dec1, report: true},
	}...)
}

// meanOf is the mean figure named key, as a metric's share.
func meanOf(key string) func(s *results.StrategyResult) (float64, bool) {
	return func(s *results.StrategyResult) (float64, bool) { return meanValue(metric{key: key}, s) }
}

// unhedgedAttempts is the mean of the attempts that were not hedges, so
// a hedges column's share is the extra attempts hedging cost.
func unhedgedAttempts(s *results.StrategyResult) (float64, bool) {
	a, okA := meanOf("attempts")(s)
	h, okH := meanOf("hedges")(s)
	return a - h, okA && okH
}

// anyDaily reports whether a strategy of rs ran against a service with a
// daily quota (results.StrategyResult.DailyQuota).
func anyDaily(rs []*results.Results) bool {
	for _, r := range rs {
		if r == nil {
			continue
		}
		for i := range r.Strategies {
			if r.Strategies[i].DailyQuota != nil {
				return true
			}
		}
	}
	return false
}

// anyHedges reports whether a strategy of rs, or one of its seeds,
// hedged (results.StrategyResult.Hedged).
func anyHedges(rs []*results.Results) bool {
	for _, r := range rs {
		if r == nil {
			continue
		}
		for i := range r.Strategies {
			s := &r.Strategies[i]
			if s.Hedged() || slices.ContainsFunc(s.SeedRuns, func(x results.StrategyResult) bool { return x.Hedged() }) {
				return true
			}
		}
	}
	return false
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
// metric only the strategies whose share of failed turns is within reliableSlack of the lowest (contends) compete, so a
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
// when the run carries several seeds (the figures of results.json's
// seed_stats), with no "±" when every seed gave the same value.
func cellText(m metric, s *results.StrategyResult) string {
	if iv, ok := m.interval(s); ok {
		if math.IsInf(iv.Mean, 0) {
			return m.format(iv.Mean)
		}
		if hw := iv.HalfWidth(); hw > 0 {
			return m.format(iv.Mean) + " ±" + halfWidthText(hw, m.format) + shareText(m, s)
		}
		return m.format(iv.Mean) + shareText(m, s)
	}
	v, ok := m.value(s)
	if !ok {
		return "–"
	}
	return m.format(v) + shareText(m, s)
}

// shareText is " (2.3%)": m's mean value over m.share's, in percent; ""
// when m has no share or it does not apply.
func shareText(m metric, s *results.StrategyResult) string {
	if m.share == nil {
		return ""
	}
	v, okV := meanValue(m, s)
	d, okD := m.share(s)
	if !okV || !okD || d <= 0 {
		return ""
	}
	return " (" + dec1(100*v/d) + "%)"
}

// halfWidthText writes an interval's half width in the metric's format,
// or, when that would round a spread between seeds to nothing ("±0"), to
// two significant digits: a zero-width interval means equal seeds only.
func halfWidthText(hw float64, format func(float64) string) string {
	t := format(hw)
	if strings.Trim(t, "0.,") != "" {
		return t
	}
	return strconv.FormatFloat(hw, 'g', 2, 64)
}

// extraMetrics are the columns shown only on request (--columns): means,
// Little's L, and the agent-level figures (tasks, cost, tokens), which
// the tasks table below the comparison shows by default.
func extraMetrics() []metric {
	ms := fromRegistry([]metric{
		{key: "turn_latency_ms.mean", format: millis, reliable: true},
		{key: "answer_latency_ms.mean", format: millis, reliable: true},
		{key: "answer_latency_ms.answered_share", scale: 100, format: dec1},
		{key: "goodput_per_s", format: dec2, unscored: true},
		{key: "answered_turns_per_s", format: dec2},
		{key: "turns_in_system", format: dec2},
		{key: "attempts_in_service", format: dec2},
	}...)
	ms = append(ms, hedgeMetrics()...)
	return append(append(ms, taskMetrics()...), append(tokenMetrics(), schedulerMetrics()...)...)
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
// default ones then the extra ones, without the agent-level ones when no
// strategy of rs has tasks; "default": the default ones), or an error
// listing the names that exist.
func selectMetrics(names []string, rs ...*results.Results) ([]metric, error) {
	if len(names) == 0 {
		return tableMetrics(rs...), nil
	}
	all := append(metrics(rs...), extraMetrics()...)
	var out []metric
	for _, n := range names {
		switch n {
		case "all":
			for i, m := range all {
				if slices.ContainsFunc(all[:i], func(o metric) bool { return o.key == m.key }) {
					continue // a hedge column among the default ones
				}
				if len(rs) > 0 && (strings.HasPrefix(m.key, "tasks.") && !anyTasks(rs) || isHedgeKey(m.key) && !anyHedges(rs)) {
					continue // columns of nothing but "–"
				}
				out = append(out, m)
			}
			continue
		case "default":
			out = append(out, tableMetrics(rs...)...)
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

// isHedgeKey reports whether key names a figure of hedgeMetrics.
func isHedgeKey(key string) bool {
	return slices.ContainsFunc(hedgeMetrics(), func(m metric) bool { return m.key == key })
}

// tableMetrics are the terminal table's default columns: metrics without
// those the reports alone show.
func tableMetrics(rs ...*results.Results) []metric {
	return slices.DeleteFunc(metrics(rs...), func(m metric) bool { return m.report })
}

// anyTasks reports whether a strategy of rs has agent-level outcomes.
func anyTasks(rs []*results.Results) bool {
	for _, r := range rs {
		for i := range r.Strategies {
			if r.Strategies[i].Tasks != nil {
				return true
			}
		}
	}
	return false
}

// ColumnFigure returns the figure a terminal table column shows (its key
// in results.StrategyResult.Figure and in results.json's seed_stats) and
// the factor the column multiplies it by (100 for a share shown in
// percent, else 1); ok is false when no column has that header. Peak
// columns are named after r's services, as WriteTable names them.
func ColumnFigure(header string, r *results.Results) (key string, scale float64, ok bool) {
	for _, m := range append(metrics(r), extraMetrics()...) {
		if m.header == header {
			return m.key, m.factor(), true
		}
	}
	return "", 0, false
}
