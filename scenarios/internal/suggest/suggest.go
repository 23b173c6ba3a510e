// Package suggest finds the names nearest to a mistyped one ("did you
// mean …?") for the scenario decoder's problems and for scenario names
// given on the command line: edit distances, kept apart from the decoder
// so that they are read and tested alone.
package suggest

import (
	"strconv"
	"strings"
)

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

// Suggester finds the known names nearest to a mistyped one, within a
// budget of work per load. The zero value is ready to use.
type Suggester struct {
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

// Closest returns the candidates nearest to s by edit distance when they are
// close enough to be a likely typo, quoted and joined with "or" (at most
// maxSuggested of them, in candidate order); or "".
func (g *Suggester) Closest(s string, candidates []string) string {
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
		q := best[:min(len(best), maxSuggested)]
		for i, n := range q {
			q[i] = strconv.Quote(n)
		}
		near = strings.ReplaceAll(strings.Join(q, ", "), ", ", " or ")
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
func (g *Suggester) boundedDistance(a, b string, k int) (dist, cells int) {
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

// Distance is the Levenshtein distance between a and b, in runes.
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			sub := prev[j-1]
			if ra[i-1] != rb[j-1] {
				sub++
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, sub)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
