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
// ThresholdNames; FigureSpec.ThresholdValue), and false when the metric
// has no data: a time-to-answer percentile that falls among unanswered
// turns, a share with nothing to divide by, a turn percentile with no turn
// finished. Times are in seconds.
func (r *StrategyResult) Metric(name string) (float64, bool) {
	f, ok := ThresholdFigure(name)
	if !ok {
		return 0, false
	}
	return f.ThresholdValue(r)
}
