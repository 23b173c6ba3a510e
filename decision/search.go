package decision

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/simbench/simbench/internal/numfmt"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sim"
)

// SearchHeadrooms are the paces, as fractions of the limits, the decision
// tries at the chosen cap when no headroom is asked for.
var SearchHeadrooms = []float64{0.5, 0.7, 0.8, 0.9, 1}

// tuning is one strategy tuned: its cap swept at one pace.
type tuning struct {
	name      string
	tuned     scenarios.Strategy // paced at headroom, caps as written
	svc       string             // the per-service cap swept ("": the global cap)
	headroom  float64
	plans     []Plan
	unplanned map[string]error
	plan      *Plan
	sw        extendedSweep
	paces     []results.Outcome // the headrooms tried at the chosen cap
	search    []string
}

// chosen returns the point of the chosen cap (nil: none qualified).
func (t *tuning) chosen() *results.SweepPoint {
	return pointAt(t.sw.row.Points, t.sw.row.Chosen)
}

func pointAt(points []results.SweepPoint, c int) *results.SweepPoint {
	if c < 1 {
		return nil
	}
	for i := range points {
		if points[i].Cap == c {
			return &points[i]
		}
	}
	return nil
}

// faster reports whether point a answers faster than b beyond the rule's
// tolerance (a nil point never answers; any answer beats it).
func (r Rule) faster(a, b *results.SweepPoint) bool {
	switch {
	case a == nil:
		return false
	case b == nil:
		return true
	}
	return float64(a.P95Ms)*(1+r.tolerance()) < float64(b.P95Ms) && !overlaps(*a, *b)
}

// better reports whether tuning a's choice answers faster than b's.
func (t *tuning) better(b *tuning) bool {
	a, c := t.chosen(), b.chosen()
	return a != nil && (c == nil || a.P95Ms < c.P95Ms)
}

// tune tunes strategy name of sc: the cap swept at the strategy's pace,
// then, unless o fixes the headroom, the other SearchHeadrooms tried at
// the chosen cap, and the cap swept again at a pace that answers faster
// beyond the tolerance.
func tune(ctx context.Context, sc *scenarios.Scenario, name string, o Options, opts sim.Options) (*tuning, error) {
	base := sc.Strategy(name)
	h0 := headroomFor(o.Headroom, base)
	t, err := tuneAt(ctx, sc, base, h0, o, opts)
	if err != nil || o.Headroom != 0 {
		return t, err
	}
	at := t.sw.row.Chosen
	if at == 0 && t.plan != nil {
		at = t.plan.MaxInFlight
	}
	if at == 0 {
		at = t.sw.row.Points[len(t.sw.row.Points)/2].Cap
	}
	pts, err := paceAt(ctx, sc, t, at, opts)
	if err != nil {
		return nil, err
	}
	own := pointAt(t.sw.row.Points, at)
	bestH, best := h0, own
	if own == nil || !o.Rule.qualifies(*own) {
		best = nil
	}
	for i, h := range SearchHeadrooms {
		p := &pts[i]
		t.paces = append(t.paces, paceOutcome(name, p, h, o.Rule))
		if o.Rule.qualifies(*p) && (best == nil || p.P95Ms < best.P95Ms) && (h == h0 || o.Rule.faster(p, own)) {
			bestH, best = h, p
		}
	}
	if bestH == h0 {
		t.search = append(t.search, fmt.Sprintf("pace: headrooms %s tried at cap %d; %s's own %s is kept: no other answers faster beyond the tolerance", headroomsText(), at, name, numfmt.Num(h0)))
		return t, nil
	}
	why := fmt.Sprintf("pace: headrooms %s tried at cap %d; %s answers at p95 %s against %s at %s's %s, so the cap was swept again at %s",
		headroomsText(), at, numfmt.Num(bestH), secondsText(float64(best.P95Ms)), p95Text(own), name, numfmt.Num(h0), numfmt.Num(bestH))
	t2, err := tuneAt(ctx, sc, base, bestH, o, opts)
	if err != nil {
		return nil, err
	}
	t2.paces, t2.search = t.paces, append(t.search, why)
	if !t2.better(t) && t.chosen() != nil {
		t.search = append(t.search, why+"; it answered no faster there, so "+numfmt.Num(h0)+" is kept")
		return t, nil
	}
	return t2, nil
}

// paceAt runs t's strategy at cap c at every SearchHeadroom (the point
// already swept reused), in SearchHeadrooms' order.
func paceAt(ctx context.Context, sc *scenarios.Scenario, t *tuning, c int, opts sim.Options) ([]results.SweepPoint, error) {
	out := make([]results.SweepPoint, len(SearchHeadrooms))
	run := *sc
	run.Strategies = nil
	var idx []int
	for i, h := range SearchHeadrooms {
		if h == t.headroom {
			if p := pointAt(t.sw.row.Points, c); p != nil {
				out[i] = *p
				continue
			}
		}
		st := withCap(t.tuned, t.svc, c)
		st.Headroom = h
		st.Name = fmt.Sprintf("%s@%d/%s", t.name, c, numfmt.Num(h))
		run.Strategies = append(run.Strategies, st)
		idx = append(idx, i)
	}
	if len(idx) == 0 {
		return out, nil
	}
	opts.Strategies = nil
	res, err := sim.RunSeeds(ctx, &run, opts)
	if err != nil {
		return nil, err
	}
	for k, i := range idx {
		out[i] = SweepPointOf(c, res.Strategies[k])
	}
	return out, nil
}

