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
	headroom float64
	p        results.SweepPoint
	what     string
}

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
	for _, t := range all {
		for _, p := range t.sw.row.Points {
			if r.qualifies(p) {
				ms = append(ms, config{t.name, t.headroom, p, fmt.Sprintf("%s at cap %d, %s", t.name, p.Cap, paceText(t.headroom))})
			}
		}
		for i, p := range t.pacePts {
			if r.qualifies(p) && i < len(t.paces) {
				h := t.paces[i].Headroom
				ms = append(ms, config{t.name, h, p, fmt.Sprintf("%s at cap %d, %s", t.name, p.Cap, paceText(h))})
			}
		}
	}
	for _, c := range written {
		if r.qualifies(c.p) {
			ms = append(ms, c)
		}
	}
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
	best := ms[0]
	for _, m := range ms {
		if r.Score(m.p) < r.Score(best.p) {
			best = m
		}
	}
	for _, t := range all {
		if p := pointAt(t.sw.row.Points, best.p.Cap); t.name == best.strategy && t.headroom == best.headroom && p != nil && r.Score(*p) == r.Score(best.p) {
			t.sw.row.Chosen = best.p.Cap
			return t, nil, append(why, fmt.Sprintf("across: %s, the lowest-scoring configuration measured, is set instead", best.what)), ms
		}
	}
	return order[0], &best, why, ms
}

// lowest returns the cap of the lowest-scoring point that qualifies (0:
// none).
func lowest(points []results.SweepPoint, r Rule) int {
	c := 0
	for i := range points {
		if r.qualifies(points[i]) && (c == 0 || r.Score(points[i]) < r.Score(*pointAt(points, c))) {
			c = points[i].Cap
		}
	}
	return c
}

// chosenScore is the score of t's chosen point (+Inf: none).
func chosenScore(t *tuning, r Rule) float64 {
	if c := t.chosen(); c != nil {
		return r.Score(*c)
	}
	return math.Inf(1)
}
