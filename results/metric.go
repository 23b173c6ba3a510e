package results

// Strategy returns the named strategy's figures, or nil when the results
// hold no strategy of that name.
func (r *Results) Strategy(name string) *StrategyResult {
	for i := range r.Strategies {
		if r.Strategies[i].Name == name {
			return &r.Strategies[i]
		}
	}
	return nil
}

// Metric returns the strategy's value of a threshold metric (one of
// scenarios.ThresholdMetrics), and false when the metric has no data: a
// time-to-answer percentile that falls among unanswered turns, a share
// with nothing to divide by, a turn percentile with no turn finished.
// Times are in seconds.
func (r *StrategyResult) Metric(name string) (float64, bool) {
	answer := func(a AnswerMs) (float64, bool) {
		if !a.Answered() || r.Turns == 0 {
			return 0, false
		}
		return float64(a) / 1000, true
	}
	switch name {
	case "answer_p50":
		return answer(r.AnswerLatencyMs.P50)
	case "answer_p95":
		return answer(r.AnswerLatencyMs.P95)
	case "answer_p99":
		return answer(r.AnswerLatencyMs.P99)
	case "turn_p95":
		return r.TurnLatencyMs.P95 / 1000, r.Turns > 0
	case "answered_share":
		begun := r.Turns + r.UnfinishedTurns + r.RefusedTurns
		return r.AnswerLatencyMs.AnsweredShare, begun > 0
	case "rate_limited_share":
		if r.Attempts == 0 {
			return 0, false
		}
		return float64(r.RateLimited) / float64(r.Attempts), true
	case "goodput_per_s":
		return r.GoodputPerS, true
	case "failed_turns":
		return float64(r.FailedTurns), true
	case "early_retries":
		return float64(r.EarlyRetries), true
	}
	return 0, false
}
