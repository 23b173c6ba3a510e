// Package numfmt formats numbers for people, one way for every output of
// simbench: thousands separated by commas, few decimals, trailing zeros
// dropped. The decision's sentences and the reports' tables share it, so
// the same figure reads the same everywhere.
package numfmt

import (
	"math"
	"strconv"
	"strings"
)

// Num formats x with thousands separated by commas and at most two
// decimals, trailing zeros dropped (10000000 → "10,000,000", 46.666 →
// "46.67").
func Num(x float64) string {
	return Fixed(x, 2, true)
}

// Counted shows x as Num does followed by one (when x shows as exactly 1)
// or many: "1 call/turn", "1.5 calls/turn".
func Counted(x float64, one, many string) string {
	if s := Num(x); s != "1" {
		return s + " " + many
	}
	return "1 " + one
}

// Fixed formats x with at most prec decimals, with commas between
// thousands; trim drops trailing zeros of the fraction. Infinities and NaN
// read as strconv writes them ("+Inf").
func Fixed(x float64, prec int, trim bool) string {
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

// Millis formats a time in milliseconds: whole milliseconds from 100 up,
// one decimal below.
func Millis(v float64) string {
	if v >= 100 {
		return Fixed(v, 0, false)
	}
	return Fixed(v, 1, false)
}

// AnswerMillis formats a time to answer in milliseconds like Millis, and
// +Inf (a percentile that fell among unanswered turns) as "—".
func AnswerMillis(v float64) string {
	if math.IsInf(v, 1) {
		return "—"
	}
	return Millis(v)
}

// Rates writes a pace as "420 requests/min and 9,000 tokens/min", the
// request rate in requests/s instead ("7 requests/s") when perSecond,
// for a service whose file wrote its limit per second; a zero rate is
// left out.
func Rates(requestsPerMinute, tokensPerMinute float64, perSecond bool) string {
	var parts []string
	switch {
	case requestsPerMinute > 0 && perSecond:
		parts = append(parts, Num(requestsPerMinute/60)+" requests/s")
	case requestsPerMinute > 0:
		parts = append(parts, Num(requestsPerMinute)+" requests/min")
	}
	if tokensPerMinute > 0 {
		parts = append(parts, Num(tokensPerMinute)+" tokens/min")
	}
	return strings.Join(parts, " and ")
}
