package reports

import (
	"strings"
	"testing"

	"github.com/simbench/simbench/results"
)

func TestClassRows(t *testing.T) {
	if rows := classRows(&results.Results{Strategies: []results.StrategyResult{{Name: "x"}}}); rows != nil {
		t.Fatalf("rows without classes: %v", rows)
	}
	r := &results.Results{Strategies: []results.StrategyResult{{Name: "priority", Classes: []results.ClassResult{
		{Name: "interactive", Sessions: 4, Turns: 593, GoodCalls: 2372, CallShare: 0.395, AnswerLatencyMs: results.AnswerSummary{P50: 755, P95: 1459}},
		{Name: "batch", Sessions: 28},
	}}}}
	got := strings.Join(classTextTable(classRows(r)).layout(nil), "\n")
	want := strings.Join([]string{
		"strategy  class        sessions  turns  ok calls  share  p50 ms  p95 ms",
		"priority  interactive         4    593     2,372  39.5%     755   1,459",
		"priority  batch              28      0         0   0.0%       –       –",
	}, "\n")
	if got != want {
		t.Fatalf("table:\n%s\nwant:\n%s", got, want)
	}
}
