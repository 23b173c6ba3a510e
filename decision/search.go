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

// SearchHeadrooms are the paces the decision tries at the chosen cap when
// no headroom is asked for: Unpaced (no client-side token bucket), then
// token buckets at these fractions of the limits.
var SearchHeadrooms = []float64{Unpaced, 0.5, 0.7, 0.8, 0.9, 1}

// Unpaced is the pace of a strategy with no client-side token bucket.
const Unpaced = 0.0

// paced returns st paced at headroom h (Unpaced: no token bucket).
func paced(st scenarios.Strategy, h float64) scenarios.Strategy {
	if h == Unpaced {
		st.TokenBucket = false
		return st
	}
	st.TokenBucket, st.Headroom = true, h
	return st
}

// planHeadroom is the headroom the arithmetic plans at for pace h: the
// full limits when unpaced.
func planHeadroom(h float64) float64 {
	if h == Unpaced {
		return 1
	}
	return h
}

// paceText names a pace: "no token bucket" or "headroom 0.9".
func paceText(h float64) string {
	if h == Unpaced {
		return "no token bucket"
	}
	return "headroom " + numfmt.Num(h)
}

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
	paces     []results.Outcome    // the headrooms tried at the chosen cap
	pacePts   []results.SweepPoint // their points, in SearchHeadrooms' order
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

// faster reports whether point a is better than b on the objective and b
// is not shown no worse than a by the rule's test (a nil point never
// answers; any answer beats it).
func (r Rule) faster(a, b *results.SweepPoint) bool {
	switch {
	case a == nil:
		return false
	case b == nil:
		return true
	}
	return r.Score(*a) < r.Score(*b) && r.Compare(*b, *a) != NoWorse
}

// better reports whether tuning t's choice scores lower than b's under
// rule r.
func (t *tuning) better(b *tuning, r Rule) bool {
	a, c := t.chosen(), b.chosen()
	return a != nil && (c == nil || r.Score(*a) < r.Score(*c))
}

// paceKey names a configuration a pace search ran: a strategy, the
// service whose cap it sets ("": the global cap), the cap and the pace.
type paceKey struct {
	strategy, svc string
	cap           int
	headroom      float64
}

// maxPaceRounds bounds the rounds of tune's coordinate search.
const maxPaceRounds = 3

// tune tunes strategy name of sc by a coordinate search of cap × pace: the
// cap swept at the strategy's pace; then, unless o fixes the headroom,
// every other SearchHeadroom tried at the chosen cap and at the
// arithmetic's own cap for that headroom (the move along both axes at
// once, which finds a pace the chosen cap alone would hold back); when a
// pace is better (Rule.faster) the cap is swept again there, and the
// search repeats from the new choice until no move helps, at most
// maxPaceRounds times.
func tune(ctx context.Context, sc *scenarios.Scenario, name string, o Options, opts sim.Options) (*tuning, error) {
	base := sc.Strategy(name)
	h0 := headroomFor(o.Headroom, base)
	t, err := tuneAt(ctx, sc, base, h0, 0, o, opts)
	if err != nil || o.Headroom != 0 {
		return t, err
	}
	tried := map[float64]bool{h0: true}
	for round := 0; round < maxPaceRounds; round++ {
		next, why, err := movePace(ctx, sc, t, tried, o, opts)
		if err != nil || next == 0 && why == "" {
			return t, err
		}
		if next < 0 || tried[next] {
			t.search = append(t.search, why)
			return t, nil
		}
		tried[next] = true
		t2, err := tuneAt(ctx, sc, base, next, 0, o, opts)
		if err != nil {
			return t, err
		}
		t2.paces, t2.pacePts, t2.search = t.paces, t.pacePts, append(append(t.search, why), t2.search...)
		if !t2.better(t, o.Rule) && t.chosen() != nil {
			t.search = append(t.search, why+"; it scored no better there, so "+paceText(t.headroom)+" is kept")
			return t, nil
		}
		t = t2
	}
	return t, nil
}

