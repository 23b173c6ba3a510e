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

// classTableText lays the per-class table out in aligned columns for a
// terminal: text columns left, numbers right.
func classTableText(rows [][]string) []string {
	return alignedLines(classHeaders, rows, 2)
}

// classTableMarkdown writes the per-class table as a Markdown section.
func classTableMarkdown(b *strings.Builder, rows [][]string) {
	b.WriteString("## Per class\n\n")
	mdTable(b, classHeaders, 2, rows)
	fmt.Fprintf(b, "\n%s\n\n", mdEscape(sentence(classKey)))
}
