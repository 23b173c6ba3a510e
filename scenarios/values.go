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

// Bounds on "did you mean": loading stays linear however many unknown
// names a file has.
const (
	// maxSuggested is the most candidates one suggestion names.
	maxSuggested = 3
	// maxSuggestLen is the longest name compared; longer ones get none.
	maxSuggestLen = 64
	// maxSuggestWork is the most edit-distance cells one load computes (a
	// few tens of milliseconds); once spent, problems go on without
	// suggestions. A comparison costs at most (2 × maxTypo + 1) ×
	// maxSuggestLen = 320 cells, so this allows 62,500 of them or more.
	maxSuggestWork = 20_000_000
	// maxTypo is the largest edit distance suggested.
	maxTypo = 2
)

// suggester finds the known names nearest to a mistyped one, within a
// budget of work per load. The zero value is ready to use.
type suggester struct {
	work int // edit-distance cells computed so far
	// memo holds the answer for each name already asked about, by name and
	// the candidate list's identity, so a name mistyped a thousand times
	// costs one search.
	memo      map[memoKey]string
	prev, cur []int // rows of the distance table, reused
}

type memoKey struct {
	s     string
	first *string // the candidate list's first element
	n     int
}

// closest returns the candidates nearest to s by edit distance when they are
// close enough to be a likely typo, quoted and joined with "or" (at most
// maxSuggested of them, in candidate order); or "".
func (g *suggester) closest(s string, candidates []string) string {
	if len(candidates) == 0 || len(s) > maxSuggestLen {
		return ""
	}
	mk := memoKey{s, &candidates[0], len(candidates)}
	if near, ok := g.memo[mk]; ok {
		return near
	}
	limit := min(maxTypo, max(1, len(s)/2))
	var best []string
	bestDist := limit + 1
	for _, c := range candidates {
		if len(c) > maxSuggestLen || abs(len(c)-len(s)) > limit {
			continue
		}
		if g.work >= maxSuggestWork {
			break
		}
		d, cells := g.boundedDistance(s, c, min(limit, bestDist))
		g.work += cells
		switch {
		case d < bestDist:
			best, bestDist = []string{c}, d
		case d == bestDist && d <= limit:
			best = append(best, c)
		}
	}
	near := ""
	if len(best) > 0 {
		near = strings.ReplaceAll(quoteList(best[:min(len(best), maxSuggested)]), ", ", " or ")
	}
	if g.memo == nil {
		g.memo = map[memoKey]string{}
	}
	g.memo[mk] = near
	return near
}

func abs(n int) int { return max(n, -n) }

// boundedDistance returns the edit distance between a and b when it is at
// most k, and k+1 otherwise, and the cells it computed: only the band of
// width 2k+1 around the diagonal, stopping once every cell of a row is above k.
func (g *suggester) boundedDistance(a, b string, k int) (dist, cells int) {
	if abs(len(a)-len(b)) > k {
		return k + 1, 0
	}
	const inf = 1 << 30
	if cap(g.prev) < len(b)+1 {
		g.prev, g.cur = make([]int, len(b)+1), make([]int, len(b)+1)
	}
	prev, cur := g.prev[:len(b)+1], g.cur[:len(b)+1]
	for j := range prev {
		prev[j] = j
		if j > k {
			prev[j] = inf
		}
	}
	for i := 1; i <= len(a); i++ {
		lo, hi := max(1, i-k), min(len(b), i+k)
		if lo-1 == 0 && i <= k {
			cur[0] = i
		} else {
			cur[lo-1] = inf
		}
		rowMin := inf
		for j := lo; j <= hi; j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			rowMin = min(rowMin, cur[j])
		}
		if hi < len(b) {
			cur[hi+1] = inf
		}
		cells += hi - lo + 1
		if rowMin > k {
			return k + 1, cells
		}
		prev, cur = cur, prev
	}
	return min(prev[len(b)], k+1), cells
}