// movePace tries every SearchHeadroom not yet swept (tried) at t's chosen
// cap and at the arithmetic's cap for it, records them in t, and returns the headroom to
// sweep the cap at next with why (next −1: none is better, why says so).
func movePace(ctx context.Context, sc *scenarios.Scenario, t *tuning, tried map[float64]bool, o Options, opts sim.Options) (next float64, why string, err error) {
	name, h0 := t.name, t.headroom
	at := t.sw.row.Chosen
	if at == 0 && t.plan != nil {
		at = t.plan.MaxInFlight
	}
	if at == 0 {
		at = t.sw.row.Points[len(t.sw.row.Points)/2].Cap
	}
	caps := make([]int, len(SearchHeadrooms))
	for i, h := range SearchHeadrooms {
		if h == h0 || !tried[h] {
			caps[i] = at // a pace whose cap was swept already is not a move
		}
	}
	pts, cut, err := paceAt(ctx, sc, t, at, caps, o, opts)
	if err != nil {
		return 0, "", err
	}
	if len(cut) > 0 {
		t.search = append(t.search, fmt.Sprintf("pace: %s at cap %d ran one seed of %d: that seed is clearly worse than %s's own %s, or fails the rule whatever the other seeds measure",
			pacesText(cut), at, len(o.seeds), name, paceText(h0)))
	}
	own := pointAt(t.sw.row.Points, at)
	t.paces, t.pacePts = nil, nil
	for i, h := range SearchHeadrooms {
		if pts[i].Cap > 0 { // a pace run (or reused) at cap at
			t.pacePts = append(t.pacePts, pts[i])
			t.paces = append(t.paces, paceOutcome(name, &pts[i], h, o.Rule))
		}
	}
	bestH, best := choosePace(pts, h0, own, o.Rule)
	// The diagonal: each pace at the arithmetic's cap for it.
	diag := make([]int, len(SearchHeadrooms))
	moved := false
	for i, h := range SearchHeadrooms {
		if h == h0 || tried[h] {
			continue
		}
		plans, _ := PlanServices(sc, planHeadroom(h))
		if p := planOf(plans, t.svc); p != nil && p.MaxInFlight >= 1 && p.MaxInFlight != at && p.MaxInFlight <= MaxSweepCap {
			diag[i], moved = p.MaxInFlight, true // the same cap as above is not run twice
		}
	}
	if moved {
		dpts, _, err := paceAt(ctx, sc, t, at, diag, o, opts)
		if err != nil {
			return 0, "", err
		}
		if dh, dp := choosePace(dpts, h0, own, o.Rule); dh != h0 && (bestH == h0 || o.Rule.faster(dp, best)) {
			why := fmt.Sprintf("pace: %s tried at cap %d and each at the arithmetic's cap for it; %s at cap %d scores %s against %s with %s's own %s at cap %d, so the cap was swept again with %s",
				headroomsText(), at, paceText(dh), dp.Cap, scoreText(o.Rule, dp), scoreText(o.Rule, own), name, paceText(h0), at, paceText(dh))
			for i := range dpts {
				if dpts[i].Cap > 0 {
					t.pacePts = append(t.pacePts, dpts[i])
					t.paces = append(t.paces, paceOutcome(name, &dpts[i], SearchHeadrooms[i], o.Rule))
				}
			}
			return dh, why, nil
		}
	}
	if bestH == h0 {
		return -1, fmt.Sprintf("pace: %s tried at cap %d and each at the arithmetic's cap for it; %s's own %s is kept: no other is better beyond the tolerance", headroomsText(), at, name, paceText(h0)), nil
	}
	return bestH, fmt.Sprintf("pace: %s tried at cap %d; %s scores %s against %s with %s's own %s, so the cap was swept again with %s",
		headroomsText(), at, paceText(bestH), scoreText(o.Rule, best), scoreText(o.Rule, own), name, paceText(h0), paceText(bestH)), nil
}

