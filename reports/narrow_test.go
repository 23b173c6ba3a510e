package reports

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

// On an 80-column terminal the table fits: the decision comes first, every
// line is at most 80 columns, and the table keeps the columns a choice
// rests on; without a width the wide layout is unchanged.
func TestNarrowLayoutFitsTheTerminal(t *testing.T) {
	r := tier3Results()
	d := tier3Decision(t)
	r.Decision = &d
	var b bytes.Buffer
	if err := WriteTableWith(&b, r, TableOptions{Width: 80}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, l := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(l); n > 80 {
			t.Errorf("a line of %d columns: %q", n, l)
		}
	}
	dec, table := strings.Index(out, "decision\n"), strings.Index(out, "strategy ")
	if dec < 0 || table < 0 || dec > table {
		t.Errorf("decision at %d, table at %d: want the decision first\n%s", dec, table, out)
	}
	for _, want := range []string{"answer p95", "goodput/s", "429s", "--columns all"} {
		if !strings.Contains(out, want) {
			t.Errorf("the narrow layout lacks %q:\n%s", want, out)
		}
	}
	var wide bytes.Buffer
	if err := WriteTableWith(&wide, r, TableOptions{}); err != nil {
		t.Fatal(err)
	}
	if w := tableWidth(strings.Split(wide.String(), "\n")); w <= 120 || strings.Index(wide.String(), "decision\n") < strings.Index(wide.String(), "strategy ") {
		t.Errorf("the wide layout is %d columns with the decision before the table: want it as before", w)
	}
}

// A line longer than the width breaks at spaces, continuations indented.
func TestWrap(t *testing.T) {
	tests := []struct {
		give  string
		width int
		want  []string
	}{
		{"short", 10, []string{"short"}},
		{"  one two three four", 10, []string{"  one two", "    three", "    four"}},
		{"unbreakablewordhere x", 8, []string{"unbreakablewordhere", "  x"}},
		{"anything at all", 0, []string{"anything at all"}},
	}
	for _, tt := range tests {
		if got := wrap(tt.give, tt.width); strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("wrap(%q, %d) = %q, want %q", tt.give, tt.width, got, tt.want)
		}
	}
}
