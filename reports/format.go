package reports

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// num formats x for people: thousands separated by commas, at most two
// decimals, trailing zeros dropped (10000000 → "10,000,000", 46.666 → "46.67").
func num(x float64) string {
	return fixed(x, 2, true)
}

// counted shows x as num does followed by one (when x shows as exactly 1)
// or many: "1 call/turn", "1.5 calls/turn".
func counted(x float64, one, many string) string {
	if s := num(x); s != "1" {
		return s + " " + many
	}
	return "1 " + one
}

// fixed formats x with at most prec decimals, with commas between thousands;
// trim drops trailing zeros of the fraction.
func fixed(x float64, prec int, trim bool) string {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	s := strconv.FormatFloat(x, 'f', prec, 64)
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	intPart, frac, _ := strings.Cut(s, ".")
	if trim {
		frac = strings.TrimRight(frac, "0")
	}
	var b strings.Builder
	for i, r := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	out := b.String()
	if frac != "" {
		out += "." + frac
	}
	if out == "0" {
		sign = "" // no "-0"
	}
	return sign + out
}

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
