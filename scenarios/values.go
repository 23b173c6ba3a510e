package scenarios

import (
	"errors"
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
	if errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("%q is out of range: its count is too large for any rate; write a count per unit, like \"10/s\"", s)
	}
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

// quoteList renders names as "a", "b", "c" for messages.
func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// maxListed is the most names a message lists, so that a file with
// thousands of tools does not get thousands of names in every problem.
const maxListed = 10

// quoteSome renders names as quoteList does, the first maxListed of them
// and then how many more there are.
func quoteSome(names []string) string {
	if len(names) <= maxListed {
		return quoteList(names)
	}
	return fmt.Sprintf("%s, … (%d more)", quoteList(names[:maxListed]), len(names)-maxListed)
}