// choosePace picks the pace from pts (in SearchHeadrooms' order): the
// strategy's own h0 (point own) unless paces that meet the rule are
// better than it (Rule.faster); among those, the ones the rule's test
// finds no worse than the best of them count as equal, and the lowest
// headroom of them is taken (it leaves the most quota), no token bucket
// last.
func choosePace(pts []results.SweepPoint, h0 float64, own *results.SweepPoint, r Rule) (float64, *results.SweepPoint) {
	if own != nil && !r.qualifies(*own) {
		own = nil
	}
	var fastest *results.SweepPoint
	for i := range pts {
		if p := &pts[i]; r.qualifies(*p) && r.faster(p, own) && (fastest == nil || r.Score(*p) < r.Score(*fastest)) {
			fastest = p
		}
	}
	if fastest == nil {
		return h0, own
	}
	order := append(slices.Clone(SearchHeadrooms[1:]), SearchHeadrooms[0])
	for _, h := range order {
		i := slices.Index(SearchHeadrooms, h)
		if p := &pts[i]; r.qualifies(*p) && r.faster(p, own) && r.Compare(*p, *fastest) == NoWorse {
			return h, p
		}
	}
	return h0, own
}

// paceAt runs t's strategy at every SearchHeadroom h, at cap caps[i] for
// the i-th (0: not run; a point already swept at t's own pace reused), in
// SearchHeadrooms' order. Each pace runs its first seed, then the other
// seeds unless that one already rules it out of choosePace (cannotQualify,
// cannotBeFaster); cut lists the headrooms left at one seed.
func paceAt(ctx context.Context, sc *scenarios.Scenario, t *tuning, at int, caps []int, o Options, opts sim.Options) (out []results.SweepPoint, cut []float64, err error) {
	out = make([]results.SweepPoint, len(SearchHeadrooms))
	n := len(o.seeds)
	own := pointAt(t.sw.row.Points, at)
	var ts []*trial
	var idx []int
	for i, h := range SearchHeadrooms {
		c := caps[i]
		if c == 0 {
			continue // not asked for: out[i] stays a point that never qualifies
		}
		if p := pointAt(t.sw.row.Points, c); h == t.headroom && p != nil {
			out[i] = *p
			continue
		}
		key := paceKey{t.name, t.svc, c, h}
		if tr := o.paced[key]; tr != nil {
			out[i] = tr.point(n)
			continue
		}
		st := paced(withCap(t.tuned, t.svc, c), h)
		st.Name = fmt.Sprintf("%s@%d/%s", t.name, c, numfmt.Num(h))
		tr := &trial{st: st, cap: c}
		if o.paced != nil {
			o.paced[key] = tr
		}
		ts = append(ts, tr)
		idx = append(idx, i)
	}
	if len(ts) == 0 {
		return out, nil, nil
	}
	opts.Strategies = nil
	onCaps := slices.Compact(slices.Clone(caps))
	word := "caps"
	if len(onCaps) == 1 {
		word = "cap"
	}
	name := fmt.Sprintf("%s's paces at %s %s", t.name, word, joinInts(onCaps))
	if n < 2 {
		err = runTrials(ctx, sc, ts, 0, n, name, false, o, opts)
	} else {
		if own != nil && !o.Rule.qualifies(*own) {
			own = nil // as choosePace takes it
		}
		err = runTrials(ctx, sc, ts, 0, 1, name, false, o, opts)
		var rest []*trial
		for k, tr := range ts {
			if pts := tr.seedPoints(); err == nil && (o.Rule.cannotQualify(pts, n) || o.Rule.cannotBeFaster(pts, own)) {
				cut = append(cut, SearchHeadrooms[idx[k]])
				continue
			}
			rest = append(rest, tr)
		}
		if err == nil {
			err = runTrials(ctx, sc, rest, 1, n, fmt.Sprintf("%s, seeds 2 to %d", name, n), false, o, opts)
		}
	}
	if err != nil {
		return nil, nil, err
	}
	for k, i := range idx {
		out[i] = ts[k].point(n)
	}
	return out, cut, nil
}

