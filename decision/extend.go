package decision

import (
	"context"
	"fmt"
	"slices"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sim"
)

// extendedSweep is a sweep grown while its choice sat at an edge.
type extendedSweep struct {
	row      results.SweepRow
	best     int      // the cap with the lowest p95 (0: none qualified)
	extended []string // why the range grew, a round a line
	oneSeed  []int    // the caps run over their first seed only (settle)
	// moreSeeds are the caps run over more seeds than asked because the
	// rule's test could not decide on them; undecided the caps it still
	// could not decide at MaxSeeds (Rule.Pending).
	moreSeeds, undecided []int
}

// sweepExtending sweeps strategy name of sc over caps, then over the caps
// Extend adds while the rule's choice sits at an edge of the range, for at
// most maxExtensions rounds. Each round runs the first seed of its caps,
// then the other seeds of every cap whose first seed leaves the choice
// open (settle); the caps settled by their first seed keep that one run.
func sweepExtending(ctx context.Context, sc *scenarios.Scenario, name, service string, caps []int, o Options, opts sim.Options) (extendedSweep, error) {
	e := &extending{ctx: ctx, sc: sc, name: name, service: service, base: sc.Strategy(name), o: o, opts: opts, n: len(o.seeds)}
	rule := o.Rule
	for round := 0; ; round++ {
		err := e.round(caps)
		pts := e.points()
		e.out.row = NewSweepRow("as written", pts, rule)
		if err != nil {
			// Interrupted: out.row holds the points measured.
			return e.out, err
		}
		_, e.out.best, _ = rule.Choose(pts)
		e.out.undecided = rule.Pending(pts)
		more, why := Extend(pts, e.out.row.Chosen)
		if len(more) == 0 || round == maxExtensions {
			slices.Sort(e.out.moreSeeds)
			e.out.oneSeed = nil
			for _, p := range pts {
				if e.n > 1 && p.Seeds == 1 {
					e.out.oneSeed = append(e.out.oneSeed, p.Cap)
				}
			}
			return e.out, nil
		}
		e.out.extended = append(e.out.extended, fmt.Sprintf("%s, so caps %s were added", why, joinInts(more)))
		caps = more
	}
}

// extending is a sweep sweepExtending grows round by round: the trials
// run so far, over n seeds each unless settled by the first or extended
// for the rule's test.
type extending struct {
	ctx           context.Context
	sc            *scenarios.Scenario
	name, service string
	base          *scenarios.Strategy
	o             Options
	opts          sim.Options
	n             int // the seeds asked for
	trials        []*trial
	out           extendedSweep
}

// points are the sweep's points so far, in the order of their caps.
func (e *extending) points() []results.SweepPoint {
	var pts []results.SweepPoint
	for _, t := range e.trials {
		if len(t.runs) > 0 {
			pts = append(pts, t.point(e.n))
		}
	}
	slices.SortFunc(pts, func(a, b results.SweepPoint) int { return a.Cap - b.Cap })
	return pts
}

// round runs caps: the first seed of the caps no pace search has run,
// then the other seeds of the caps that leaves open, then more seeds
// where the rule's test cannot decide.
func (e *extending) round(caps []int) error {
	var fresh []*trial
	h := Unpaced
	if e.base.TokenBucket {
		h = e.base.Headroom
	}
	for _, c := range caps {
		if tr := e.o.paced[paceKey{e.base.Name, e.service, c, h}]; tr != nil && len(tr.runs) > 0 {
			e.trials = append(e.trials, tr) // a pace search ran it already
			continue
		}
		st := withCap(*e.base, e.service, c)
		st.Name = fmt.Sprintf("%s@%d", e.base.Name, c)
		fresh = append(fresh, &trial{st: st, cap: c})
	}
	e.trials = append(e.trials, fresh...)
	first := e.n
	if e.n > 1 {
		first = 1
	}
	err := e.run(fresh, 0, first, fmt.Sprintf("%s at caps %s", e.name, joinInts(caps)), true)
	if err == nil {
		err = e.settle()
	}
	if err == nil {
		err = e.moreSeeds()
	}
	return err
}

// run runs seeds from to to of trials as runTrials does.
func (e *extending) run(trials []*trial, from, to int, step string, follow bool) error {
	return runTrials(e.ctx, e.sc, trials, from, to, step, follow, e.o, e.opts)
}

// settle runs the other seeds of the trials whose first seed leaves the
// choice open, until none does.
func (e *extending) settle() error {
	for {
		open := settle(e.trials, e.o.Rule, e.n)
		if len(open) == 0 {
			return nil
		}
		var at []int
		for _, t := range open {
			at = append(at, t.cap)
		}
		if err := e.run(open, 1, e.n, fmt.Sprintf("%s at caps %s, seeds 2 to %d", e.name, joinInts(at), e.n), true); err != nil {
			return err
		}
	}
}

// moreSeeds runs more seeds, MoreSeeds at a time up to MaxSeeds, of the
// caps the rule's test cannot yet decide, while there are any.
func (e *extending) moreSeeds() error {
	for e.n >= 2 {
		var more []*trial
		for _, c := range e.o.Rule.Pending(e.points()) {
			for _, t := range e.trials {
				if t.cap == c && len(t.runs) >= e.n && len(t.runs) < max(e.n, MaxSeeds) {
					more = append(more, t)
				}
			}
		}
		if len(more) == 0 {
			return nil
		}
		from := len(more[0].runs)
		for _, t := range more {
			from = min(from, len(t.runs))
		}
		more = slices.DeleteFunc(more, func(t *trial) bool { return len(t.runs) != from })
		to := min(from+MoreSeeds, max(e.n, MaxSeeds))
		var at []int
		for _, t := range more {
			at = append(at, t.cap)
			if !slices.Contains(e.out.moreSeeds, t.cap) {
				e.out.moreSeeds = append(e.out.moreSeeds, t.cap)
			}
		}
		if err := e.run(more, from, to, fmt.Sprintf("%s at caps %s, seeds %d to %d (the rule's test could not yet decide)", e.name, joinInts(at), from+1, to), false); err != nil {
			return err
		}
	}
	return nil
}
