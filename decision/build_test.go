package decision

import (
	"strings"
	"testing"
	"time"

	"github.com/simbench/simbench/internal/fixtures"
	"github.com/simbench/simbench/results"
)

func tier3Decision(t *testing.T) results.Decision {
	t.Helper()
	plan, err := Recommend(Service{Name: "openai", RPM: 10000, TPM: 10_000_000, TokensPerCall: 1000, MeanLatency: 437 * time.Millisecond, CallsPerTurn: 8, Headroom: 0.9})
	if err != nil {
		t.Fatal(err)
	}
	rule := Rule{MaxShare: 0.001}
	row := NewSweepRow("as written", fixtures.Tier3Sweep(), rule)
	_, best, _ := rule.Choose(fixtures.Tier3Sweep())
	return build(input{
		Strategy: "bounded-64", Service: "openai", MaxInFlight: 64, Headroom: 0.9,
		Pace:  map[string]results.Pace{"openai": {RequestsPerMinute: 9000, TokensPerMinute: 9_000_000}},
		Retry: "full-jitter from 1s to 1m0s, 5 attempts, honouring Retry-After",
		Plan:  &plan, Row: row, Best: best, Rule: rule, Seeds: []uint64{42}, DurationS: 600,
		Baseline: &results.Outcome{Strategy: "unbounded", P95Ms: results.Unanswered, AnsweredShare: 0.229},
	})
}

func TestDecideSentence(t *testing.T) {
	d := tier3Decision(t)
	// tier3Sweep: 32 is within 5% of 48's 1,190 ms, the best under 0.1% 429s.
	want := "with strategy bounded-64, set max_in_flight = 32 and pace openai at 9,000 requests/min and 9,000,000 tokens/min: p95 answer 1.2 s, 100% answered, 0 429s (unbounded answers 23%)"
	if d.Sentence != want {
		t.Errorf("sentence\n got %q\nwant %q", d.Sentence, want)
	}
	if d.MaxInFlight != 32 || d.Evidence.Best != 48 || d.Evidence.ArithmeticCap != 65 || d.Knob != "max_in_flight" {
		t.Errorf("decision %+v", d)
	}
	if d.Expected.P95Ms != 1220 || d.Expected.Strategy != "bounded-64@32" {
		t.Errorf("expected %+v, want bounded-64@32's p95 1,220 ms", d.Expected)
	}
}

func TestDecidePerServiceAndNone(t *testing.T) {
	rule := Rule{MaxShare: 0.001}
	pts := []results.SweepPoint{{Cap: 2, P95Ms: 900, AnsweredShare: 1}, {Cap: 4, P95Ms: 600, AnsweredShare: 1}, {Cap: 6, P95Ms: 590, AnsweredShare: 1}}
	d := build(input{Strategy: "semaphore-4", Service: "sources", PerService: true, MaxInFlightPerService: map[string]int{"sources": 4},
		Headroom: 0.7, Row: NewSweepRow("as written", pts, rule), Rule: rule, Seeds: []uint64{1}})
	if d.MaxInFlightPerService["sources"] != 4 || d.MaxInFlight != 0 || !strings.HasPrefix(d.Sentence, "with strategy semaphore-4, set max_in_flight_per_service.sources = 4:") {
		t.Errorf("per-service decision %+v", d)
	}
	none := build(input{Strategy: "s", Row: NewSweepRow("x", []results.SweepPoint{{Cap: 8, P95Ms: results.Unanswered}}, rule), Rule: rule,
		Load: &LoadCheck{OfferedPerMinute: 200, SustainedPerMinute: 100, Ratio: 2}})
	if none.Evidence.Chosen != 0 || !strings.Contains(none.Sentence, "offers 2× what the limits sustain") {
		t.Errorf("no cap: %q", none.Sentence)
	}
}