// tuneAt sweeps base's binding cap at headroom h, starting around the
// arithmetic's cap at h. A strategy with several per-service caps has the
// one of the service a turn calls most swept first; when that sweep is
// flat (the cap does not bind), the others are swept in turn and the
// first that is not flat, else the fastest, is kept.
func tuneAt(ctx context.Context, sc *scenarios.Scenario, base *scenarios.Strategy, h float64, extra int, o Options, opts sim.Options) (*tuning, error) {
	tuned := paced(*base, h)
	plans, unplanned := PlanServices(sc, planHeadroom(h))
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
			// extra: a configuration measured already (a strategy as
			// written, a pace) that the sweep must hold.
			if svc == "" && extra >= 1 && extra <= MaxSweepCap && !slices.Contains(caps, extra) {
				caps = append(slices.Clone(caps), extra)
				slices.Sort(caps)
			}
		}
		sw, err := sweepExtending(ctx, withStrategy(sc, tuned), base.Name, svc, caps, o, opts)
		t.sw = sw
		if err != nil {
			return t, err // the points measured, for an interrupted decision
		}
		if len(sw.oneSeed) > 0 {
			t.search = append(t.search, fmt.Sprintf("caps: %s ran one seed of %d at %s: that seed's p95 sits clearly away from what could change the choice, or fails the rule whatever the other seeds measure",
				joinInts(sw.oneSeed), len(o.seeds), paceText(h)))
		}
		if len(sw.moreSeeds) > 0 {
			t.search = append(t.search, fmt.Sprintf("seeds: caps %s ran more seeds, up to %d, at %s: the rule's paired test could not decide on %d",
				joinInts(sw.moreSeeds), max(len(o.seeds), MaxSeeds), paceText(h), len(o.seeds)))
		}
		if best == nil || t.better(best, o.Rule) {
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

// flat reports whether every point that meets the rule is no worse, by
// the rule's test, than every such point scoring lower (at least two such
// points): the cap does not bind in the range swept, and the rule takes
// the smallest.
func flat(points []results.SweepPoint, r Rule) bool {
	q := r.qualifying(points)
	if len(q) < 2 {
		return false
	}
	for _, p := range q {
		if v, _ := r.against(p, q); v != NoWorse {
			return false
		}
	}
	return true
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

func paceOutcome(name string, p *results.SweepPoint, h float64, r Rule) results.Outcome {
	o := outcomeOf(fmt.Sprintf("%s@%d", name, p.Cap), *p)
	o.Cap, o.Headroom, o.MeetsRule = p.Cap, h, r.qualifies(*p)
	return o
}

// pacesText names the paces hs: "no token bucket and headrooms 0.5, 0.7".
func pacesText(hs []float64) string {
	var s []string
	unpaced := false
	for _, h := range hs {
		if h == Unpaced {
			unpaced = true
		} else {
			s = append(s, numfmt.Num(h))
		}
	}
	var text string
	switch len(s) {
	case 0:
	case 1:
		text = "headroom " + s[0]
	default:
		text = "headrooms " + joinList(s)
	}
	switch {
	case unpaced && text != "":
		return "no token bucket and " + text
	case unpaced:
		return "no token bucket"
	}
	return text
}

func headroomsText() string {
	var s []string
	for _, h := range SearchHeadrooms {
		if h != Unpaced {
			s = append(s, numfmt.Num(h))
		}
	}
	return "no token bucket and headrooms " + joinList(s)
}

// p95Text shows a point's p95 time to answer ("no answer" for none).
func p95Text(p *results.SweepPoint) string {
	if p == nil || !p.P95Ms.Answered() {
		return "no answer"
	}
	return secondsText(float64(p.P95Ms))
}
