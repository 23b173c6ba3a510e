package decision

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/simbench/simbench/internal/numfmt"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
)

// DefaultTolerance is how much worse, as a fraction of the better figure
// (the p95 time to answer by default), a smaller cap may be and still be
// chosen over a better one: the margin of the rule's paired test. It is the
// default of sweep's and recommend's --tolerance (a fraction).
const DefaultTolerance = 0.05

// MinAnsweredShare is the share of turns a cap must answer in full to be
// chosen or to count for the knee: below it the p95 turn got no answer.
const MinAnsweredShare = 0.95

// Rule is how a cap is chosen from a sweep: among the caps whose 429 share
// is at most MaxShare and that answer at least MinAnsweredShare of their
// turns, the smallest that is no worse than every such cap scoring better
// on the objective, by the rule's paired test (Rule.Compare): the seeds
// are the same for every cap, so each seed's ratio of the two caps'
// figures is compared with 1 + Tolerance. A smaller cap leaves quota for
// other work and retries; a bigger one that is no better buys nothing.
type Rule struct {
	// MaxShare is the largest share of attempts answered 429 (0.001 =
	// 0.1%); 0 accepts no 429 at all.
	MaxShare float64
	// Tolerance is the fraction of the better figure a cap may exceed it
	// by and still count as no worse (the test's margin); 0 means
	// DefaultTolerance, a negative value none.
	Tolerance float64
	// Objective is what "better" means ("": the p95 time to answer).
	Objective scenarios.Objective
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
	return fmt.Sprintf("the smallest cap shown no worse than every better-scoring cap, %s, by %s%% at most (a one-sided paired t-test on the seeds' log ratios, %s%% error over all its looks), among caps with 429 share ≤ %s%% that answer ≥ %s%% of turns",
		ObjectiveText(r.Objective), numfmt.Num(100*r.tolerance()), numfmt.Num(100*Alpha), numfmt.Num(100*r.MaxShare), numfmt.Num(100*MinAnsweredShare))
}

// ObjectiveText names an objective in words: "p95 time to answer", "cost
// per answered task" or "share of turns answered".
func ObjectiveText(o scenarios.Objective) string {
	switch o {
	case scenarios.ObjectiveCost:
		return "cost per answered task"
	case scenarios.ObjectiveCompletion:
		return "share of turns answered"
	}
	return "p95 time to answer"
}

// qualifies reports whether a point may be chosen.
func (r Rule) qualifies(p results.SweepPoint) bool {
	return p.Cap >= 1 && r.meets(p)
}

// meets reports whether a point's 429 share and answered share meet the
// rule, whatever its cap.
func (r Rule) meets(p results.SweepPoint) bool {
	return p.RateLimitedShare <= r.MaxShare && answers(p) && !math.IsInf(r.Score(p), 1)
}

// answers reports whether a point answered enough of its turns for its p95
// time to answer to be a time.
func answers(p results.SweepPoint) bool {
	return p.P95Ms.Answered() && p.AnsweredShare >= MinAnsweredShare
}

// Score is a point's figure under the rule's objective, lower better: its
// p95 time to answer in milliseconds, its cost per answered task in
// dollars, or 1 ÷ its answered share. +Inf when it has none (no answer,
// no task completed).
func (r Rule) Score(p results.SweepPoint) float64 {
	return r.score(results.SeedFigures{P95Ms: p.P95Ms, AnsweredShare: p.AnsweredShare, CostPerAnsweredTaskUSD: p.CostPerAnsweredTaskUSD})
}

func (r Rule) score(f results.SeedFigures) float64 {
	switch r.Objective {
	case scenarios.ObjectiveCost:
		if f.CostPerAnsweredTaskUSD <= 0 {
			return math.Inf(1)
		}
		return f.CostPerAnsweredTaskUSD
	case scenarios.ObjectiveCompletion:
		if f.AnsweredShare <= 0 {
			return math.Inf(1)
		}
		return 1 / f.AnsweredShare
	}
	if !f.P95Ms.Answered() {
		return math.Inf(1)
	}
	return float64(f.P95Ms)
}

// seedScores returns each seed's score of p (one, the point's own, when it
// holds no seed's figures).
func (r Rule) seedScores(p results.SweepPoint) []float64 {
	if len(p.PerSeed) == 0 {
		return []float64{r.Score(p)}
	}
	out := make([]float64, len(p.PerSeed))
	for i, f := range p.PerSeed {
		out[i] = r.score(f)
	}
	return out
}

// Finding is what the rule's paired test says of one point against
// another.
type Finding int

const (
	// NoWorse: the point is shown no worse than the other beyond the
	// tolerance.
	NoWorse Finding = iota
	// Worse: the point is shown worse than the other beyond the tolerance.
	Worse
	// Undecided: the seeds run cannot tell; more seeds may.
	Undecided
)

