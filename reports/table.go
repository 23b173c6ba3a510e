package reports

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/simbench/simbench/results"
)

// ANSI escapes for the best value of a column in colour mode.
const (
	ansiBest  = "\x1b[1;32m" // bold green
	ansiWarn  = "\x1b[1;31m" // bold red
	ansiReset = "\x1b[0m"
)

// WriteTable writes the terminal comparison: a line naming the run, a
// warning when the run is partial or invalid, then one row per strategy
// and one column per metric (latencies in ms, goodput in successful
// calls/s, wasted work in server seconds), aligned. The best value of each
// column is marked with "*" and, when color is true, in bold green. Then the
// run's timed events (service, what, from, to), the decision (what to set),
// and the arithmetic per service, if the results carry them. Callers pass
// color=false when the output is not a terminal.
func WriteTable(w io.Writer, r *results.Results, color bool) error {
	return WriteTableWith(w, r, TableOptions{Color: color})
}

// TableOptions adjust WriteTableWith.
type TableOptions struct {
	// Color marks the best values in bold green (terminals only).
	Color bool
	// Columns names the columns to show, in order (see Columns; "all" and
	// "default" stand for sets); nil shows the default ones.
	Columns []string
	// Width is the terminal's width in columns (0: unknown, the wide
	// layout); under NarrowWidth the narrow layout is written.
	Width int
}

// NarrowWidth is the terminal width, in columns, under which the table is
// written in its narrow layout.
const NarrowWidth = 120

// WriteTableWith is WriteTable with the columns chosen; an unknown column
// is an error naming the ones that exist. With o.Width under NarrowWidth,
// or narrower than the table (and no columns chosen), it writes the narrow
// layout: the decision first, then the columns a choice rests on, every
// line wrapped to the width.
func WriteTableWith(w io.Writer, r *results.Results, o TableOptions) error {
	if r == nil {
		return errors.New("reports: no results")
	}
	ms, err := selectMetrics(o.Columns, r)
	if err != nil {
		return err
	}
	fullWidth := tableWidth(comparisonTable(r, ms, false))
	narrow := o.Width > 0 && len(o.Columns) == 0 && (o.Width < NarrowWidth || fullWidth > o.Width)
	wrapTo := 0
	if narrow {
		ms, wrapTo = narrowMetrics(ms), o.Width
	}
	color := o.Color
	var b strings.Builder
	put := func(indent, line string) {
		for _, l := range wrap(indent+line, wrapTo) {
			fmt.Fprintln(&b, l)
		}
	}
	put("", runLine(r))
	for _, warn := range warnings(r) {
		if color {
			warn = ansiWarn + warn + ansiReset
		}
		fmt.Fprintln(&b, warn)
	}
	if narrow && r.Decision != nil {
		b.WriteString("\ndecision\n")
		for _, l := range DecisionLines(r.Decision) {
			put("  ", strings.TrimPrefix(l, "  "))
		}
	}
	b.WriteByte('\n')
	if len(r.Strategies) == 0 {
		b.WriteString("no strategies in the results\n")
	} else {
		for _, line := range comparisonTable(r, ms, color) {
			fmt.Fprintln(&b, line)
		}
		b.WriteByte('\n')
		for _, l := range tableKeyFor(r, ms) {
			put("", l)
		}
		if narrow {
			put("", fmt.Sprintf("(the terminal is %d columns wide: the table shows the columns a choice rests on; a terminal of %d columns shows the default ones, --columns all every one)", o.Width, max(fullWidth, NarrowWidth)))
		}
		writeSections(&b, r, wrapTo, put)
	}
	if lines := eventLines(r); len(lines) > 0 {
		b.WriteString("\ntimed events\n")
		for _, l := range lines {
			put("  ", l)
		}
	}
	if !narrow && r.Decision != nil {
		b.WriteString("\ndecision\n")
		for _, l := range DecisionLines(r.Decision) {
			put("  ", strings.TrimPrefix(l, "  "))
		}
	}
	if lines := recommendationLines(r); len(lines) > 0 {
		b.WriteString("\narithmetic per service (where the sweep starts)\n")
		for _, l := range lines {
			put("  ", l)
		}
	}
	_, err = io.WriteString(w, b.String())
	return err
}

