package reports

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// narrowColumns are the figures (results' registry keys) of the narrow
// layout's columns: what the choice between strategies rests on.
var narrowColumns = []string{"failed_turns", "unfinished_turns", "answer_latency_ms.p95", "answered_goodput_per_s", "rate_limited"}

// narrowMetrics keeps the metrics of ms that the narrow layout shows.
func narrowMetrics(ms []metric) []metric {
	return slices.DeleteFunc(slices.Clone(ms), func(m metric) bool { return !slices.Contains(narrowColumns, m.key) })
}

// wrap breaks line at spaces into lines of at most width columns (runes),
// each continuation indented two more than the line's own indent; width 0
// leaves it whole. A word longer than the width stays whole on its line.
func wrap(line string, width int) []string {
	if width <= 0 || utf8.RuneCountInString(line) <= width {
		return []string{line}
	}
	indent := line[:len(line)-len(strings.TrimLeft(line, " "))]
	more := indent + "  "
	var out []string
	cur := indent
	for _, word := range strings.Fields(line) {
		switch {
		case strings.TrimSpace(cur) == "":
			cur += word
		case utf8.RuneCountInString(cur)+1+utf8.RuneCountInString(word) <= width:
			cur += " " + word
		default:
			out = append(out, cur)
			cur = more + word
		}
	}
	return append(out, cur)
}

// tableWidth is the widest of lines, in runes.
func tableWidth(lines []string) int {
	w := 0
	for _, l := range lines {
		w = max(w, utf8.RuneCountInString(l))
	}
	return w
}
