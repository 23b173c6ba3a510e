package reports

import (
	"fmt"
	"strings"

	"github.com/simbench/simbench/results"
)

// processHeaders are the columns of the per-process table.
var processHeaders = []string{"strategy", "process", "share", "turns", "goodput/s", "429s", "429 share", "answer p95 ms", "quota round trips"}

// processRows returns the per-process table of a multi-process run, a row
// per strategy and process (nil when no strategy has processes): what each
// process of the fleet got done, the 429s it met, its time to answer and
// its round trips to the shared quota.
func processRows(r *results.Results) [][]string {
	var rows [][]string
	for i := range r.Strategies {
		s := &r.Strategies[i]
		for _, p := range s.Processes {
			share := "–"
			if p.Attempts > 0 {
				share = fixed(100*float64(p.RateLimited)/float64(p.Attempts), 1, false) + "%"
			}
			trips := "–"
			if p.QuotaRoundTrips > 0 {
				trips = num(float64(p.QuotaRoundTrips))
			}
			rows = append(rows, []string{
				s.Name, p.Name, fixed(100*p.Share, 1, false) + "%", num(float64(p.Turns)), dec2(p.GoodputPerS),
				num(float64(p.RateLimited)), share, answerMillis(p.AnswerLatencyMs.P95), trips,
			})
		}
	}
	return rows
}

// processKey explains the per-process table in one sentence.
const processKey = "each process runs its share of the sessions (or arrivals) with a scheduler of its own against the same services; the strategy's row above is the fleet's total"

// processTableText lays the per-process table out in aligned columns for
// a terminal: text columns left, numbers right.
func processTableText(rows [][]string) []string {
	return alignedLines(processHeaders, rows, 2)
}

// processTableMarkdown writes the per-process table as a Markdown section.
func processTableMarkdown(b *strings.Builder, rows [][]string) {
	b.WriteString("## Per process\n\n")
	mdTable(b, processHeaders, 2, rows)
	fmt.Fprintf(b, "\n%s\n\n", mdEscape(sentence(processKey)))
}
