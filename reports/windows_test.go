package reports

import (
	"bytes"
	"strings"
	"testing"

	"github.com/simbench/simbench/results"
)

// windowResults is a run with one timed event and two strategies'
// figures over its window.
func windowResults() *results.Results {
	w := func(good, share, apc float64, calls int64) []results.WindowResult {
		return []results.WindowResult{{Label: "limits ×0.5", Service: "llm", StartS: 190, EndS: 360, GoodputPerS: good,
			Attempts: 100, RateLimited: int64(share * 100), RateLimitedShare: share, Calls: calls, AttemptsPerCall: apc,
			LimitPerS: 25, Headroom: 0.9}}
	}
	return &results.Results{
		Scenario: "x", Seed: 1, Mode: "virtual", DurationS: 480,
		Events: []results.EventSpan{{Service: "llm", Kind: "limits", StartS: 180, EndS: 480, Label: "limits ×0.5"}},
		Strategies: []results.StrategyResult{
			{Name: "static", Turns: 1, Calls: 1, Windows: w(24.98, 0.4444, 1.78, 4284)},
			{Name: "aimd", Turns: 1, Calls: 1, Windows: w(22.5, 0.0025, 1.0, 3912)},
		},
	}
}

// TestEventTables checks the per-event table in the terminal table,
// report.md and report.html: the event, its window, and each strategy's
// goodput against the limit × headroom (24.98 ÷ 22.5 = 111%, 22.5 ÷ 22.5 =
// 100%), 429 share and attempts per call.
func TestEventTables(t *testing.T) {
	r := windowResults()
	var text, md, html bytes.Buffer
	if err := WriteTable(&text, r, false); err != nil {
		t.Fatal(err)
	}
	if err := WriteMarkdown(&md, r, nil); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(&html, r, Options{}); err != nil {
		t.Fatal(err)
	}
	title := "limits ×0.5 on llm, 180–480 s; figures from 190 to 360 s, limit 25 requests/s"
	for name, out := range map[string]string{"table": text.String(), "markdown": md.String(), "html": html.String()} {
		if !strings.Contains(out, title) {
			t.Errorf("%s lacks the event's title %q:\n%s", name, title, out)
		}
		for _, cell := range []string{"24.98", "111%", "44.44%", "1.78", "4,284", "22.50", "100%", "0.25%", "1.00"} {
			if !strings.Contains(out, cell) {
				t.Errorf("%s lacks %q", name, cell)
			}
		}
	}
	if !strings.Contains(md.String(), "| static | 24.98 | 111% | 44.44% | 1.78 | 4,284 |") {
		t.Errorf("markdown row of static missing:\n%s", md.String())
	}
	r.Events, r.Strategies[0].Windows, r.Strategies[1].Windows = nil, nil, nil
	text.Reset()
	if err := WriteTable(&text, r, false); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text.String(), "around each event") {
		t.Errorf("a run without events shows event tables:\n%s", text.String())
	}
}
