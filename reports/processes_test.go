package reports

import (
	"bytes"
	"strings"
	"testing"

	"github.com/simbench/simbench/results"
)

// TestProcessTable checks that a multi-process run's figures per process
// appear in the terminal table, report.md and report.html, and that a
// run of one process shows no such table.
func TestProcessTable(t *testing.T) {
	r := tier3Results()
	s := &r.Strategies[0]
	s.Processes = []results.ProcessResult{
		{Name: "p1", Share: 0.75, Turns: 30, Attempts: 200, GoodputPerS: 12.5, RateLimited: 20, AnswerLatencyMs: results.AnswerSummary{P95: 1234}, QuotaRoundTrips: 4321},
		{Name: "p2", Share: 0.25, Turns: 10, Attempts: 50, GoodputPerS: 4, AnswerLatencyMs: results.AnswerSummary{P95: results.Unanswered}},
	}
	wantRows := []string{
		s.Name + "  p1", "75.0%", "12.50", "10.0%", "1,234", "4,321",
		"p2", "25.0%", "—",
	}
	var text bytes.Buffer
	if err := WriteTable(&text, r, false); err != nil {
		t.Fatal(err)
	}
	for _, w := range append([]string{"per process", "quota round trips"}, wantRows...) {
		if !strings.Contains(text.String(), w) {
			t.Errorf("table lacks %q:\n%s", w, text.String())
		}
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, r, nil); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"## Per process", "| " + s.Name + " | p1 | 75.0% | 30 | 12.50 | 20 | 10.0% | 1,234 | 4,321 |", "| " + s.Name + " | p2 | 25.0% | 10 | 4.00 | 0 | 0.0% | — | – |"} {
		if !strings.Contains(md.String(), w) {
			t.Errorf("report.md lacks %q:\n%s", w, md.String())
		}
	}
	var html bytes.Buffer
	if err := WriteHTML(&html, r, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`<h3 id="processes">Per process</h3>`, "<td>p1</td><td>75.0%</td><td>30</td><td>12.50</td>"} {
		if !strings.Contains(html.String(), w) {
			t.Errorf("report.html lacks %q", w)
		}
	}

	one := tier3Results()
	text.Reset()
	md.Reset()
	html.Reset()
	if err := WriteTable(&text, one, false); err != nil {
		t.Fatal(err)
	}
	if err := WriteMarkdown(&md, one, nil); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(&html, one, Options{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text.String(), "per process") || strings.Contains(md.String(), "Per process") || strings.Contains(html.String(), "Per process") {
		t.Error("a run of one process shows a per-process table")
	}
}
