package reports

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/simbench/simbench/results"
)

// TestKeyTable: a run on a service with nested limits shows a per-key
// table in the terminal, report.md and report.html, with each key's counts,
// its 429 share worked out here from them, and its 429s by level; a key
// with no project shows –, and a run without keys shows no table.
func TestKeyTable(t *testing.T) {
	r := tier3Results()
	s := &r.Strategies[0]
	s.Keys = map[string][]results.KeyShare{"llm": {
		{Key: "sk-heavy", Project: "research", Admitted: 5400, RateLimited: 600, RateLimitedShare: 0.1, RateLimitedBy: map[string]int64{"key": 100, "project": 450, "organization": 50}},
		{Key: "sk-light", Admitted: 1200, RateLimitedBy: map[string]int64{"key": 0, "project": 0, "organization": 0}},
	}}
	heavyShare := fmt.Sprintf("%.1f%%", 100*600.0/(5400+600))
	var text bytes.Buffer
	if err := WriteTable(&text, r, false); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"per key", "by organization", "research  sk-heavy", "5,400", heavyShare, "–         sk-light"} {
		if !strings.Contains(text.String(), w) {
			t.Errorf("table lacks %q:\n%s", w, text.String())
		}
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, r, nil); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"## Per key", "| " + s.Name + " | llm | research | sk-heavy | 5,400 | 600 | " + heavyShare + " | 100 | 450 | 50 |", "| " + s.Name + " | llm | – | sk-light | 1,200 | 0 | 0.0% | 0 | 0 | 0 |"} {
		if !strings.Contains(md.String(), w) {
			t.Errorf("report.md lacks %q:\n%s", w, md.String())
		}
	}
	var html bytes.Buffer
	if err := WriteHTML(&html, r, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`<h3 id="keys">Per key</h3>`, `<td class="text">sk-heavy</td><td>5,400</td><td>600</td><td>` + heavyShare + `</td>`} {
		if !strings.Contains(html.String(), w) {
			t.Errorf("report.html lacks %q", w)
		}
	}
	one := tier3Results()
	text.Reset()
	if err := WriteTable(&text, one, false); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text.String(), "per key") {
		t.Error("a run without nested limits shows a per-key table")
	}
}
