package results

import "strings"

// Better says which way a figure improves.
type Better int

const (
	// Neutral marks a property of the run, not a score (calls made, peaks
	// in flight): no table marks a best value of it.
	Neutral Better = iota
	// Lower marks a figure whose rise is worse (latency, 429s, failures).
	Lower
	// Higher marks a figure whose fall is worse (goodput, answered share).
	Higher
)

// The units of the registry's figures (FigureSpec.Unit).
const (
	UnitCount = "count" // events or items counted
	UnitMs    = "ms"    // milliseconds
	UnitS     = "s"     // seconds
	UnitPerS  = "1/s"   // per second of the run
	UnitShare = "share" // a fraction in [0, 1]
	UnitRatio = "ratio" // a quotient of two counts
	UnitUSD   = "USD"   // dollars
	UnitMean  = "mean"  // a time-averaged count (Little's L)
)

// FigureSpec is one figure of a strategy, written once for everything that
// prints or judges it: the reports' tables, the thresholds, the benchmark
// units and the gate's tolerances.
type FigureSpec struct {
	// Key is the JSON path of the figure's field in a strategy's results
	// ("turn_latency_ms.p95"); for a Derived figure, its name.
	Key string
	// Header is the tables' short column header, its unit included
	// ("p95 ms"); "" when no table shows the figure.
	Header string
	// Title is the longer name the comparison of two runs and the tables'
	// keys use ("turn latency p95 (ms)").
	Title string
	// Unit is the unit of the figure's value (UnitMs, UnitCount, …).
	Unit string
	// Better says which way the figure improves.
	Better Better
	// Threshold is the metric name a [thresholds] bound or --threshold
	// names the figure by ("turn_p95"); "" when thresholds do not accept
	// it. A threshold on a time is in seconds (ThresholdIsTime).
	Threshold string
	// Bench is the unit bench_test.go reports the figure in with
	// b.ReportMetric ("p95-turn-ms"); "" when it does not.
	Bench string
	// MaxWorse is the gate's tolerance for Bench: the largest change in the
	// worse direction that still passes, as a fraction of the baseline
	// value (0.02: 2% worse passes; 0: any worsening is a regression).
	MaxWorse float64
	// OverRun marks a figure that counts or sums over the whole run (turns,
	// 429s, wasted seconds): runs of different durations compare it per
	// minute.
	OverRun bool
	// Derived marks a figure computed from others and not stored in
	// results.json: neither FigureKeys nor seed_stats list it.
	Derived bool

	read func(s *StrategyResult) (float64, bool)
	// threshold reads the threshold's value where it differs from read's
	// (nil: read's, times converted to seconds).
	threshold func(s *StrategyResult) (float64, bool)
}

// Value returns the strategy's value of the figure, in Unit; ok is false
// when it does not apply (see StrategyResult.Figure).
func (f FigureSpec) Value(s *StrategyResult) (float64, bool) { return f.read(s) }

