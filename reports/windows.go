package reports

import (
	"fmt"
	"strings"

	"github.com/simbench/simbench/results"
)

// windowHeaders are the columns of a per-event table.
var windowHeaders = []string{"strategy", "goodput/s", "of limit × headroom", "429 share", "attempts/call", "calls"}

// eventTable is one timed event's table: a title saying what changed
// when and which stretch the figures cover, and a row per strategy.
type eventTable struct {
	Title string
	Rows  [][]string
}

// eventTables returns a table per timed event of the run, in the order of
// r.Events, from the strategies' windows (nil when no strategy has any):
// how each strategy fared while the event's conditions held.
func eventTables(r *results.Results) []eventTable {
	n := 0
	for i := range r.Strategies {
		n = max(n, len(r.Strategies[i].Windows))
	}
	var out []eventTable
	for k := range n {
		var t eventTable
		for i := range r.Strategies {
			s := &r.Strategies[i]
			if k >= len(s.Windows) {
				continue
			}
			w := &s.Windows[k]
			if t.Title == "" {
				t.Title = windowTitle(r, k, w)
			}
			of := "–"
			if target := w.LimitPerS * w.Headroom; target > 0 {
				of = fixed(100*w.GoodputPerS/target, 0, false) + "%"
			}
			share := "–"
			if w.Attempts > 0 {
				share = fixed(100*w.RateLimitedShare, 2, false) + "%"
			}
			apc := "–"
			if w.Calls > 0 {
				apc = dec2(w.AttemptsPerCall)
			}
			t.Rows = append(t.Rows, []string{s.Name, dec2(w.GoodputPerS), of, share, apc, num(float64(w.Calls))})
		}
		out = append(out, t)
	}
	return out
}

// windowTitle says what the k-th event changed, when, and over which
// stretch its window's figures are taken.
func windowTitle(r *results.Results, k int, w *results.WindowResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s on %s", w.Label, w.Service)
	if k < len(r.Events) {
		ev := r.Events[k]
		fmt.Fprintf(&b, ", %s–%s s", num(ev.StartS), num(ev.EndS))
	}
	fmt.Fprintf(&b, "; figures from %s to %s s", num(w.StartS), num(w.EndS))
	if w.LimitPerS > 0 {
		fmt.Fprintf(&b, ", limit %s requests/s", num(w.LimitPerS))
	}
	return b.String()
}

// windowKey explains the per-event tables in one sentence.
const windowKey = "figures over each event's window, from 10 s after it starts (a third of the way in, for a short one) to its end or the next event: successful calls finished per second, that goodput against the service's request limit then in force × the strategy's headroom, 429s ÷ attempts started, and the mean attempts of the calls finished"

// windowSpare are the per-event columns a narrow terminal leaves out, the
// least essential first.
var windowSpare = []string{"calls", "attempts/call"}

// eventTextTable is a per-event table in columns: the strategy is text,
// aligned left, the others numbers.
func eventTextTable(t eventTable) columnTable {
	return columnTable{headers: windowHeaders, rows: t.Rows, left: 1, spare: windowSpare}
}

// eventTablesMarkdown writes the per-event tables as a Markdown section.
func eventTablesMarkdown(b *strings.Builder, ts []eventTable) {
	b.WriteString("## Around each event\n\n")
	for _, t := range ts {
		fmt.Fprintf(b, "**%s**\n\n", mdEscape(t.Title))
		ct := eventTextTable(t)
		mdTable(b, ct.headers, ct.left, ct.rows)
		b.WriteByte('\n')
	}
	fmt.Fprintf(b, "%s\n\n", mdEscape(sentence(windowKey)))
}
