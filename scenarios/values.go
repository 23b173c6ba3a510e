package scenarios

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// rateUnits are the units a rate string may end in, with their length.
var rateUnits = map[string]time.Duration{
	"s": time.Second, "sec": time.Second, "second": time.Second,
	"m": time.Minute, "min": time.Minute, "minute": time.Minute,
	"h": time.Hour, "hour": time.Hour,
}

// ParseRate parses a rate written as "COUNT/UNIT" — "10/s", "600/m",
// "600/min", "36000/h", "10_000/m" — and returns it in events per second.
// Spaces around the slash are allowed; negative rates are an error.
func ParseRate(s string) (float64, error) {
	num, unit, ok := strings.Cut(s, "/")
	if !ok {
		return 0, fmt.Errorf("%q is not a rate; write a count per unit, like \"10/s\" or \"600/m\"", s)
	}
	per, ok := rateUnits[strings.TrimSpace(unit)]
	if !ok {
		return 0, fmt.Errorf("%q has an unknown unit %q; use /s, /m or /h", s, strings.TrimSpace(unit))
	}
	n, err := strconv.ParseFloat(strings.ReplaceAll(strings.TrimSpace(num), "_", ""), 64)
	if err != nil {
		return 0, fmt.Errorf("%q does not start with a number; write a count per unit, like \"10/s\"", s)
	}
	if n < 0 {
		return 0, fmt.Errorf("%q is negative; a rate must be greater than 0", s)
	}
	if math.IsInf(n, 0) || math.IsNaN(n) {
		return 0, fmt.Errorf("%q is not a finite number; write a count per unit, like \"10/s\"", s)
	}
	return n / per.Seconds(), nil
}

// parseDuration parses a duration string such as "400ms" or "10m" and
// rejects negative ones.
func parseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration; write a number with a unit, like \"400ms\" or \"10m\"", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("%q is negative; durations must be 0 or more", s)
	}
	return d, nil
}

// describe names a decoded TOML value's type and value for messages.
func describe(v any) string {
	switch v := v.(type) {
	case string:
		return fmt.Sprintf("string %q", v)
	case int64:
		return fmt.Sprintf("integer %d", v)
	case float64:
		return fmt.Sprintf("float %v", v)
	case bool:
		return fmt.Sprintf("boolean %v", v)
	case map[string]any:
		return "a table"
	case []map[string]any, []any:
		return "an array"
	case time.Time:
		return "a date-time"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// showAmount prints a count or token amount without a trailing .0.
func showAmount(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// quoteList renders names as "a", "b", "c" for messages.
func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// closest returns the candidates nearest to s by edit distance when they are
// close enough to be a likely typo, quoted and joined with "or"; or "".
func closest(s string, candidates []string) string {
	var best []string
	bestDist := 0
	for _, c := range candidates {
		switch d := editDistance(s, c); {
		case len(best) == 0 || d < bestDist:
			best, bestDist = []string{c}, d
		case d == bestDist:
			best = append(best, c)
		}
	}
	if len(best) == 0 || bestDist > 2 || bestDist > max(1, len(s)/2) {
		return ""
	}
	return strings.ReplaceAll(quoteList(best), ", ", " or ")
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
