package reports

import (
	"fmt"
	"strings"

	"github.com/simbench/simbench/results"
)

// processHeaders are the columns of the per-process table; fallbackHeader
// is added after them when a process of the run switched to its quota
// fallback (see processTableOf).
var processHeaders = []string{"strategy", "process", "share", "turns", "goodput/s", "429s", "429 share", "answer p95 ms", "quota round trips"}

const fallbackHeader = "fallback"

// processKey explains the per-process table in one sentence; fallbackKey
// explains its fallback column, when it has one.
const (
	processKey  = "each process runs its share of the sessions (or arrivals) with a scheduler of its own against the same services; the strategy's row above is the fleet's total"
	fallbackKey = "fallback is a process's switches to its fallback (a local share, or no credit) while its shared quota store was unreachable or slower than the timeout, times the seconds of the run it spent on it; – for a strategy without a shared store"
)

// processTable is the per-process table of a multi-process run: its
// columns, a row per strategy and process, and its key.
type processTable struct {
	headers []string
	rows    [][]string
	key     string
}

// processTableOf returns the per-process table of a multi-process run (nil
// when no strategy has processes): what each process of the fleet got
// done, the 429s it met, its time to answer and its round trips to the
// shared quota; and, when any process switched to its quota fallback, the
// time each spent on it.
func processTableOf(r *results.Results) *processTable {
	fallback := false
	for i := range r.Strategies {
		for _, p := range r.Strategies[i].Processes {
			fallback = fallback || p.QuotaFallbacks > 0
		}
	}
	t := &processTable{headers: processHeaders, key: processKey}
	if fallback {
		t.headers = append(processHeaders[:len(processHeaders):len(processHeaders)], fallbackHeader)
		t.key = processKey + "; " + fallbackKey
	}
	for i := range r.Strategies {
		s := &r.Strategies[i]
		shared := false
		for _, p := range s.Processes {
			shared = shared || p.QuotaRoundTrips > 0 || p.QuotaFallbacks > 0
		}
		for _, p := range s.Processes {
			share := "–"
			if p.Attempts > 0 {
				share = fixed(100*float64(p.RateLimited)/float64(p.Attempts), 1, false) + "%"
			}
			trips := "–"
			if p.QuotaRoundTrips > 0 {
				trips = num(float64(p.QuotaRoundTrips))
			}
			row := []string{
				s.Name, p.Name, fixed(100*p.Share, 1, false) + "%", num(float64(p.Turns)), dec2(p.GoodputPerS),
				num(float64(p.RateLimited)), share, answerMillis(p.AnswerLatencyMs.P95), trips,
			}
			if fallback {
				row = append(row, fallbackText(shared, p))
			}
			t.rows = append(t.rows, row)
		}
	}
	if t.rows == nil {
		return nil
	}
	return t
}

// fallbackText is a process's time on its quota fallback: "2 × 60.0 s"
// (switches × seconds), "0 s" when it never switched, "–" when its
// strategy has no shared store.
func fallbackText(shared bool, p results.ProcessResult) string {
	switch {
	case !shared:
		return "–"
	case p.QuotaFallbacks == 0:
		return "0 s"
	}
	return num(float64(p.QuotaFallbacks)) + " × " + fixed(p.QuotaFallbackS, 1, false) + " s"
}

// processSpare are the per-process columns a narrow terminal leaves out,
// the least essential first: a process's round trips, 429 share, turns
// and share say the least about the strategy, and the fleet's total above
// has the 429s.
var processSpare = []string{"quota round trips", "429 share", "turns", "share", "429s"}

// processTextTable is the per-process table in columns: the strategy and
// process are text, aligned left, the others numbers.
func processTextTable(t *processTable) columnTable {
	return columnTable{headers: t.headers, rows: t.rows, left: 2, spare: processSpare}
}

// processTableMarkdown writes the per-process table as a Markdown section.
func processTableMarkdown(b *strings.Builder, t *processTable) {
	b.WriteString("## Per process\n\n")
	ct := processTextTable(t)
	mdTable(b, ct.headers, ct.left, ct.rows)
	fmt.Fprintf(b, "\n%s\n\n", mdEscape(sentence(t.key)))
}
