package reports

import (
	"bytes"
	"strings"
	"testing"

	"github.com/simbench/simbench/results"
)

// tier3Decision is a decision for tier3Results, as decision.Decide makes
// them (its sentence written out).
func tier3Decision(t *testing.T) results.Decision {
	t.Helper()
	return results.Decision{
		Sentence: "with strategy bounded-64, set max_in_flight = 32 and pace openai at 9,000 requests/min and 9,000,000 tokens/min: p95 answer 1.2 s, 100% answered, 0 429s (unbounded answers 23%)",
		Strategy: "bounded-64", Service: "openai", Knob: "max_in_flight", MaxInFlight: 32, Headroom: 0.9,
		Pace:     map[string]results.Pace{"openai": {RequestsPerMinute: 9000, TokensPerMinute: 9_000_000}},
		Retry:    "full-jitter from 1s to 1m0s, 5 attempts, honouring Retry-After",
		Expected: results.Outcome{Strategy: "bounded-64@32", P50Ms: 860, P95Ms: 1220, P95LoMs: 1220, P95HiMs: 1220, AnsweredShare: 1},
		Baseline: &results.Outcome{Strategy: "unbounded", P95Ms: results.Unanswered, AnsweredShare: 0.229},
		Evidence: results.Evidence{ArithmeticCap: 65, Caps: []int{16, 32, 48, 65, 96, 128}, Chosen: 32, Best: 48, Knee: 32,
			Rule:     "the smallest cap whose p95 time to answer is within 5% of the best (or whose 95% interval overlaps the best's), among caps with 429 share ≤ 0.1% that answer ≥ 95% of turns",
			MaxShare: 0.001, Tolerance: 0.05, Seeds: []uint64{42}, DurationS: 600},
	}
}

func TestMarkdownShowsDecision(t *testing.T) {
	r := tier3Results()
	d := tier3Decision(t)
	r.Decision = &d
	var b bytes.Buffer
	if err := WriteMarkdown(&b, r, nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Decision", "**with strategy bounded-64, set max\\_in\\_flight = 32 and pace openai", "- settings: strategy bounded-64 with max\\_in\\_flight = 32", "- rule: the smallest cap"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}
