package decision

// The step across strategies: every other strategy as written is weighed
// against the tuned one, and the tuning set is the one the rule's paired
// test finds no worse than every configuration measured.

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/simbench/simbench/internal/numfmt"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sim"
)

// tryOthers considers every other strategy of the scenario, as written,
// from the best-scoring: one that scores lower than t's choice is tuned
// (whether or not it meets the rule as written: a cap or a pace may bring
// it inside), and the tuning that scores lowest is kept. Every strategy
// left untuned is said in the search with its reason.
func tryOthers(ctx context.Context, sc *scenarios.Scenario, t *tuning, written []results.Outcome, points []results.SweepPoint, o Options, opts sim.Options) (*tuning, []*tuning, error) {
	r := o.Rule
	all := []*tuning{t}
	order := make([]int, 0, len(points))
	for i := range points {
		if written[i].Strategy != t.name {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(r.Score(points[a]), r.Score(points[b])) })
	tried := map[string]bool{t.name: true}
	for _, i := range order {
		name, p := written[i].Strategy, &points[i]
		if tried[name] {
			continue
		}
		c := t.chosen()
		if c != nil && !(r.Score(*p) < r.Score(*c)) {
			t.search = append(t.search, fmt.Sprintf("strategy: %s not tuned: as written its %s, %s, is no better than %s tuned (%s), and a cap or a pace only holds it back", name, ObjectiveText(r.Objective), scoreText(r, p), t.name, scoreText(r, c)))
			continue
		}
		tried[name] = true
		if err := complete(ctx, sc, i, written, points, o, opts); err != nil {
			return t, all, err
		}
		why := fmt.Sprintf("strategy: %s as written scores %s, better than %s tuned (%s), so %s was tuned too", name, scoreText(r, p), t.name, scoreText(r, c), name)
		if !r.meets(*p) {
			why = fmt.Sprintf("strategy: %s as written fails the rule but scores %s, better than %s tuned (%s), so %s was tuned too, a cap or a pace may bring it inside", name, scoreText(r, p), t.name, scoreText(r, c), name)
		}
		t2, err := tune(ctx, sc, name, o, opts)
		if err != nil {
			return t, all, err
		}
		all = append(all, t2)
		if t2.better(t, r) {
			t2.search = append(slices.Clone(t.search), append([]string{why + " and kept"}, t2.search...)...)
			t = t2
			continue
		}
		t.search = append(t.search, why+"; tuned, it scored no better, so "+t.name+" is kept")
	}
	return t, all, nil
}

// maxNeedRounds bounds the sweeps of the best configuration measured that
// pickAcross asks for: each may run more seeds, which can move the best.
const maxNeedRounds = 3

// config is a configuration the search measured: a strategy at a cap
// and a pace, with its point.
type config struct {
	strategy string
	svc      string // the per-service cap p.Cap is ("": the global cap)
	headroom float64
	p        results.SweepPoint
	what     string
}

// key names c's configuration: every point of it was measured on the same
// runs, seed by seed (the search shares a configuration's runs between its
// steps), so the point over the most seeds is the latest of them.
func (c config) key() paceKey { return paceKey{c.strategy, c.svc, c.p.Cap, c.headroom} }

// writtenConfig is strategy st as written, measured as p: at its own cap,
// or, with none, at its peak in flight as written (a cap it never reaches),
// and its own pace.
func writtenConfig(st scenarios.Strategy, p results.SweepPoint, peak int) config {
	h := Unpaced
	if st.TokenBucket {
		h = st.Headroom
	}
	c := st.MaxInFlight
	if c == 0 {
		c = max(1, peak)
	}
	p.Cap = c
	return config{strategy: st.Name, headroom: h, p: p, what: st.Name + " as written"}
}

