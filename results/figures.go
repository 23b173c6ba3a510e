package results

import (
	"maps"
	"slices"
	"strings"
)

// PeakFigure is the prefix of the per-service peak in flight figures:
// "peak_in_flight.llm" is StrategyResult.PeakInFlight["llm"].
const PeakFigure = "peak_in_flight."

// figure reads one figure of a strategy; ok is false when it does not apply
// (a turn latency percentile with no turn finished).
type figure struct {
	key  string
	read func(s *StrategyResult) (float64, bool)
}

func always(f func(s *StrategyResult) float64) func(*StrategyResult) (float64, bool) {
	return func(s *StrategyResult) (float64, bool) { return f(s), true }
}

func turnLatency(f func(l Summary) float64) func(*StrategyResult) (float64, bool) {
	return func(s *StrategyResult) (float64, bool) { return f(s.TurnLatencyMs), s.Turns > 0 }
}

// answerPercentile reads a time to answer: +Inf when that turn got no
// answer; absent from results written before the field existed (no
// answered share, yet an answered percentile).
func answerPercentile(f func(a AnswerSummary) AnswerMs) func(*StrategyResult) (float64, bool) {
	return func(s *StrategyResult) (float64, bool) {
		a := s.AnswerLatencyMs
		v := f(a)
		return float64(v), s.Turns > 0 && (a.AnsweredShare > 0 || !v.Answered())
	}
}

// figures is THE list of the figures the reports' tables show and
// SeedStats summarises, each keyed by the JSON path of its field in a
// strategy's results; per-service peaks in flight follow (PeakFigure).
var figures = []figure{
	{"turns", always(func(s *StrategyResult) float64 { return float64(s.Turns) })},
	{"failed_turns", always(func(s *StrategyResult) float64 { return float64(s.FailedTurns) })},
	{"unfinished_turns", always(func(s *StrategyResult) float64 { return float64(s.UnfinishedTurns) })},
	{"calls", always(func(s *StrategyResult) float64 { return float64(s.Calls) })},
	{"attempts", always(func(s *StrategyResult) float64 { return float64(s.Attempts) })},
	{"turn_latency_ms.mean", turnLatency(func(l Summary) float64 { return l.Mean })},
	{"turn_latency_ms.p50", turnLatency(func(l Summary) float64 { return l.P50 })},
	{"turn_latency_ms.p95", turnLatency(func(l Summary) float64 { return l.P95 })},
	{"turn_latency_ms.p99", turnLatency(func(l Summary) float64 { return l.P99 })},
	{"answer_latency_ms.mean", func(s *StrategyResult) (float64, bool) {
		return s.AnswerLatencyMs.Mean, s.AnswerLatencyMs.AnsweredShare > 0
	}},
	{"answer_latency_ms.p50", answerPercentile(func(a AnswerSummary) AnswerMs { return a.P50 })},
	{"answer_latency_ms.p95", answerPercentile(func(a AnswerSummary) AnswerMs { return a.P95 })},
	{"answer_latency_ms.p99", answerPercentile(func(a AnswerSummary) AnswerMs { return a.P99 })},
	{"answer_latency_ms.answered_share", func(s *StrategyResult) (float64, bool) {
		return s.AnswerLatencyMs.AnsweredShare, s.Turns > 0
	}},
	{"goodput_per_s", always(func(s *StrategyResult) float64 { return s.GoodputPerS })},
	// answered goodput is absent from results written before the field
	// existed: successful calls there, but none counted as answered.
	{"answered_goodput_per_s", func(s *StrategyResult) (float64, bool) {
		return s.AnsweredGoodputPerS, s.AnsweredGoodputPerS > 0 || s.GoodputPerS == 0 || s.FailedTurns == s.Turns
	}},
	{"answered_turns_per_s", always(func(s *StrategyResult) float64 { return s.AnsweredTurnsPerS })},
	{"achieved_turns_per_s", always(func(s *StrategyResult) float64 { return s.AchievedTurnsPerS })},
	{"rate_limited", always(func(s *StrategyResult) float64 { return float64(s.RateLimited) })},
	{"failed", always(func(s *StrategyResult) float64 { return float64(s.Failed) })},
	{"early_retries", always(func(s *StrategyResult) float64 { return float64(s.EarlyRetries) })},
	{"wasted_work_s", always(func(s *StrategyResult) float64 { return s.WastedWorkS })},
	{"hedges", hedged(func(s *StrategyResult) float64 { return float64(s.Hedges) })},
	{"hedges_won", hedged(func(s *StrategyResult) float64 { return float64(s.HedgesWon) })},
	{"cancelled_work_s", hedged(func(s *StrategyResult) float64 { return s.CancelledWorkS })},
	{"write_races", always(func(s *StrategyResult) float64 { return float64(s.WriteRaces) })},
	{"turns_in_system", always(func(s *StrategyResult) float64 { return s.TurnsInSystem })},
	{"attempts_in_service", always(func(s *StrategyResult) float64 { return s.AttemptsInService })},
	{"tasks.completion", task(func(t *Tasks) float64 { return t.Completion })},
	{"tasks.completed", task(func(t *Tasks) float64 { return float64(t.Completed) })},
	{"tasks.model_failures", task(func(t *Tasks) float64 { return float64(t.ModelFailures) })},
	{"tasks.skipped_subagents", task(func(t *Tasks) float64 { return float64(t.SkippedSubagents) })},
	{"tasks.model_failed_turns", schedulerAnswer(func(t *Tasks) float64 { return float64(t.ModelFailedTurns) })},
	{"tasks.scheduler_answer_latency_ms.answered_share", schedulerAnswer(func(t *Tasks) float64 { return t.SchedulerAnswerLatencyMs.AnsweredShare })},
	{"tasks.scheduler_answer_latency_ms.p95", schedulerAnswer(func(t *Tasks) float64 { return float64(t.SchedulerAnswerLatencyMs.P95) })},
	{"tasks.time_to_answer_ms.p50", answeredTask(func(l Summary) float64 { return l.P50 })},
	{"tasks.time_to_answer_ms.p95", answeredTask(func(l Summary) float64 { return l.P95 })},
	{"tasks.input_tokens", task(func(t *Tasks) float64 { return float64(t.InputTokens) })},
	{"tasks.output_tokens", task(func(t *Tasks) float64 { return float64(t.OutputTokens) })},
	{"tasks.cost_usd", task(func(t *Tasks) float64 { return t.CostUSD })},
	{"tasks.cost_per_answered_task_usd", func(s *StrategyResult) (float64, bool) {
		return taskOr0(s).CostPerAnsweredTaskUSD, s.Tasks != nil && s.Tasks.Completed > 0
	}},
}

