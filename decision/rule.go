package decision

import (
	"fmt"
	"math"
	"slices"

	"github.com/simbench/simbench/internal/numfmt"
	"github.com/simbench/simbench/results"
)

// DefaultTolerance is how much slower, as a fraction of the best p95 time
// to answer, a smaller cap may be and still be chosen over the best: 0.05
// takes 64 at 1,159 ms over 128 at 1,151 ms.
const DefaultTolerance = 0.05

// MinAnsweredShare is the share of turns a cap must answer in full to be
// chosen or to count for the knee: below it the p95 turn got no answer.
const MinAnsweredShare = 0.95

// Rule is how a cap is chosen from a sweep: among the caps whose 429 share
// is at most MaxShare and that answer at least MinAnsweredShare of their
// turns, the smallest whose p95 time to answer is within Tolerance of the
// best one's, or whose 95% interval overlaps the best one's when the
// points are means over seeds. A smaller cap leaves quota for other work
// and retries; a bigger one that is no faster buys nothing.
type Rule struct {
	// MaxShare is the largest share of attempts answered 429 (0.001 =
	// 0.1%); 0 accepts no 429 at all.
	MaxShare float64
	// Tolerance is the fraction of the best p95 a cap may exceed it by and
	// still count as equal; 0 means DefaultTolerance, a negative value
	// none (strictly the lowest).
	Tolerance float64
}

func (r Rule) tolerance() float64 {
	switch {
	case r.Tolerance == 0:
		return DefaultTolerance
	case r.Tolerance < 0:
		return 0
	}
	return r.Tolerance
}

// String says the rule in a sentence, for the output that applies it.
func (r Rule) String() string {
	return fmt.Sprintf("the smallest cap whose p95 time to answer is within %s%% of the best (or whose 95%% interval overlaps the best's), among caps with 429 share ≤ %s%% that answer ≥ %s%% of turns",
		numfmt.Num(100*r.tolerance()), numfmt.Num(100*r.MaxShare), numfmt.Num(100*MinAnsweredShare))
}

// qualifies reports whether a point may be chosen.
func (r Rule) qualifies(p results.SweepPoint) bool {
	return p.Cap >= 1 && r.meets(p)
}

// meets reports whether a point's 429 share and answered share meet the
// rule, whatever its cap.
func (r Rule) meets(p results.SweepPoint) bool {
	return p.RateLimitedShare <= r.MaxShare && answers(p)
}

// answers reports whether a point answered enough of its turns for its p95
// time to answer to be a time.
func answers(p results.SweepPoint) bool {
	return p.P95Ms.Answered() && p.AnsweredShare >= MinAnsweredShare
}

// Choose returns the cap the rule picks from points, and the best point's
// cap (the lowest p95); ok is false when no point qualifies.
func (r Rule) Choose(points []results.SweepPoint) (chosen, best int, ok bool) {
	var b results.SweepPoint
	for _, p := range points {
		if !r.qualifies(p) {
			continue
		}
		if !ok || p.P95Ms < b.P95Ms || (p.P95Ms == b.P95Ms && p.Cap < b.Cap) {
			b, ok = p, true
		}
	}
	if !ok {
		return 0, 0, false
	}
	limit := float64(b.P95Ms) * (1 + r.tolerance())
	chosen = b.Cap
	for _, p := range points {
		if !r.qualifies(p) || p.Cap >= chosen {
			continue
		}
		if float64(p.P95Ms) <= limit || overlaps(p, b) {
			chosen = p.Cap
		}
	}
	return chosen, b.Cap, true
}

// overlaps reports whether two points' p95 intervals overlap; false when
// either has no interval.
func overlaps(a, b results.SweepPoint) bool {
	if a.Seeds < 2 || b.Seeds < 2 {
		return false
	}
	return a.P95LoMs <= b.P95HiMs && b.P95LoMs <= a.P95HiMs
}

// ChooseCap applies the default Rule with the given 429 threshold (pass
// DefaultMaxRateLimitedShare for the default): among the caps with at most
// that 429 share that answer 95% of their turns, the smallest whose p95
// time to answer is within DefaultTolerance of the lowest. ok is false when
// no point qualifies.
func ChooseCap(points []results.SweepPoint, maxRateLimitedShare float64) (chosen int, ok bool) {
	chosen, _, ok = Rule{MaxShare: maxRateLimitedShare}.Choose(points)
	return chosen, ok
}

// Knee returns the cap past which more concurrency buys little goodput: the
// point of the goodput-versus-cap curve farthest above the chord from the
// smallest to the largest cap, both axes scaled to [0, 1] (the Kneedle
// method). Caps that fail more than 5% of their turns are left out: their
// goodput is not a curve anyone would run on. ok is false with fewer than
// three distinct caps, a flat goodput, or a curve with no point above its
// chord (no diminishing returns).
func Knee(points []results.SweepPoint) (knee int, ok bool) {
	pts := slices.DeleteFunc(slices.Clone(points), func(p results.SweepPoint) bool { return !answers(p) })
	slices.SortStableFunc(pts, func(a, b results.SweepPoint) int { return a.Cap - b.Cap })
	pts = slices.CompactFunc(pts, func(a, b results.SweepPoint) bool { return a.Cap == b.Cap })
	if len(pts) < 3 {
		return 0, false
	}
	lo, hi := pts[0].GoodputPerS, pts[0].GoodputPerS
	for _, p := range pts {
		lo, hi = min(lo, p.GoodputPerS), max(hi, p.GoodputPerS)
	}
	if hi <= lo {
		return 0, false
	}
	c0, cn := float64(pts[0].Cap), float64(pts[len(pts)-1].Cap)
	bestD := 0.0
	for _, p := range pts {
		x := (float64(p.Cap) - c0) / (cn - c0)
		y := (p.GoodputPerS - lo) / (hi - lo)
		if d := y - x; d > bestD+floorSlack {
			bestD, knee, ok = d, p.Cap, true
		}
	}
	return knee, ok
}

// MaxSweepCap bounds how far Extend grows a sweep's range.
const MaxSweepCap = 4096

// Extend says which caps to add when the chosen cap sits at an edge of
// the swept range, so that the choice is not an artefact of the range:
// above the top, 1.5× and 2× the largest cap (up to MaxSweepCap); below the
// bottom, half the smallest (down to 1). It returns nil when the chosen cap
// is inside the range, no cap qualified, or the bound is reached; why says
// in a phrase what was found ("the chosen cap 6 is the largest swept").
func Extend(points []results.SweepPoint, chosen int) (caps []int, why string) {
	if chosen < 1 || len(points) < 2 {
		return nil, ""
	}
	lo, hi := math.MaxInt, 0
	for _, p := range points {
		lo, hi = min(lo, p.Cap), max(hi, p.Cap)
	}
	add := func(c int) {
		if c >= 1 && c <= MaxSweepCap && !slices.Contains(caps, c) && !slices.ContainsFunc(points, func(p results.SweepPoint) bool { return p.Cap == c }) {
			caps = append(caps, c)
		}
	}
	switch chosen {
	case hi:
		add((3*hi + 1) / 2)
		add(2 * hi)
		why = fmt.Sprintf("the chosen cap %d is the largest swept", chosen)
	case lo:
		add(lo / 2)
		why = fmt.Sprintf("the chosen cap %d is the smallest swept", chosen)
	}
	if len(caps) == 0 {
		return nil, ""
	}
	slices.Sort(caps)
	return caps, why
}