// pickAcross returns the tuning whose choice the decision sets, so that the
// decision is no worse, by the rule's test, than any configuration the
// search measured that meets the rule (every tuning's caps and paces, and
// the strategies as written, written): of the tunings' chosen points, from
// the lowest score, the first that Compare finds NoWorse than every such
// configuration scoring lower. When none is, it returns the
// lowest-scoring configuration as need when no sweep holds it, else the
// tuning holding it, at that cap. The lines say why, for the search.
func pickAcross(all []*tuning, written []config, r Rule) (_ *tuning, _ *config, _ []string, ms []config) {
	ms = measuredConfigs(all, written, r)
	worseThan := func(d results.SweepPoint) string {
		for _, m := range ms {
			if r.Score(m.p) < r.Score(d) && r.Compare(d, m.p) != NoWorse {
				return m.what
			}
		}
		return ""
	}
	order := slices.Clone(all)
	slices.SortStableFunc(order, func(a, b *tuning) int {
		return cmp.Compare(chosenScore(a, r), chosenScore(b, r))
	})
	var why []string
	for _, t := range order {
		c := t.chosen()
		if c == nil {
			continue
		}
		w := worseThan(*c)
		if w == "" {
			return t, nil, why, ms
		}
		why = append(why, fmt.Sprintf("across: %s at cap %d is not shown within %s%% of %s, which scores lower, so it is not taken", t.name, c.Cap, numfmt.Num(100*r.tolerance()), w))
	}
	if len(ms) == 0 {
		return order[0], nil, why, ms
	}
	best := bestConfig(ms, r)
	for _, t := range all {
		if t.name == best.strategy && t.svc == best.svc && t.headroom == best.headroom && pointAt(t.sw.row.Points, best.p.Cap) != nil {
			t.sw.row.Chosen = best.p.Cap
			return t, nil, append(why, fmt.Sprintf("across: %s, the lowest-scoring configuration measured, is set instead", best.what)), ms
		}
	}
	return order[0], &best, why, ms
}

// measuredConfigs returns every configuration measured that meets the
// rule, once each (every tuning's caps and paces, and the strategies as
// written), at its latest point: a configuration's runs are shared between
// the search's steps, and a later step may have run more seeds of it than
// an earlier one's point holds. The tunings' rows and pace points are
// brought up to date too, so that a choice is weighed on every seed run.
func measuredConfigs(all []*tuning, written []config, r Rule) []config {
	var each []config
	for _, t := range all {
		for _, p := range t.sw.row.Points {
			each = append(each, config{t.name, t.svc, t.headroom, p, fmt.Sprintf("%s at cap %d, %s", t.name, p.Cap, paceText(t.headroom))})
		}
		for i, p := range t.pacePts {
			if i < len(t.paces) {
				h := t.paces[i].Headroom
				each = append(each, config{t.name, t.svc, h, p, fmt.Sprintf("%s at cap %d, %s", t.name, p.Cap, paceText(h))})
			}
		}
	}
	each = append(each, written...)
	latest := map[paceKey]config{}
	var keys []paceKey
	for _, c := range each {
		k := c.key()
		l, ok := latest[k]
		if !ok {
			keys = append(keys, k)
		}
		if !ok || len(c.p.PerSeed) > len(l.p.PerSeed) {
			if ok {
				c.what = l.what // the name it was first measured under
			}
			latest[k] = c
		}
	}
	for _, t := range all {
		for i, p := range t.sw.row.Points {
			t.sw.row.Points[i] = latest[paceKey{t.name, t.svc, p.Cap, t.headroom}].p
		}
		for i, p := range t.pacePts {
			if i < len(t.paces) {
				t.pacePts[i] = latest[paceKey{t.name, t.svc, p.Cap, t.paces[i].Headroom}].p
			}
		}
	}
	var ms []config
	for _, k := range keys {
		if c := latest[k]; r.qualifies(c.p) {
			ms = append(ms, c)
		}
	}
	return ms
}

// bestConfig returns the lowest-scoring configuration of ms (the first
// of equals); ms is not empty.
func bestConfig(ms []config, r Rule) config {
	best := ms[0]
	for _, m := range ms {
		if r.Score(m.p) < r.Score(best.p) {
			best = m
		}
	}
	return best
}

