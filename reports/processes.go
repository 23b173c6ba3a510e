package reports

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/simbench/simbench/sim"
)

// processHeaders are the columns of the per-process table.
var processHeaders = []string{"strategy", "process", "share", "turns", "goodput/s", "429s", "429 share", "answer p95 ms", "quota round trips"}

// processRows returns the per-process table of a multi-process run, a row
// per strategy and process (nil when no strategy has processes): what each
// process of the fleet got done, the 429s it met, its time to answer and
// its round trips to the shared quota.
func processRows(r *sim.Results) [][]string {
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
	width := make([]int, len(processHeaders))
	for j, h := range processHeaders {
		width[j] = len(h)
	}
	for _, row := range rows {
		for j, c := range row {
			width[j] = max(width[j], utf8.RuneCountInString(c))
		}
	}
	line := func(cells []string) string {
		var b strings.Builder
		for j, c := range cells {
			pad := strings.Repeat(" ", width[j]-utf8.RuneCountInString(c))
			if j < 2 {
				b.WriteString(c + pad)
			} else {
				b.WriteString(pad + c)
			}
			if j < len(cells)-1 {
				b.WriteString("  ")
			}
		}
		return strings.TrimRight(b.String(), " ")
	}
	out := []string{line(processHeaders)}
	for _, row := range rows {
		out = append(out, line(row))
	}
	return out
}

// processTableMarkdown writes the per-process table as a Markdown section.
func processTableMarkdown(b *strings.Builder, rows [][]string) {
	b.WriteString("## Per process\n\n")
	b.WriteString("| " + strings.Join(processHeaders, " | ") + " |\n")
	b.WriteString("| :-- | :-- |" + strings.Repeat(" --: |", len(processHeaders)-2) + "\n")
	for _, row := range rows {
		cells := make([]string, len(row))
		for j, c := range row {
			cells[j] = mdEscape(c)
		}
		fmt.Fprintf(b, "| %s |\n", strings.Join(cells, " | "))
	}
	fmt.Fprintf(b, "\n%s\n\n", mdEscape(sentence(processKey)))
}