// registry is THE list of a strategy's figures. Tables choose their
// columns from it by key; thresholds list their names in its order.
var registry = []FigureSpec{
	{Key: "turns", Header: "turns", Title: "turns completed", Unit: UnitCount, Better: Higher, OverRun: true,
		read: always(func(s *StrategyResult) float64 { return float64(s.Turns) })},
	{Key: "unfinished_turns", Header: "unfinished", Title: "turns unfinished at the end of the run", Unit: UnitCount, Better: Lower,
		Bench: "unfinished-turns",
		read:  always(func(s *StrategyResult) float64 { return float64(s.UnfinishedTurns) })},
	{Key: "calls", Header: "calls", Title: "calls completed", Unit: UnitCount, Better: Higher, OverRun: true,
		read: always(func(s *StrategyResult) float64 { return float64(s.Calls) })},
	{Key: "attempts", Header: "attempts", Title: "attempts (calls + retries)", Unit: UnitCount, Better: Neutral, OverRun: true,
		read: always(func(s *StrategyResult) float64 { return float64(s.Attempts) })},
	{Key: "attempts_per_call", Title: "attempts per call (0 without calls)", Unit: UnitRatio, Better: Lower,
		Bench: "attempts/call", MaxWorse: 0.01, Derived: true, read: attemptsPerCall},
	{Key: "answer_latency_ms.mean", Header: "answer mean", Title: "mean time to answer of the answered turns (ms)", Unit: UnitMs, Better: Lower,
		read: func(s *StrategyResult) (float64, bool) {
			return s.AnswerLatencyMs.Mean, s.AnswerLatencyMs.AnsweredShare > 0
		}},
	{Key: "answer_latency_ms.p50", Title: "time to answer p50 (ms; a failed turn is never answered)", Unit: UnitMs, Better: Lower,
		Threshold: "answer_p50",
		read:      answerPercentile(func(a AnswerSummary) AnswerMs { return a.P50 }), threshold: answerSeconds(func(a AnswerSummary) AnswerMs { return a.P50 })},
	{Key: "answer_latency_ms.p95", Header: "answer p95", Title: "time to answer p95 (ms; a failed turn is never answered)", Unit: UnitMs, Better: Lower,
		Threshold: "answer_p95",
		read:      answerPercentile(func(a AnswerSummary) AnswerMs { return a.P95 }), threshold: answerSeconds(func(a AnswerSummary) AnswerMs { return a.P95 })},
	{Key: "answer_latency_ms.p99", Title: "time to answer p99 (ms; a failed turn is never answered)", Unit: UnitMs, Better: Lower,
		Threshold: "answer_p99",
		read:      answerPercentile(func(a AnswerSummary) AnswerMs { return a.P99 }), threshold: answerSeconds(func(a AnswerSummary) AnswerMs { return a.P99 })},
	{Key: "turn_latency_ms.mean", Header: "mean ms", Title: "turn latency mean (ms)", Unit: UnitMs, Better: Lower,
		read: turnLatency(func(l Summary) float64 { return l.Mean })},
	{Key: "turn_latency_ms.p50", Header: "p50 ms", Title: "turn latency p50 (ms)", Unit: UnitMs, Better: Lower,
		Bench: "p50-turn-ms", MaxWorse: 0.02,
		read: turnLatency(func(l Summary) float64 { return l.P50 })},
	{Key: "turn_latency_ms.p95", Header: "p95 ms", Title: "turn latency p95 (ms)", Unit: UnitMs, Better: Lower,
		Threshold: "turn_p95", Bench: "p95-turn-ms", MaxWorse: 0.02,
		read: turnLatency(func(l Summary) float64 { return l.P95 })},
	{Key: "turn_latency_ms.p99", Header: "p99 ms", Title: "turn latency p99 (ms)", Unit: UnitMs, Better: Lower,
		Bench: "p99-turn-ms", MaxWorse: 0.02,
		read: turnLatency(func(l Summary) float64 { return l.P99 })},
	{Key: "answer_latency_ms.answered_share", Header: "answered", Title: "share of turns answered in full (%)", Unit: UnitShare, Better: Higher,
		Threshold: "answered_share",
		read: func(s *StrategyResult) (float64, bool) {
			return s.AnswerLatencyMs.AnsweredShare, s.Turns > 0
		},
		// Of the turns begun: a run whose every turn was left unfinished
		// answered none, a share of 0, not no data.
		threshold: func(s *StrategyResult) (float64, bool) {
			return s.AnswerLatencyMs.AnsweredShare, s.Turns+s.UnfinishedTurns+s.RefusedTurns > 0
		}},
	{Key: "rate_limited_share", Title: "429s per attempt", Unit: UnitShare, Better: Lower,
		Threshold: "rate_limited_share", Derived: true,
		read: func(s *StrategyResult) (float64, bool) {
			if s.Attempts == 0 {
				return 0, false
			}
			return float64(s.RateLimited) / float64(s.Attempts), true
		}},
	{Key: "goodput_per_s", Header: "calls ok/s", Title: "successful calls per s, those of failed turns included", Unit: UnitPerS, Better: Higher,
		Threshold: "goodput_per_s", Bench: "goodput/s", MaxWorse: 0.01,
		read: always(func(s *StrategyResult) float64 { return s.GoodputPerS })},
	// answered goodput is absent from results written before the field
	// existed: successful calls there, but none counted as answered.
	{Key: "answered_goodput_per_s", Header: "goodput/s", Title: "goodput (successful calls of turns answered in full, per s)", Unit: UnitPerS, Better: Higher,
		read: func(s *StrategyResult) (float64, bool) {
			return s.AnsweredGoodputPerS, s.AnsweredGoodputPerS > 0 || s.GoodputPerS == 0 || s.FailedTurns == s.Turns
		}},
	{Key: "answered_turns_per_s", Header: "answered/s", Title: "turns answered in full per s", Unit: UnitPerS, Better: Higher,
		read: always(func(s *StrategyResult) float64 { return s.AnsweredTurnsPerS })},
	{Key: "achieved_turns_per_s", Title: "turns finished per s, failed ones included", Unit: UnitPerS, Better: Neutral,
		read: always(func(s *StrategyResult) float64 { return s.AchievedTurnsPerS })},
	{Key: "rate_limited", Header: "429s", Title: "rate limited (429s)", Unit: UnitCount, Better: Lower, OverRun: true,
		Bench: "429s/op",
		read:  always(func(s *StrategyResult) float64 { return float64(s.RateLimited) })},
	{Key: "failed", Header: "failed", Title: "failed calls", Unit: UnitCount, Better: Lower, OverRun: true,
		Bench: "failed-calls",
		read:  always(func(s *StrategyResult) float64 { return float64(s.Failed) })},
	{Key: "failed_turns", Header: "failed turns", Title: "turns with a failed call", Unit: UnitCount, Better: Lower, OverRun: true,
		Threshold: "failed_turns", Bench: "failed-turns",
		read: always(func(s *StrategyResult) float64 { return float64(s.FailedTurns) })},
	{Key: "early_retries", Header: "early", Title: "early retries", Unit: UnitCount, Better: Lower, OverRun: true,
		Threshold: "early_retries", Bench: "early-retries",
		read: always(func(s *StrategyResult) float64 { return float64(s.EarlyRetries) })},
	{Key: "wasted_work_s", Header: "wasted s", Title: "wasted work (s)", Unit: UnitS, Better: Lower, OverRun: true,
		Bench: "wasted-s", MaxWorse: 0.01,
		read: always(func(s *StrategyResult) float64 { return s.WastedWorkS })},
	{Key: "hedges", Header: "hedges", Title: "hedges sent (second attempts of slow reads; % extra attempts)", Unit: UnitCount, Better: Neutral, OverRun: true,
		read: hedged(func(s *StrategyResult) float64 { return float64(s.Hedges) })},
	{Key: "hedges_won", Header: "hedges won", Title: "calls answered by their hedge (% of hedges)", Unit: UnitCount, Better: Neutral, OverRun: true,
		read: hedged(func(s *StrategyResult) float64 { return float64(s.HedgesWon) })},
	{Key: "daily_quota.failed_fast_turns", Header: "daily failed fast", Title: "turns failed at once on a spent daily quota", Unit: UnitCount, Better: Neutral, OverRun: true,
		read: daily(func(d *DailyQuota) float64 { return float64(d.FailedFastTurns) })},
	{Key: "daily_quota.spin_s", Header: "daily spin s", Title: "seconds calls spent retrying a spent daily quota", Unit: UnitS, Better: Lower, OverRun: true,
		read: daily(func(d *DailyQuota) float64 { return d.SpinS })},
	{Key: "cancelled_work_s", Header: "cancelled s", Title: "work of attempts cancelled at the transport (s)", Unit: UnitS, Better: Lower, OverRun: true,
		read: hedged(func(s *StrategyResult) float64 { return s.CancelledWorkS })},
	{Key: "write_races", Header: "races", Title: "write races", Unit: UnitCount, Better: Lower, OverRun: true,
		Bench: "write-races",
		read:  always(func(s *StrategyResult) float64 { return float64(s.WriteRaces) })},
	{Key: "turns_in_system", Header: "L turns", Title: "turns in the system, time-averaged (Little's L)", Unit: UnitMean, Better: Neutral,
		read: always(func(s *StrategyResult) float64 { return s.TurnsInSystem })},
	{Key: "attempts_in_service", Header: "L attempts", Title: "attempts in service, time-averaged (Little's L)", Unit: UnitMean, Better: Neutral,
		read: always(func(s *StrategyResult) float64 { return s.AttemptsInService })},
	{Key: "tasks.completion", Header: "completion %", Title: "tasks answered end to end (%)", Unit: UnitShare, Better: Higher,
		read: task(func(t *Tasks) float64 { return t.Completion })},
	{Key: "tasks.completed", Title: "tasks answered end to end", Unit: UnitCount, Better: Higher,
		read: task(func(t *Tasks) float64 { return float64(t.Completed) })},
	{Key: "tasks.model_failures", Header: "model fails", Title: "model turns that failed for reasons of the model", Unit: UnitCount, Better: Lower,
		read: task(func(t *Tasks) float64 { return float64(t.ModelFailures) })},
	{Key: "tasks.skipped_subagents", Header: "skipped subagents", Title: "subagents the orchestrator budget did not spawn", Unit: UnitCount, Better: Neutral,
		read: task(func(t *Tasks) float64 { return float64(t.SkippedSubagents) })},
	{Key: "tasks.model_failed_turns", Header: "model-failed turns", Title: "turns failed for reasons of the model", Unit: UnitCount, Better: Lower,
		read: schedulerAnswer(func(t *Tasks) float64 { return float64(t.ModelFailedTurns) })},
	{Key: "tasks.scheduler_answer_latency_ms.answered_share", Header: "sched answered %", Title: "turns answered among those the scheduler could answer (%)", Unit: UnitShare, Better: Higher,
		read: schedulerAnswer(func(t *Tasks) float64 { return t.SchedulerAnswerLatencyMs.AnsweredShare })},
	{Key: "tasks.scheduler_answer_latency_ms.p95", Header: "sched answer p95", Title: "time to answer p95 among the turns the scheduler could answer (ms)", Unit: UnitMs, Better: Lower,
		read: schedulerAnswer(func(t *Tasks) float64 { return float64(t.SchedulerAnswerLatencyMs.P95) })},
	{Key: "tasks.time_to_answer_ms.p50", Header: "task p50", Title: "time to answer a completed task p50 (ms)", Unit: UnitMs, Better: Lower,
		read: answeredTask(func(l Summary) float64 { return l.P50 })},
	{Key: "tasks.time_to_answer_ms.p95", Header: "task p95", Title: "time to answer a completed task p95 (ms)", Unit: UnitMs, Better: Lower,
		read: answeredTask(func(l Summary) float64 { return l.P95 })},
	{Key: "tasks.input_tokens", Header: "tokens in", Title: "input tokens billed", Unit: UnitCount, Better: Lower,
		read: task(func(t *Tasks) float64 { return float64(t.InputTokens) })},
	{Key: "tasks.output_tokens", Header: "tokens out", Title: "output tokens billed", Unit: UnitCount, Better: Lower,
		read: task(func(t *Tasks) float64 { return float64(t.OutputTokens) })},
	{Key: "tasks.cost_usd", Header: "cost $", Title: "cost of the run (dollars)", Unit: UnitUSD, Better: Lower,
		read: task(func(t *Tasks) float64 { return t.CostUSD })},
	{Key: "tasks.cost_per_answered_task_usd", Header: "$/answer", Title: "cost per answered task (dollars)", Unit: UnitUSD, Better: Lower,
		read: func(s *StrategyResult) (float64, bool) {
			return taskOr0(s).CostPerAnsweredTaskUSD, s.Tasks != nil && s.Tasks.Completed > 0
		}},
}