// tuneAt sweeps base's binding cap at headroom h, starting around the
// arithmetic's cap at h. A strategy with several per-service caps has the
// one of the service a turn calls most swept first; when that sweep is
// flat (the cap does not bind), the others are swept in turn and the
// first that is not flat, else the fastest, is kept.
func tuneAt(ctx context.Context, sc *scenarios.Scenario, base *scenarios.Strategy, h float64, o Options, opts sim.Options) (*tuning, error) {
	tuned := *base
	tuned.TokenBucket, tuned.Headroom = true, h
	plans, unplanned := PlanServices(sc, h)
	var best *tuning
	for _, svc := range capsToSweep(base, plans) {
		t := &tuning{name: base.Name, tuned: tuned, svc: svc, headroom: h, plans: plans, unplanned: unplanned}
		t.plan = planOf(plans, svc)
		if svc == "" {
			t.plan = Dominant(plans)
		}
		caps := o.Caps
		if len(caps) == 0 {
			caps = []int{1, 2, 4, 8, 16, 32, 64}
			if t.plan != nil {
				caps = CapsAround(t.plan.MaxInFlight)
			}
		}
		sw, err := sweepExtending(ctx, withStrategy(sc, tuned), base.Name, svc, caps, o.Rule, opts)
		if err != nil {
			return nil, err
		}
		t.sw = sw
		if best == nil || t.better(best) {
			best = t
		}
		if !flat(sw.row.Points, o.Rule) {
			return t, nil
		}
	}
	return best, nil
}

// capsToSweep lists the caps of st that a decision may sweep, the first
// tried first: the global cap ("") when st has one above 1 or no
// per-service cap; else its per-service caps, the one of the service a turn
// calls most first, then the rest from the smallest cap.
func capsToSweep(st *scenarios.Strategy, plans []Plan) []string {
	if st.MaxInFlight > 1 || len(st.MaxInFlightPerService) == 0 {
		return []string{""}
	}
	names := slices.SortedFunc(maps.Keys(st.MaxInFlightPerService), func(a, b string) int {
		if d := st.MaxInFlightPerService[a] - st.MaxInFlightPerService[b]; d != 0 {
			return d
		}
		if a < b {
			return -1
		}
		return 1
	})
	if d := Dominant(plans); d != nil {
		if i := slices.Index(names, d.Service.Name); i > 0 {
			names = append([]string{d.Service.Name}, slices.Delete(names, i, i+1)...)
		}
	}
	return names
}

// flat reports whether every point that meets the rule answers within the
// tolerance of the best (at least two such points): the cap does not bind
// in the range swept.
func flat(points []results.SweepPoint, r Rule) bool {
	var q []results.SweepPoint
	for _, p := range points {
		if r.qualifies(p) {
			q = append(q, p)
		}
	}
	if len(q) < 2 {
		return false
	}
	lo, hi := q[0].P95Ms, q[0].P95Ms
	for _, p := range q {
		lo, hi = min(lo, p.P95Ms), max(hi, p.P95Ms)
	}
	return float64(hi) <= float64(lo)*(1+r.tolerance())
}

// withCap returns st with the cap a sweep varies (service's, or the
// global one when service is "") set to c.
func withCap(st scenarios.Strategy, service string, c int) scenarios.Strategy {
	if service == "" {
		st.MaxInFlight = c
		return st
	}
	st.MaxInFlightPerService = maps.Clone(st.MaxInFlightPerService)
	st.MaxInFlightPerService[service] = c
	return st
}

// asWritten runs every strategy of sc as written under opts' seeds: the
// configurations a decision must be no worse than.
func asWritten(ctx context.Context, sc *scenarios.Scenario, rule Rule, opts sim.Options) ([]results.Outcome, []results.SweepPoint, error) {
	opts.Strategies = nil
	res, err := sim.RunSeeds(ctx, sc, opts)
	if err != nil {
		return nil, nil, err
	}
	var outs []results.Outcome
	var pts []results.SweepPoint
	for i, r := range res.Strategies {
		st := &sc.Strategies[i]
		p := SweepPointOf(max(1, st.MaxInFlight), r)
		o := outcomeOf(st.Name, p)
		o.Cap = st.MaxInFlight
		if st.TokenBucket {
			o.Headroom = st.Headroom
		}
		o.MeetsRule = rule.meets(p)
		outs, pts = append(outs, o), append(pts, p)
	}
	return outs, pts, nil
}

func paceOutcome(name string, p *results.SweepPoint, h float64, r Rule) results.Outcome {
	o := outcomeOf(fmt.Sprintf("%s@%d", name, p.Cap), *p)
	o.Cap, o.Headroom, o.MeetsRule = p.Cap, h, r.qualifies(*p)
	return o
}

func headroomsText() string {
	s := make([]string, len(SearchHeadrooms))
	for i, h := range SearchHeadrooms {
		s[i] = numfmt.Num(h)
	}
	return joinList(s)
}

// p95Text shows a point's p95 time to answer ("no answer" for none).
func p95Text(p *results.SweepPoint) string {
	if p == nil || !p.P95Ms.Answered() {
		return "no answer"
	}
	return secondsText(float64(p.P95Ms))
}