// setBest sets best, the lowest-scoring configuration measured, on a
// tuning of its strategy, service and pace: one of all whose row holds its
// cap, or to whose row its point is added, else a tuning made for it from
// sc whose row is that point alone. Nothing measured scores lower, so the
// rule's test finds nothing it is worse than.
func setBest(sc *scenarios.Scenario, all []*tuning, best config, r Rule) *tuning {
	for _, t := range all {
		if t.name == best.strategy && t.svc == best.svc && t.headroom == best.headroom {
			if pointAt(t.sw.row.Points, best.p.Cap) == nil {
				t.sw.row.Points = append(t.sw.row.Points, best.p)
				slices.SortFunc(t.sw.row.Points, func(a, b results.SweepPoint) int { return a.Cap - b.Cap })
			}
			t.sw.row.Chosen = best.p.Cap
			return t
		}
	}
	base := sc.Strategy(best.strategy)
	plans, unplanned := PlanServices(sc, planHeadroom(best.headroom))
	t := &tuning{name: base.Name, tuned: paced(*base, best.headroom), svc: best.svc, headroom: best.headroom, plans: plans, unplanned: unplanned, plan: planOf(plans, best.svc)}
	t.sw.row = NewSweepRow("as written", []results.SweepPoint{best.p}, r)
	t.sw.row.Chosen, t.sw.best = best.p.Cap, best.p.Cap
	return t
}

// chosenScore is the score of t's chosen point (+Inf: none).
func chosenScore(t *tuning, r Rule) float64 {
	if c := t.chosen(); c != nil {
		return r.Score(*c)
	}
	return math.Inf(1)
}

// writtenConfigs returns the strategies of sc as written (o.Strategy's
// alone when set; none at another pace than o.Headroom when set), each
// over every seed a sweep has run it since (points: as asWritten measured
// them; peaks: their peaks in flight).
func writtenConfigs(sc *scenarios.Scenario, points []results.SweepPoint, peaks map[string]int, o Options) []config {
	var wc []config
	for i, st := range sc.Strategies {
		if o.Strategy == "" || st.Name == o.Strategy {
			c := writtenConfig(st, points[i], peaks[st.Name])
			if o.Headroom != 0 && c.headroom != o.Headroom {
				// The caller pinned the pace: a strategy as
				// written at another pace is not a choice.
				continue
			}
			if tr := o.paced[paceKey{st.Name, "", c.p.Cap, c.headroom}]; tr != nil && len(tr.runs) > 1 {
				c.p = tr.point(len(o.seeds)) // over every seed a sweep has run it since
			}
			wc = append(wc, c)
		}
	}
	return wc
}

// across is the step across strategies: of every tuning (all; t the one
// tuned so far), the one whose choice is no worse than every configuration
// measured (pickAcross, written giving the strategies as written as they
// stand). While none is, the best configuration measured is swept at its
// pace, up to maxNeedRounds times; after that the best configuration
// measured is set (setBest). It returns the tuning set, with the search's
// log, and the configurations measured that meet the rule.
func across(ctx context.Context, sc *scenarios.Scenario, t *tuning, all []*tuning, written func() []config, o Options, opts sim.Options) (*tuning, []config, error) {
	log := t.search // the search so far, every strategy's step in order
	t, need, lines, measured := pickAcross(all, written(), o.Rule)
	t.search = append(slices.Clone(log), lines...)
	for round := 0; need != nil && round < maxNeedRounds; round++ {
		// The best configuration measured is no cap of a sweep: sweep
		// its strategy at its pace, with its cap among the caps (its
		// runs reused), and pick again.
		t2, err := tuneAt(ctx, sc, sc.Strategy(need.strategy), need.headroom, need.p.Cap, o, opts)
		if err != nil {
			return t, measured, err
		}
		all = append(all, t2)
		log := append(t.search, fmt.Sprintf("across: no tuning's choice is shown no worse than every configuration measured that scores better; %s scores best, so %s was swept at %s with cap %d", need.what, need.strategy, paceText(need.headroom), need.p.Cap))
		log = append(log, t2.search...)
		t, need, lines, measured = pickAcross(all, written(), o.Rule)
		if need != nil && round == maxNeedRounds-1 {
			// Each sweep's seeds can move the best: the lowest-scoring
			// configuration measured is set, with no further sweep.
			best := bestConfig(measured, o.Rule)
			t = setBest(sc, all, best, o.Rule)
			lines = append(lines, fmt.Sprintf("across: after %d sweeps no tuning's choice is shown no worse than every configuration measured that scores better; %s, the lowest-scoring configuration measured, is set", maxNeedRounds, best.what))
		}
		t.search = append(log, lines...)
	}
	return t, measured, nil
}