// attemptsPerCall is attempts over calls, 0 without calls: what a retry
// policy costs per call.
func attemptsPerCall(s *StrategyResult) (float64, bool) {
	if s.Calls == 0 {
		return 0, true
	}
	return float64(s.Attempts) / float64(s.Calls), true
}

// answerSeconds reads a time to answer as a threshold does, in seconds: no
// data when that turn got no answer or no turn finished.
func answerSeconds(f func(a AnswerSummary) AnswerMs) func(*StrategyResult) (float64, bool) {
	return func(s *StrategyResult) (float64, bool) {
		a := f(s.AnswerLatencyMs)
		if !a.Answered() || s.Turns == 0 {
			return 0, false
		}
		return float64(a) / 1000, true
	}
}

// lookup finds the registry's figure of key.
func lookup(key string) (FigureSpec, bool) {
	for _, f := range registry {
		if f.Key == key {
			return f, true
		}
	}
	return FigureSpec{}, false
}

// Lookup returns the figure named key: one of the registry's (Figures),
// or a peak in flight (PeakFigure + service: a count, neutral, with its
// header and title naming the service). ok is false for any other key.
func Lookup(key string) (FigureSpec, bool) {
	if svc, ok := strings.CutPrefix(key, PeakFigure); ok && svc != "" {
		return FigureSpec{Key: key, Header: "peak " + svc, Title: "peak in flight at " + svc, Unit: UnitCount, Better: Neutral,
			read: func(s *StrategyResult) (float64, bool) {
				v, ok := s.PeakInFlight[svc]
				return float64(v), ok
			}}, true
	}
	return lookup(key)
}

