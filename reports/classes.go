package reports

import (
	"fmt"
	"strings"

	"github.com/simbench/simbench/results"
)

// classHeaders are the columns of the per-class table.
var classHeaders = []string{"strategy", "class", "sessions", "turns", "ok calls", "share", "p50 ms", "p95 ms"}

// classRows returns the per-class table of a run whose workload has
// session classes, a row per strategy and class (nil when no strategy has
// classes): what each class got done, its share of the successful calls
// and its time to answer.
func classRows(r *results.Results) [][]string {
	var rows [][]string
	for i := range r.Strategies {
		s := &r.Strategies[i]
		for _, c := range s.Classes {
			p50, p95 := "–", "–"
			if c.Turns > 0 {
				p50, p95 = answerMillis(c.AnswerLatencyMs.P50), answerMillis(c.AnswerLatencyMs.P95)
			}
			rows = append(rows, []string{
				s.Name, c.Name, num(float64(c.Sessions)), num(float64(c.Turns)), num(float64(c.GoodCalls)),
				fixed(100*c.CallShare, 1, false) + "%", p50, p95,
			})
		}
	}
	return rows
}

// classKey explains the per-class table in one sentence.
const classKey = "each class is a part of the workload's sessions; share is its fraction of every class's successful calls, which a strategy's priority table guarantees from below while the class waits; p50 and p95 are its time to answer"

// classSpare are the per-class columns a narrow terminal leaves out, the
// least essential first: share and p95 are what a priority table decides.
var classSpare = []string{"p50 ms", "ok calls", "sessions", "turns"}

// classTextTable is the per-class table in columns: the strategy and class
// are text, aligned left, the others numbers.
func classTextTable(rows [][]string) columnTable {
	return columnTable{headers: classHeaders, rows: rows, left: 2, spare: classSpare}
}

// classTableMarkdown writes the per-class table as a Markdown section.
func classTableMarkdown(b *strings.Builder, rows [][]string) {
	b.WriteString("## Per class\n\n")
	ct := classTextTable(rows)
	mdTable(b, ct.headers, ct.left, ct.rows)
	fmt.Fprintf(b, "\n%s\n\n", mdEscape(sentence(classKey)))
}
