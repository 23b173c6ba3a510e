// The strategies as written: the runs a decision must be no worse than,
// the unbounded contrast among them, read into outcomes and points.

package decision

import (
	"context"
	"slices"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sim"
)

// asWritten runs every strategy of sc as written under opts' seeds, the
// unbounded baseline (unboundedStrategy) at the first seed only: the
// configurations a decision must be no worse than, and the contrast, which
// only says how unbounded fares and costs the most to simulate. The
// baseline's run stops early (o.stops) once it certainly cannot meet the
// rule, unless it is first, the strategy the decision tunes first; its
// outcome then says so (Outcome.Stopped), and complete runs it to its end
// should the search tune it.
func asWritten(ctx context.Context, sc *scenarios.Scenario, first string, o Options, opts sim.Options) ([]results.Outcome, []results.SweepPoint, map[string]int, error) {
	opts.Strategies = nil
	done := o.step("strategies as written", len(sc.Strategies), &opts)
	ub := unboundedStrategy(sc)
	var seeded, once []string
	for _, st := range sc.Strategies {
		if st.Name == ub {
			once = append(once, st.Name)
		} else {
			seeded = append(seeded, st.Name)
		}
	}
	byName := map[string]results.StrategyResult{}
	for _, part := range []struct {
		names []string
		seeds int
	}{{seeded, opts.Seeds}, {once, 1}} {
		if len(part.names) == 0 {
			continue
		}
		po := opts
		po.Strategies, po.Seeds = part.names, part.seeds
		if part.seeds == 1 && ub != first {
			po = o.stops.options(po)
		}
		res, err := sim.RunSeeds(ctx, sc, po)
		if err != nil {
			done(true)
			return nil, nil, nil, err
		}
		o.tell(sc, res, 0)
		for _, r := range res.Strategies {
			byName[r.Name] = r
			if po.StopWhen == nil {
				o.keepRuns(sc, r)
			}
		}
	}
	done(false)
	outs := make([]results.Outcome, len(sc.Strategies))
	pts := make([]results.SweepPoint, len(sc.Strategies))
	peaks := map[string]int{}
	for i := range sc.Strategies {
		outs[i], pts[i] = o.written(sc, i, byName[sc.Strategies[i].Name], peaks)
	}
	return outs, pts, peaks, nil
}

// written reads r, the run of sc's i-th strategy as written: its outcome
// and point, its peak in flight into peaks, and its runs into o.paced,
// where a sweep at the strategy's own pace and cap reuses them (for a
// strategy with no cap, at its peak: a cap it never reaches). A run
// stopped early is none of these but its outcome and point, marked.
func (o Options) written(sc *scenarios.Scenario, i int, r results.StrategyResult, peaks map[string]int) (results.Outcome, results.SweepPoint) {
	st := &sc.Strategies[i]
	stop := o.stops.stopped(r)
	if stop == nil {
		peaks[st.Name] = peakInFlight(r)
		if !(len(st.MaxInFlightPerService) > 0 && st.MaxInFlight == 0 || o.paced == nil) {
			wc := writtenConfig(*st, results.SweepPoint{}, peaks[st.Name])
			runs := r.SeedRuns
			if len(runs) == 0 {
				runs = []results.StrategyResult{r}
			}
			o.paced[paceKey{st.Name, "", wc.p.Cap, wc.headroom}] = &trial{st: *st, cap: wc.p.Cap, runs: slices.Clone(runs)}
		}
	}
	p := SweepPointOf(max(1, st.MaxInFlight), r)
	out := outcomeOf(st.Name, p)
	out.Cap = st.MaxInFlight
	if st.TokenBucket {
		out.Headroom = st.Headroom
	}
	out.MeetsRule = o.Rule.meets(p)
	out.Stopped = stop
	return out, p
}

// complete runs the strategy of written[i], stopped early, to its end
// and puts its outcome, point, peak and runs where asWritten would have:
// the search is about to tune it, which reads them.
func complete(ctx context.Context, sc *scenarios.Scenario, i int, written []results.Outcome, points []results.SweepPoint, o Options, opts sim.Options) error {
	if written[i].Stopped == nil {
		return nil
	}
	po := opts
	po.Strategies, po.Seeds = []string{sc.Strategies[i].Name}, 1
	done := o.step("strategy "+sc.Strategies[i].Name+" as written, to its end", 1, &po)
	res, err := sim.RunSeeds(ctx, sc, po)
	done(err != nil)
	if err != nil {
		return err
	}
	o.tell(sc, res, 0)
	o.keepRuns(sc, res.Strategies[0])
	written[i], points[i] = o.written(sc, i, res.Strategies[0], o.writtenPeak)
	return nil
}

// peakInFlight is the most a strategy's run held in flight, over its
// seeds: the sum of its services' peaks, a cap that a run as written never
// reaches.
func peakInFlight(r results.StrategyResult) int {
	sum := func(m map[string]int) int {
		n := 0
		for _, v := range m {
			n += v
		}
		return n
	}
	peak := sum(r.PeakInFlight)
	for _, s := range r.SeedRuns {
		peak = max(peak, sum(s.PeakInFlight))
	}
	return peak
}
