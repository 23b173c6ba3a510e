package gate

import (
	"errors"
	"strings"
	"testing"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
)

func TestCheckThresholds(t *testing.T) {
	res := &results.Results{Strategies: []results.StrategyResult{
		{Name: "a", Turns: 10, Attempts: 100, RateLimited: 1, AnswerLatencyMs: results.AnswerSummary{P95: 1500, AnsweredShare: 1}},
		{Name: "b", Turns: 10, Attempts: 100, AnswerLatencyMs: results.AnswerSummary{P95: results.Unanswered, AnsweredShare: 0.5}},
	}}
	sc := &scenarios.Scenario{Strategies: []scenarios.Strategy{{Name: "a"}, {Name: "b"}}}
	ts, err := Thresholds(sc, []string{"answer_p95<2s", "a:rate_limited_share<=0.001"})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	err = CheckThresholds(&b, res, ts)
	// a meets the p95 bound, b has no p95 (no data fails); a's 429 share
	// of 0.01 breaks the second.
	want := "thresholds: answer_p95<2s failed for b; a:rate_limited_share<=0.001 failed for a"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
	for _, line := range []string{"  answer_p95<2s  (--threshold answer_p95<2s)", "    a                        1.5s         pass", "    b                        no data      FAIL", "    a                        0.01         FAIL"} {
		if !strings.Contains(b.String(), line+"\n") {
			t.Errorf("output lacks %q:\n%s", line, b.String())
		}
	}
	if _, err := Thresholds(sc, []string{"c:answer_p95<2s"}); err == nil || !strings.Contains(err.Error(), `the run has no strategy "c"`) {
		t.Errorf("a threshold for a missing strategy: %v", err)
	}
}

func TestCheckValid(t *testing.T) {
	if err := CheckValid(&results.Results{Strategies: []results.StrategyResult{{Name: "a"}}}); err != nil {
		t.Errorf("a valid run: %v", err)
	}
	err := CheckValid(&results.Results{Invalid: "a: fell behind", Strategies: []results.StrategyResult{{Name: "a", Invalid: "fell behind"}, {Name: "b"}}})
	var inv *InvalidRunError
	if !errors.As(err, &inv) || len(inv.Strategies) != 1 || inv.Strategies[0] != "a" {
		t.Fatalf("err = %v, want an InvalidRunError naming a", err)
	}
	if want := "invalid: a (a: fell behind); the results are written and marked so; --allow-invalid exits 0 anyway"; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
}
