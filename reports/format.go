package reports

import (
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

// alignedLines lays out a header line and rows of plain cells with a
// textTable: the first left columns aligned left, the others right.
func alignedLines(headers []string, rows [][]string, left int) []string {
	t := textTable{aligns: make([]align, len(headers))}
	for j := left; j < len(headers); j++ {
		t.aligns[j] = alignRight
	}
	add := func(texts []string) {
		cells := make([]cell, len(texts))
		for j, c := range texts {
			cells[j] = cell{text: c}
		}
		t.add(cells...)
	}
	add(headers)
	for _, row := range rows {
		add(row)
	}
	return t.lines()
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