// hedged reads a figure of hedged reads, which applies only to a strategy
// that sent a hedge or cancelled an attempt (Hedged): a strategy that does
// not hedge gains no such key in seed_stats.
func hedged(f func(s *StrategyResult) float64) func(*StrategyResult) (float64, bool) {
	return func(s *StrategyResult) (float64, bool) { return f(s), s.Hedged() }
}

// Hedged reports whether the strategy's figures of hedged reads apply: it
// sent a hedge, won one or cancelled an attempt at the transport.
func (s *StrategyResult) Hedged() bool {
	return s.Hedges > 0 || s.HedgesWon > 0 || s.CancelledWorkS > 0
}

// task reads a figure of the agent-level outcome, which applies only to a
// strategy that has one.
func task(f func(t *Tasks) float64) func(*StrategyResult) (float64, bool) {
	return func(s *StrategyResult) (float64, bool) { return f(taskOr0(s)), s.Tasks != nil }
}

// schedulerAnswer reads a figure of the turns the scheduler could
// answer, which applies only to a strategy whose model turns may fail
// (Tasks.SchedulerAnswerLatencyMs set); a p95 is +Inf when that turn got
// no answer.
func schedulerAnswer(f func(t *Tasks) float64) func(*StrategyResult) (float64, bool) {
	return func(s *StrategyResult) (float64, bool) {
		t := s.Tasks
		if t == nil || t.SchedulerAnswerLatencyMs == nil {
			return 0, false
		}
		return f(t), true
	}
}

