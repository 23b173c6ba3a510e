package reports

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/simbench/simbench/internal/numfmt"
)

// num and fixed are numfmt's Num and Fixed: the one way simbench formats
// a number for people.
func num(x float64) string                        { return numfmt.Num(x) }
func fixed(x float64, prec int, trim bool) string { return numfmt.Fixed(x, prec, trim) }

// align is one column's alignment in a text table.
type align int

const (
	alignLeft align = iota
	alignRight
)

// textTable lays out cells in aligned columns separated by two spaces. A
// cell's style wraps its padded text (ANSI colour, say) without counting
// towards the width.
type textTable struct {
	aligns []align
	rows   [][]cell
}

type cell struct {
	text  string
	style func(string) string
}

func (t *textTable) add(cells ...cell) { t.rows = append(t.rows, cells) }

// columnTable is a terminal table of plain cells under a heading (per
// process, per class, tasks, around an event): its headers, its rows, how
// many leading columns hold text (aligned left; the others, numbers, are
// aligned right), and spare, the columns a narrow terminal may leave out,
// the least essential first.
type columnTable struct {
	headers []string
	rows    [][]string
	left    int
	spare   []string
}

// fit lays the table out in at most width columns (runes; 0 or less: no
// limit), leaving spare columns out in their order until it fits; dropped
// names the columns left out, in the table's order. A table still wider
// once every spare column is out is written that wide.
func (t columnTable) fit(width int) (lines, dropped []string) {
	out := make([]bool, len(t.headers))
	lines = t.layout(out)
	for _, name := range t.spare {
		if width <= 0 || tableWidth(lines) <= width {
			break
		}
		if j := slices.Index(t.headers, name); j >= 0 {
			out[j] = true
			lines = t.layout(out)
		}
	}
	for j, h := range t.headers {
		if out[j] {
			dropped = append(dropped, h)
		}
	}
	return lines, dropped
}

// layout lays the table out with a textTable, without the columns j for
// which out[j] holds (out may be nil: every column).
func (t columnTable) layout(out []bool) []string {
	keep := func(texts []string) []string {
		var kept []string
		for j, c := range texts {
			if j >= len(out) || !out[j] {
				kept = append(kept, c)
			}
		}
		return kept
	}
	tt := textTable{}
	for j := range t.headers {
		if j < len(out) && out[j] {
			continue
		}
		a := alignRight
		if j < t.left {
			a = alignLeft
		}
		tt.aligns = append(tt.aligns, a)
	}
	add := func(texts []string) {
		cells := make([]cell, len(texts))
		for j, c := range texts {
			cells[j] = cell{text: c}
		}
		tt.add(cells...)
	}
	add(keep(t.headers))
	for _, row := range t.rows {
		add(keep(row))
	}
	return tt.lines()
}

func (t *textTable) lines() []string {
	var widths []int
	for _, row := range t.rows {
		for i, c := range row {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(c.text))
		}
	}
	out := make([]string, 0, len(t.rows))
	for _, row := range t.rows {
		var b strings.Builder
		for i, c := range row {
			if i > 0 {
				b.WriteString("  ")
			}
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c.text))
			text := c.text
			if c.style != nil {
				text = c.style(text)
			}
			if i < len(t.aligns) && t.aligns[i] == alignRight {
				b.WriteString(pad + text)
			} else if i == len(row)-1 {
				b.WriteString(text) // no trailing blanks
			} else {
				b.WriteString(text + pad)
			}
		}
		out = append(out, strings.TrimRight(b.String(), " "))
	}
	return out
}

// leftOutNote is the clause a table's key ends with when a narrow
// terminal left columns of it out: which, and where they are.
func leftOutNote(dropped []string) string {
	if len(dropped) == 0 {
		return ""
	}
	list := dropped[len(dropped)-1]
	if len(dropped) > 1 {
		list = strings.Join(dropped[:len(dropped)-1], ", ") + " and " + list
	}
	return "; left out at this width, in report.md: " + list
}
