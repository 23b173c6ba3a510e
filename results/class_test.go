package results

import (
	"slices"
	"testing"
)

func TestClassFigures(t *testing.T) {
	s := &StrategyResult{Classes: []ClassResult{
		{Name: "interactive", Turns: 10, CallShare: 0.4, AnswerLatencyMs: AnswerSummary{P95: 1500}},
		{Name: "batch", CallShare: 0.6},
	}}
	tests := []struct {
		key  string
		want float64
		ok   bool
	}{
		{"classes.interactive.answer_latency_ms.p95", 1500, true},
		{"classes.batch.call_share", 0.6, true},
		{"classes.batch.answer_latency_ms.p95", 0, false}, // no turn finished
		{"classes.bulk.call_share", 0, false},
		{"classes.batch.share", 0, false},
	}
	for _, tt := range tests {
		got, ok := s.Figure(tt.key)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Figure(%q) = %v, %v; want %v, %v", tt.key, got, ok, tt.want, tt.ok)
		}
	}
	keys := FigureKeys(s)
	if !slices.Contains(keys, "classes.batch.call_share") || !slices.Contains(keys, "classes.interactive.turns") {
		t.Errorf("FigureKeys lacks the class figures: %v", keys)
	}
	if slices.ContainsFunc(FigureKeys(&StrategyResult{}), func(k string) bool { return len(k) > 8 && k[:8] == ClassFigure }) {
		t.Error("FigureKeys lists class figures for a strategy without classes")
	}
}
