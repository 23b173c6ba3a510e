package reports

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/simbench/simbench/results"
)

// On an 80-column terminal the table fits: the decision comes first, every
// line is at most 80 columns, and the table keeps the columns a choice
// rests on; without a width the wide layout is unchanged.
func TestNarrowLayoutFitsTheTerminal(t *testing.T) {
	r := tier3Results()
	d := tier3Decision(t)
	r.Decision = &d
	out := narrowTable(t, r)
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

// secondaryResults is a run with every secondary table: six processes per
// strategy (one fell back to its local share), two session classes,
// tasks and a timed event, under strategy names as long as the built-in
// scenarios' longest.
func secondaryResults() *results.Results {
	r := tier3Results()
	names := []string{"decorrelated-jitter-shared", "hallucinated-fanout", "wide-1x10-first8"}
	r.Strategies = r.Strategies[:len(names)]
	r.Events = []results.EventSpan{{Service: "llm", Kind: "limits", StartS: 180, EndS: 480, Label: "limits ×0.5"}}
	for i := range r.Strategies {
		s := &r.Strategies[i]
		s.Name = names[i]
		s.Processes = nil
		for p := range 6 {
			pr := results.ProcessResult{
				Name: fmt.Sprintf("p%d", p+1), Share: 1.0 / 6, Turns: 1305, Attempts: 12_000, GoodputPerS: 13.85,
				RateLimited: 10_342, AnswerLatencyMs: results.AnswerSummary{P95: 14_420}, QuotaRoundTrips: 12_963,
			}
			if i == 0 && p == 0 {
				pr.QuotaFallbacks, pr.QuotaFallbackS = 12, 161.34
			}
			s.Processes = append(s.Processes, pr)
		}
		s.Classes = []results.ClassResult{
			{Name: "interactive", Sessions: 4, Turns: 1593, GoodCalls: 12_372, CallShare: 0.395, AnswerLatencyMs: results.AnswerSummary{P50: 10_755, P95: 21_459}},
			{Name: "batch", Sessions: 28, Turns: 10_907, GoodCalls: 23_628, CallShare: 0.605, AnswerLatencyMs: results.AnswerSummary{P50: 17_818, P95: 29_295}},
		}
		s.Tasks = &results.Tasks{Begun: 100, Completed: 87, Completion: 0.87 - 0.1*float64(i), ModelFailures: 112 + int64(i),
			TimeToAnswerMs: results.Summary{P50: 22_398, P95: 35_410}, CostUSD: 112.26 - float64(i), CostPerAnsweredTaskUSD: 0.9435}
		s.Windows = []results.WindowResult{{Label: "limits ×0.5", Service: "llm", StartS: 190, EndS: 480, GoodputPerS: 124.98 - float64(i),
			Attempts: 10_000, RateLimited: 4444, RateLimitedShare: 0.4444, Calls: 14_284, AttemptsPerCall: 1.78, LimitPerS: 25, Headroom: 0.9}}
	}
	return r
}

// sectionLines returns the lines of the terminal output under the section
// title, up to the blank line that ends it.
func sectionLines(t *testing.T, out, title string) []string {
	t.Helper()
	i := strings.Index(out, "\n"+title+"\n")
	if i < 0 {
		t.Fatalf("no section %q in:\n%s", title, out)
	}
	rest := out[i+len(title)+2:]
	if j := strings.Index(rest, "\n\n"); j >= 0 {
		rest = rest[:j]
	}
	return strings.Split(rest, "\n")
}

// On an 80-column terminal every secondary table (per process, per class,
// tasks, around each event) fits, long strategy names and a fallback
// column included: each leaves out its spare columns, the least essential
// first, and its key names them; text columns stay aligned left and
// numbers right. Without a width (a file, a pipe) every column is written,
// as before.
func TestNarrowSecondaryTablesFit(t *testing.T) {
	r := secondaryResults()
	out := narrowTable(t, r)
	tests := []struct {
		title       string
		keep, leave []string
		note        string
	}{
		{"per process", []string{"strategy", "process", "goodput/s", "answer p95 ms", "fallback"}, []string{"quota round trips", "429 share", " turns ", " share ", "429s"},
			"left out at this width, in report.md: share, turns, 429s, 429 share and quota round trips"},
		{"per class", []string{"strategy", "class", "share", "p95 ms"}, []string{"p50 ms", "ok calls"}, "left out at this width, in report.md: "},
		{"tasks", []string{"strategy", "completion %", "task p95", "$/answer"}, []string{"task p50"}, "left out at this width, in report.md: task p50"},
		{"around each event", []string{"strategy", "goodput/s", "of limit × headroom", "429 share"}, []string{"attempts/call"},
			"left out at this width, in report.md: attempts/call and calls"},
	}
	for _, tt := range tests {
		lines := sectionLines(t, out, tt.title)
		header := ""
		for _, l := range lines {
			if strings.Contains(l, "strategy ") {
				header = l + " "
				break
			}
		}
		for _, h := range tt.keep {
			if !strings.Contains(header, h) {
				t.Errorf("%s: the narrow header %q lacks %q", tt.title, header, h)
			}
		}
		for _, h := range tt.leave {
			if strings.Contains(header, h) {
				t.Errorf("%s: the narrow header %q keeps %q", tt.title, header, h)
			}
		}
		if key := strings.Join(strings.Fields(strings.Join(lines, " ")), " "); !strings.Contains(key, tt.note) || (tt.note == "") == strings.Contains(key, "left out") {
			t.Errorf("%s: the key does not say %q:\n%s", tt.title, tt.note, strings.Join(lines, "\n"))
		}
	}
	// The process column starts under its header; goodput/s ends under
	// its header (text left, numbers right).
	lines := sectionLines(t, out, "per process")
	header, row := lines[0], lines[1]
	if p := strings.Index(header, "process"); !strings.HasPrefix(row[p:], "p1 ") {
		t.Errorf("the process column is not aligned left under its header:\n%s\n%s", header, row)
	}
	if e := strings.Index(header, "goodput/s") + len("goodput/s"); !strings.HasSuffix(row[:e], " 13.85") {
		t.Errorf("goodput/s is not aligned right under its header:\n%s\n%s", header, row)
	}

	var wide bytes.Buffer
	if err := WriteTableWith(&wide, r, TableOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		title   string
		headers []string
	}{
		{"per process", append(slices.Clone(processHeaders), fallbackHeader)},
		{"per class", classHeaders},
		{"tasks", taskHeaders(taskMetrics())},
		{"around each event", windowHeaders},
	} {
		lines := sectionLines(t, wide.String(), c.title)
		head := lines[0]
		if c.title == "around each event" {
			head = lines[1]
		}
		if got := strings.Join(strings.Fields(head), " "); got != strings.Join(strings.Fields(strings.Join(c.headers, " ")), " ") {
			t.Errorf("%s: the wide header is %q, want every column %q", c.title, head, c.headers)
		}
	}
	if strings.Contains(wide.String(), "left out") {
		t.Errorf("the wide layout leaves columns out:\n%s", wide.String())
	}
}

// fit leaves spare columns out in their order, only as many as the width
// needs, and keeps each remaining column's alignment.
func TestColumnTableFit(t *testing.T) {
	ct := columnTable{
		headers: []string{"name", "kind", "a", "bb", "ccc"},
		rows:    [][]string{{"x", "long kind", "1", "22", "333"}},
		left:    2,
		spare:   []string{"kind", "bb", "ccc"},
	}
	tests := []struct {
		width   int
		want    []string
		dropped []string
	}{
		{0, []string{"name  kind       a  bb  ccc", "x     long kind  1  22  333"}, nil},
		{27, []string{"name  kind       a  bb  ccc", "x     long kind  1  22  333"}, nil},
		{26, []string{"name  a  bb  ccc", "x     1  22  333"}, []string{"kind"}},
		{12, []string{"name  a  ccc", "x     1  333"}, []string{"kind", "bb"}},
		{3, []string{"name  a", "x     1"}, []string{"kind", "bb", "ccc"}},
	}
	for _, tt := range tests {
		lines, dropped := ct.fit(tt.width)
		if strings.Join(lines, "|") != strings.Join(tt.want, "|") || strings.Join(dropped, ",") != strings.Join(tt.dropped, ",") {
			t.Errorf("fit(%d) = %q, left out %q; want %q, left out %q", tt.width, lines, dropped, tt.want, tt.dropped)
		}
	}
	if got, want := leftOutNote([]string{"429 share", "quota round trips"}), "; left out at this width, in report.md: 429 share and quota round trips"; got != want {
		t.Errorf("leftOutNote = %q, want %q", got, want)
	}
}

// narrowTable writes r's terminal output at 80 columns and fails t for
// every line wider than that.
func narrowTable(t *testing.T, r *results.Results) string {
	t.Helper()
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
	return out
}