// Figures returns a copy of the registry, in its order.
func Figures() []FigureSpec {
	return append([]FigureSpec(nil), registry...)
}

// ThresholdNames lists the metrics a threshold may bound (FigureSpec.
// Threshold), in the registry's order.
func ThresholdNames() []string {
	var out []string
	for _, f := range registry {
		if f.Threshold != "" {
			out = append(out, f.Threshold)
		}
	}
	return out
}

// ThresholdFigure returns the figure a threshold metric bounds; ok is
// false when no figure has that threshold name.
func ThresholdFigure(name string) (FigureSpec, bool) {
	for _, f := range registry {
		if f.Threshold != "" && f.Threshold == name {
			return f, true
		}
	}
	return FigureSpec{}, false
}

// ThresholdIsTime reports whether the threshold metric name bounds a time,
// whose bound is in seconds (the figure being in ms).
func ThresholdIsTime(name string) bool {
	f, ok := ThresholdFigure(name)
	return ok && f.Unit == UnitMs
}

// ThresholdValue returns the figure's value as a threshold compares it:
// times in seconds; ok is false when it has no data (see
// StrategyResult.Metric).
func (f FigureSpec) ThresholdValue(s *StrategyResult) (float64, bool) {
	if f.threshold != nil {
		return f.threshold(s)
	}
	v, ok := f.read(s)
	if f.Unit == UnitMs {
		v /= 1000
	}
	return v, ok
}