// writeSections writes the per-process, per-class, tasks and per-event
// tables, when the results have them, and their keys through put (an
// indent and a line). With width > 0 (the narrow layout) each table fits
// in width columns, its spare columns left out as needed and named in its
// key; with 0 every column is written.
func writeSections(b *strings.Builder, r *results.Results, width int, put func(indent, line string)) {
	// section writes tables under one title, each after its own title line
	// (none: ""), and the key, which names the columns any of them left out.
	section := func(title, key string, titles []string, ts []columnTable) {
		fmt.Fprintf(b, "\n%s\n", title)
		var out []string
		for i, t := range ts {
			indent := "  "
			if titles[i] != "" {
				put("  ", titles[i])
				indent = "    "
			}
			lines, dropped := t.fit(width - len(indent))
			for _, l := range lines {
				fmt.Fprintln(b, indent+l)
			}
			for _, h := range dropped {
				if !slices.Contains(out, h) {
					out = append(out, h)
				}
			}
		}
		put("  ", key+leftOutNote(out))
	}
	if t := processTableOf(r); t != nil {
		section("per process", t.key, []string{""}, []columnTable{processTextTable(t)})
	}
	if rows := keyRows(r); rows != nil {
		section("per key", keyKey, []string{""}, []columnTable{keyTextTable(rows)})
	}
	if rows := classRows(r); rows != nil {
		section("per class", classKey, []string{""}, []columnTable{classTextTable(rows)})
	}
	if rows := taskRows(r, taskMetrics()); rows != nil {
		section("tasks", taskKey, []string{""}, []columnTable{taskTextTable(rows)})
	}
	if ts := eventTables(r); ts != nil {
		var titles []string
		var cts []columnTable
		for _, t := range ts {
			titles, cts = append(titles, t.Title), append(cts, eventTextTable(t))
		}
		section("around each event", windowKey, titles, cts)
	}
}

// runLine names the run: scenario, seed, mode, duration and version.
func runLine(r *results.Results) string {
	mode := r.Mode
	if mode == "" {
		mode = "virtual"
	}
	if r.Mode == "live" && r.TimeScale != 0 {
		mode += fmt.Sprintf(" ×%s", num(r.TimeScale))
	}
	return fmt.Sprintf("scenario %s · seed %d · %s · %s s · simbench %s",
		r.Scenario, r.Seed, mode, num(r.DurationS), r.SimbenchVersion)
}

// warnings says why the figures may not be trusted, one sentence each.
func warnings(r *results.Results) []string {
	var out []string
	if r.Partial {
		out = append(out, "PARTIAL: "+partialReason(r)+"; the figures cover only what was measured.")
	}
	if r.Invalid != "" {
		out = append(out, "INVALID: "+r.Invalid)
	}
	return out
}

// partialReason says why a partial run is partial: its PartialReason,
// else that it was interrupted.
func partialReason(r *results.Results) string {
	if r.PartialReason != "" {
		return r.PartialReason
	}
	return "the run was interrupted"
}

// comparisonTable lays out the strategies × metrics table.
func comparisonTable(r *results.Results, ms []metric, color bool) []string {
	t := &textTable{aligns: []align{alignLeft}}
	head := []cell{{text: "strategy"}}
	for _, m := range ms {
		t.aligns = append(t.aligns, alignRight)
		// Headers carry a trailing blank to line up with the marks below.
		head = append(head, cell{text: m.header + " "})
	}
	t.add(head...)
	marks := make([][]bool, len(ms))
	for j, m := range ms {
		marks[j] = best(m, r.Strategies)
	}
	for i := range r.Strategies {
		s := &r.Strategies[i]
		name := s.Name
		if s.Invalid != "" {
			name += " (INVALID)"
		}
		row := []cell{{text: name}}
		for j, m := range ms {
			c := cell{text: cellText(m, s) + " "}
			if marks[j][i] {
				c.text = cellText(m, s) + "*"
				if color {
					c.style = func(t string) string { return ansiBest + t + ansiReset }
				}
			}
			row = append(row, c)
		}
		t.add(row...)
	}
	return t.lines()
}

// tableKey explains the columns of the comparison table with every
// default column, a line each (the first explains the * marks).
func tableKey(r *results.Results) []string { return tableKeyFor(r, metrics(r)) }

