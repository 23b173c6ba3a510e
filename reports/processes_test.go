package reports

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

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
	if strings.Contains(text.String(), "fallback") {
		t.Errorf("a run whose processes never fell back shows a fallback column:\n%s", text.String())
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
	for _, w := range []string{`<h3 id="processes">Per process</h3>`, `<th class="text">process</th><th>share</th>`, `<td class="text">p1</td><td>75.0%</td><td>30</td><td>12.50</td>`} {
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

// TestProcessTableFallback checks the per-process table's fallback column:
// it appears when a process switched to its quota fallback, shows switches
// × seconds for it, "0 s" for a process of a shared quota that never
// switched and "–" for a strategy without a shared store, in the terminal
// table, report.md and report.html alike, and its key explains it.
func TestProcessTableFallback(t *testing.T) {
	r := tier3Results()
	split, shared := &r.Strategies[0], &r.Strategies[1]
	split.Processes = []results.ProcessResult{
		{Name: "p1", Share: 0.5, Turns: 10, Attempts: 40, GoodputPerS: 2, AnswerLatencyMs: results.AnswerSummary{P95: 2500}},
		{Name: "p2", Share: 0.5, Turns: 10, Attempts: 40, GoodputPerS: 2, AnswerLatencyMs: results.AnswerSummary{P95: 2500}},
	}
	shared.Processes = []results.ProcessResult{
		{Name: "p1", Share: 0.5, Turns: 12, Attempts: 40, GoodputPerS: 3, AnswerLatencyMs: results.AnswerSummary{P95: 2500}, QuotaRoundTrips: 900, QuotaFallbacks: 2, QuotaFallbackS: 61.34},
		{Name: "p2", Share: 0.5, Turns: 11, Attempts: 40, GoodputPerS: 3, AnswerLatencyMs: results.AnswerSummary{P95: 2500}, QuotaRoundTrips: 800},
	}
	var text bytes.Buffer
	if err := WriteTable(&text, r, false); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(text.String(), "\n")
	row := func(strategy, process string) string {
		for _, l := range lines {
			if f := strings.Fields(l); len(f) > 2 && f[0] == strategy && f[1] == process {
				return l
			}
		}
		t.Fatalf("table has no row for %s %s:\n%s", strategy, process, text.String())
		return ""
	}
	header := ""
	for _, l := range lines {
		if strings.Contains(l, "quota round trips") {
			header = l
		}
	}
	for _, c := range []struct{ strategy, process, trips, fallback string }{
		{split.Name, "p1", "–", "–"}, {shared.Name, "p1", "900", "2 × 61.3 s"}, {shared.Name, "p2", "800", "0 s"},
	} {
		l := row(c.strategy, c.process)
		f := strings.Fields(l)
		if len(f) < 10 || f[8] != c.trips || strings.Join(f[9:], " ") != c.fallback {
			t.Errorf("row %s %s = %q, want quota round trips %q and fallback %q", c.strategy, c.process, l, c.trips, c.fallback)
		}
		if utf8.RuneCountInString(l) != utf8.RuneCountInString(header) {
			t.Errorf("row %s %s is not aligned right under the header:\n%s\n%s", c.strategy, c.process, header, l)
		}
	}
	for _, w := range []string{"quota round trips    fallback", "fallback is a process's switches"} {
		if !strings.Contains(text.String(), w) {
			t.Errorf("table lacks %q:\n%s", w, text.String())
		}
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, r, nil); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		"| answer p95 ms | quota round trips | fallback |",
		"| " + split.Name + " | p2 | 50.0% | 10 | 2.00 | 0 | 0.0% | 2,500 | – | – |",
		"| " + shared.Name + " | p1 | 50.0% | 12 | 3.00 | 0 | 0.0% | 2,500 | 900 | 2 × 61.3 s |",
		"| " + shared.Name + " | p2 | 50.0% | 11 | 3.00 | 0 | 0.0% | 2,500 | 800 | 0 s |",
		"fallback is a process's switches",
	} {
		if !strings.Contains(md.String(), w) {
			t.Errorf("report.md lacks %q:\n%s", w, md.String())
		}
	}
	var html bytes.Buffer
	if err := WriteHTML(&html, r, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"<th>quota round trips</th><th>fallback</th>", "<td>900</td><td>2 × 61.3 s</td>", "<td>800</td><td>0 s</td>"} {
		if !strings.Contains(html.String(), w) {
			t.Errorf("report.html lacks %q", w)
		}
	}
}