// BenchFigures lists the figures bench_test.go reports (FigureSpec.Bench
// set), in the registry's order.
func BenchFigures() []FigureSpec {
	var out []FigureSpec
	for _, f := range registry {
		if f.Bench != "" {
			out = append(out, f)
		}
	}
	return out
}

// PlotSpec is one plot the reports may draw, written once for report.md,
// report.html and the plot files.
type PlotSpec struct {
	// Name is the plot's file name without extension ("latency-cdf"),
	// written as NAME.png and NAME.svg, and its id in report.html.
	Name string
	// Title is the plot's heading: report.md's link and alt text, and
	// report.html's caption heading when the plain figure is drawn.
	Title string
	// VariantTitle is report.html's caption heading when the richer
	// variant is drawn (the answer CDF instead of the turn-latency CDF; a
	// panel per service instead of one for the limit): report.md, which
	// links only a file name, keeps Title. "" when the plot has one form.
	VariantTitle string
}

// plots is THE list of the reports' plots, in report order.
var plots = []PlotSpec{
	{Name: "latency-cdf", Title: "Turn latency CDF", VariantTitle: "Turn latency CDF: turns answered within a time"},
	{Name: "in-flight", Title: "In flight over time"},
	{Name: "requests", Title: "Requests per second against the limit", VariantTitle: "Requests per second to each service against its limit"},
	{Name: "limits", Title: "Adaptive concurrency limits over time"},
	{Name: "attempts", Title: "Attempts per call"},
	{Name: "backoff", Title: "Backoff comparison"},
	{Name: "sweep", Title: "Sweep over the concurrency cap"},
}

// Plots returns a copy of the list of plots, in report order.
func Plots() []PlotSpec { return append([]PlotSpec(nil), plots...) }

// Plot returns the plot named name; ok is false when there is none.
func Plot(name string) (PlotSpec, bool) {
	for _, p := range plots {
		if p.Name == name {
			return p, true
		}
	}
	return PlotSpec{}, false
}