// Alpha is the rule's error rate: the chance, over all the looks of one
// comparison (the seeds first run, then each round of MoreSeeds up to
// MaxSeeds), of calling a point no worse when it is worse by the
// tolerance, and of calling it worse when it is no worse. Each look tests
// at Alpha ÷ Looks (Bonferroni), so the sequence keeps Alpha.
const Alpha = 0.05

// MaxSeeds is the most seeds a comparison the first seeds cannot decide
// runs, MoreSeeds more at a time (or the seeds asked for, when more).
const (
	MaxSeeds  = 9
	MoreSeeds = 3
)

// Looks is the most tests one comparison makes: from 2 seeds, at 2, 5, 8
// and 9 (from the default 3, at 3, 6 and 9: one fewer).
const Looks = 4

// Compare tests whether a is no worse than b on the objective beyond the
// tolerance, on the seeds both ran (the first k of the same seeds): with
// d the mean of the seeds' ln(a ÷ b) and se its standard error, a is
// NoWorse when d + t·se ≤ ln(1 + tolerance), Worse when d − t·se >
// ln(1 + tolerance), else Undecided, t being Student's quantile at
// 1 − Alpha/Looks with k − 1 degrees of freedom. With one seed there is
// no test: the ratio itself decides (NoWorse within the tolerance, else
// Worse). A seed where either scores +Inf (no answer) makes that point
// Worse, or b's, NoWorse.
func (r Rule) Compare(a, b results.SweepPoint) Finding {
	xa, xb := r.seedScores(a), r.seedScores(b)
	k := min(len(xa), len(xb))
	if len(xa) == 1 || len(xb) == 1 {
		xa, xb, k = []float64{r.Score(a)}, []float64{r.Score(b)}, 1
	}
	margin := math.Log1p(r.tolerance())
	d := make([]float64, k)
	for i := range k {
		switch {
		case math.IsInf(xa[i], 1):
			return Worse
		case math.IsInf(xb[i], 1):
			return NoWorse
		}
		d[i] = math.Log(xa[i]) - math.Log(xb[i])
	}
	if k == 1 {
		if d[0] <= margin+1e-12 {
			return NoWorse
		}
		return Worse
	}
	mean, sd := stat.MeanStdDev(d, nil)
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(k - 1)}.Quantile(1 - Alpha/Looks)
	se := t * sd / math.Sqrt(float64(k))
	switch {
	case mean+se <= margin+1e-12:
		return NoWorse
	case mean-se > margin:
		return Worse
	}
	return Undecided
}

// Choose returns the cap the rule picks from points, and the best point's
// cap (the lowest score); ok is false when no point qualifies. The chosen
// cap is the smallest that Compare finds NoWorse than every qualifying
// point scoring lower than it (the best always is).
func (r Rule) Choose(points []results.SweepPoint) (chosen, best int, ok bool) {
	q := r.qualifying(points)
	if len(q) == 0 {
		return 0, 0, false
	}
	b := q[0]
	for _, p := range q {
		if r.Score(p) < r.Score(b) {
			b = p
		}
	}
	for _, p := range q {
		if v, _ := r.against(p, q); v == NoWorse {
			return p.Cap, b.Cap, true
		}
	}
	return b.Cap, b.Cap, true
}

// qualifying returns the points that qualify, by cap.
func (r Rule) qualifying(points []results.SweepPoint) []results.SweepPoint {
	var q []results.SweepPoint
	for _, p := range points {
		if r.qualifies(p) {
			q = append(q, p)
		}
	}
	slices.SortStableFunc(q, func(a, b results.SweepPoint) int { return a.Cap - b.Cap })
	return q
}

// against compares p with every point of q scoring lower: NoWorse when p
// is no worse than all of them, Worse when it is worse than one, else
// Undecided, with the points it could not yet be told from.
func (r Rule) against(p results.SweepPoint, q []results.SweepPoint) (Finding, []results.SweepPoint) {
	v := NoWorse
	var open []results.SweepPoint
	for _, o := range q {
		if o.Cap == p.Cap || !(r.Score(o) < r.Score(p)) {
			continue
		}
		switch r.Compare(p, o) {
		case Worse:
			return Worse, nil
		case Undecided:
			v, open = Undecided, append(open, o)
		}
	}
	return v, open
}

// Pending returns the caps whose further seeds could change the rule's
// choice from points: every qualifying cap below the chosen one that the
// test can neither keep nor rule out, with the caps it cannot yet be told
// from; nil when the choice is decided.
func (r Rule) Pending(points []results.SweepPoint) []int {
	chosen, _, ok := r.Choose(points)
	if !ok {
		return nil
	}
	q := r.qualifying(points)
	var caps []int
	for _, p := range q {
		if p.Cap >= chosen {
			break
		}
		if v, open := r.against(p, q); v == Undecided {
			caps = append(caps, p.Cap)
			for _, o := range open {
				caps = append(caps, o.Cap)
			}
		}
	}
	slices.Sort(caps)
	return slices.Compact(caps)
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
