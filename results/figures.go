package results

import (
	"maps"
	"slices"
	"strings"
)

// PeakFigure is the prefix of the per-service peak in flight figures:
// "peak_in_flight.llm" is StrategyResult.PeakInFlight["llm"].
const PeakFigure = "peak_in_flight."

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

// daily reads a figure of a spent daily quota, which applies only to a
// strategy whose services have one.
func daily(f func(*DailyQuota) float64) func(*StrategyResult) (float64, bool) {
	return func(s *StrategyResult) (float64, bool) {
		if s.DailyQuota == nil {
			return 0, false
		}
		return f(s.DailyQuota), true
	}
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
	if f, ok := lookup(key); ok && !f.Derived {
		return f.read(s)
	}
	return 0, false
}

// FigureKeys lists the keys of Figure: the registry's figures that
// results.json stores (not Derived), in its order, then PeakFigure +
// service for every service a strategy of ss names in its PeakInFlight,
// sorted, then the class figures of every session class a strategy of ss
// has (ClassFigure), in the order of its classes.
func FigureKeys(ss ...*StrategyResult) []string {
	var out []string
	for _, f := range registry {
		if !f.Derived {
			out = append(out, f.Key)
		}
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