// tableKeyFor explains the columns ms of the comparison table: only those
// shown, and the * marks as best marks them.
func tableKeyFor(r *results.Results, ms []metric) []string {
	has := func(header string) bool {
		return slices.ContainsFunc(ms, func(m metric) bool { return m.header == header })
	}
	var reliable []string
	for _, m := range ms {
		if m.reliable {
			reliable = append(reliable, m.header)
		}
	}
	star := "* best in its column (no mark when every value is equal; never on an invalid run)"
	if len(reliable) > 0 {
		star += fmt.Sprintf("; %s are marked only among the strategies whose share of failed turns is within %s percentage point of the lowest",
			strings.Join(reliable, ", "), num(100*reliableSlack))
	}
	key := []string{star}
	if has("answer p95") {
		key = append(key, "answer p95: turn latency with every failed turn counted as never answered (—: the 95th-percentile turn got no answer)")
	}
	if has("goodput/s") {
		g := "goodput: successful calls of turns answered in full, per second (a success inside a failed turn is not goodput"
		if has("calls ok/s") {
			g += "; the column 'calls ok/s' counts every success"
		}
		key = append(key, g+")")
	}
	var parts []string
	if has("early") {
		parts = append(parts, "early: retries sent before the server's Retry-After")
	}
	if has("wasted s") {
		parts = append(parts, "wasted s: server seconds spent on results nobody read")
	}
	if len(parts) > 0 {
		key = append(key, strings.Join(parts, "; "))
	}
	var services []string
	bound := false
	for _, m := range ms {
		if m.key == "hedges" {
			key = append(key, "hedges: second attempts of slow idempotent reads, each an attempt too (% extra attempts: over the attempts that were not hedges); hedges won: calls answered by their hedge (% of hedges); cancelled s: server seconds of attempts cancelled at the transport, the losers of hedges among them")
		}
		if m.key == "daily_quota.failed_fast_turns" {
			key = append(key, "daily failed fast: turns that failed with a call given up at its first 429 of a spent daily quota (rpd, tpd); daily spin s: seconds calls spent from their first such 429 to their end, retrying or waiting for the reset")
		}
		if m.key == "unfinished_turns" {
			key = append(key, "unfinished: turns still running when the run ended at its duration, kept out of every latency and rate figure")
		}
		if strings.HasPrefix(m.header, "peak") {
			name, isBound := strings.CutSuffix(strings.TrimPrefix(m.name, "peak in flight at "), " (at most: the sum of the members' peaks)")
			services, bound = append(services, name), isBound
		}
	}
	parts = nil
	if has("races") {
		parts = append(parts, "races: overlapping writes to one resource")
	}
	switch {
	case len(services) > 0 && bound:
		parts = append(parts, "peak ≤: at most the sum of the fleet members' peaks in flight at "+strings.Join(services, ", ")+" (a bound: the members' peaks need not have come at once)")
	case len(services) > 0:
		parts = append(parts, "peak: most attempts in flight at "+strings.Join(services, ", "))
	}
	if len(parts) > 0 {
		key = append(key, strings.Join(parts, "; "))
	}
	return key
}

// recommendationLines describes each service's recommendation, services
// in name order.
func recommendationLines(r *results.Results) []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(r.Recommendation)) {
		rec := r.Recommendation[name]
		line := fmt.Sprintf("%s: Little's-law cap %d (binding limit: %s)", name, rec.MaxInFlight, rec.BindingLimit)
		if rec.RequestsPerMinute > 0 {
			line += fmt.Sprintf(", %s requests/min", num(rec.RequestsPerMinute))
		}
		if rec.TokensPerMinute > 0 {
			line += fmt.Sprintf(", %s tokens/min", num(rec.TokensPerMinute))
		}
		if rec.TurnsPerMinute > 0 {
			line += fmt.Sprintf(", %s turns/min sustainable", num(rec.TurnsPerMinute))
			if offered := rec.OfferedTurnsPerMinute; offered > rec.TurnsPerMinute {
				line += fmt.Sprintf(" (the workload offers %s: it does not fit)", num(offered))
			}
		}
		if rec.VerifiedCap > 0 {
			line += fmt.Sprintf("; verified by sweep: %d", rec.VerifiedCap)
		}
		out = append(out, line)
		for l := range strings.SplitSeq(strings.TrimSpace(rec.Reason), "\n") {
			if l != "" {
				out = append(out, "  "+l)
			}
		}
	}
	return out
}