// answeredTask reads a time to answer a task, which applies only when a
// task was completed.
func answeredTask(f func(l Summary) float64) func(*StrategyResult) (float64, bool) {
	return func(s *StrategyResult) (float64, bool) {
		t := taskOr0(s)
		return f(t.TimeToAnswerMs), t.Completed > 0
	}
}

// taskOr0 is the strategy's Tasks, or a zero one.
func taskOr0(s *StrategyResult) *Tasks {
	if s.Tasks == nil {
		return &Tasks{}
	}
	return s.Tasks
}

// Figure returns the strategy's figure named key: the JSON path of its
// field ("turns", "turn_latency_ms.p95", "answer_latency_ms.answered_share",
// "peak_in_flight.llm", "classes.batch.call_share"; see FigureKeys), in that field's unit. ok is false
// when the figure does not apply (a latency of a strategy that finished no
// turn, a service it never called) or key names no figure. A time to
// answer that falls among unanswered turns is +Inf.
func (s *StrategyResult) Figure(key string) (float64, bool) {
	if svc, ok := strings.CutPrefix(key, PeakFigure); ok {
		v, ok := s.PeakInFlight[svc]
		return float64(v), ok
	}
	if rest, ok := strings.CutPrefix(key, ClassFigure); ok {
		return s.classFigure(rest)
	}
	for _, f := range figures {
		if f.key == key {
			return f.read(s)
		}
	}
	return 0, false
}

// FigureKeys lists the keys of Figure: the fixed figures in table order,
// then PeakFigure + service for every service a strategy of ss names in
// its PeakInFlight, sorted, then the class figures of every session class
// a strategy of ss has (ClassFigure), in the order of its classes.
func FigureKeys(ss ...*StrategyResult) []string {
	var out []string
	for _, f := range figures {
		out = append(out, f.key)
	}
	services := map[string]bool{}
	for _, s := range ss {
		for name := range s.PeakInFlight {
			services[name] = true
		}
	}
	for _, name := range slices.Sorted(maps.Keys(services)) {
		out = append(out, PeakFigure+name)
	}
	return append(out, classFigureKeys(ss)...)
}

// SeedValues returns the figure named key under each of the strategy's
// seeds (SeedRuns), in order; nil when it has fewer than two or the
// figure does not apply under one of them.
func (s *StrategyResult) SeedValues(key string) []float64 {
	if len(s.SeedRuns) < 2 {
		return nil
	}
	xs := make([]float64, 0, len(s.SeedRuns))
	for i := range s.SeedRuns {
		v, ok := s.SeedRuns[i].Figure(key)
		if !ok {
			return nil
		}
		xs = append(xs, v)
	}
	return xs
}

// SeedStatsOf returns the mean and 95% interval over the strategy's seeds
// (IntervalOf over SeedValues) of every figure of FigureKeys that applies
// under every seed: what results.json's seed_stats holds. Nil with fewer
// than two seeds.
func SeedStatsOf(s *StrategyResult) map[string]Interval {
	if len(s.SeedRuns) < 2 {
		return nil
	}
	runs := []*StrategyResult{s}
	for i := range s.SeedRuns {
		runs = append(runs, &s.SeedRuns[i])
	}
	out := map[string]Interval{}
	for _, key := range FigureKeys(runs...) {
		if xs := s.SeedValues(key); xs != nil {
			out[key] = IntervalOf(xs)
		}
	}
	return out
}

// SeedInterval returns the mean and 95% interval over the strategy's
// seeds of the figure named key: SeedStats' when the results carry it
// (what results.json says), else computed from SeedRuns (results written
// before the field existed). ok is false with fewer than two seeds or when
// the figure does not apply under one of them.
func (s *StrategyResult) SeedInterval(key string) (Interval, bool) {
	if iv, ok := s.SeedStats[key]; ok {
		return iv, true
	}
	if xs := s.SeedValues(key); xs != nil {
		return IntervalOf(xs), true
	}
	return Interval{}, false
}
