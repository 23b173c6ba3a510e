package decision

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/simbench/simbench/internal/numfmt"
	"github.com/simbench/simbench/internal/setup"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sim"
)

// DefaultSeeds is how many seeds each cap of the deciding sweep runs
// with unless --seeds says otherwise: enough for an interval, few enough
// that `run` stays quick. It is the default of sweep's and recommend's
// --seeds (a count of seeds).
const DefaultSeeds = 3

// maxExtensions bounds the rounds that grow a sweep whose choice sits at an
// edge of its range.
const maxExtensions = 6

// Options are the settings of the one computation of what to set; `run`,
// `sweep` and `recommend` fill them from the same flags with the same
// defaults, so that all three print the same decision.
type Options struct {
	// Strategy names the strategy to tune ("": the one sim.SweepStrategy picks).
	Strategy string
	// Headroom is the fraction of the limits to pace at (0: the strategy's
	// own when it paces, else DefaultHeadroom).
	Headroom float64
	// Rule chooses the cap.
	Rule Rule
	// Seeds (0: DefaultSeeds), Seed (nil: the scenario's) and
	// Duration (0: the scenario's) shape each simulated run.
	Seeds    int
	Seed     *uint64
	Duration time.Duration
	// Caps, when set, are the caps to start from (default: around the
	// arithmetic's cap).
	Caps []int
	// Progress, when set, follows the runs of the cap sweeps
	// (sim.Options.Progress).
	Progress func(strategy string, done, total time.Duration)
	// Steps, when set, is called before each step of the search (the
	// strategies as written, each round of caps, the paces) with the step's
	// name, its runs and each run's simulated time; it returns what receives
	// the runs' progress (sim.Options.Progress) and what ends the step.
	Steps func(step string, runs int, each time.Duration) (update func(strategy string, done, total time.Duration), finish func(aborted bool))
	// Cache, when set, holds the runs already simulated (sim.Options.Cache):
	// a run it holds is read, not simulated again, and each run simulated
	// is stored in it.
	Cache *sim.Cache
	// Parallel caps the runs simulated at once (sim.Options.Parallel).
	Parallel int
	// NoEarlyStop runs every strategy as written to its end, also one
	// that certainly cannot meet the rule before (see earlyStops): the
	// decision is the same, the figures of such a strategy are those of
	// its whole run.
	NoEarlyStop bool
	// NoLoad leaves the load check out (Result.Load nil): the workload's
	// demand (sim.Demand) is not simulated, and Arithmetic simulates
	// nothing. For callers that print and write no load figure.
	NoLoad bool

	each  time.Duration // each run's simulated time, set by Decide
	seeds []uint64      // the seeds of every configuration, set by Decide
	// stops stops the runs as written that cannot meet the rule (set by
	// Decide; nil: none is stopped).
	stops *earlyStops
	// writtenPeak is each strategy's peak in flight as written (set by
	// Decide): the cap a sweep of an uncapped strategy adds.
	writtenPeak map[string]int
	// paced holds the configurations the pace searches ran (set by
	// Decide), so that a later round reuses them.
	paced map[paceKey]*trial
	// runs is the memo of the runs the search simulated (set by Decide),
	// so that it simulates none twice; noMemo (for the tests' oracle)
	// leaves it out.
	runs   runMemo
	noMemo bool
	// ran, when set (by the tests' oracle), is told of every run the
	// search simulates: the strategy as run, the seed's index in the
	// sequence of seeds (sim.Seeds), and the run's figures.
	ran func(st scenarios.Strategy, seed int, r results.StrategyResult)
}

// tell tells o.ran of the runs of res, of strategies of sc, their seeds
// from the from-th on.
func (o Options) tell(sc *scenarios.Scenario, res *results.Results, from int) {
	if o.ran == nil || res == nil {
		return
	}
	for _, r := range res.Strategies {
		runs := r.SeedRuns
		if len(runs) == 0 && !r.Partial {
			runs = []results.StrategyResult{r}
		}
		for i, s := range runs {
			if !s.Partial && s.StoppedAtS == 0 {
				o.ran(*sc.Strategy(r.Name), from+i, s)
			}
		}
	}
}

// step reports a step of runs runs through o.Steps, setting
// opts.Progress; the returned func ends it.
func (o Options) step(name string, runs int, opts *sim.Options) func(aborted bool) {
	if o.Steps == nil || runs == 0 {
		return func(bool) {}
	}
	update, finish := o.Steps(name, runs, o.each)
	opts.Progress = update
	return finish
}

// Result is a decision with what was computed on the way.
type Result struct {
	// Decision is what to set (nil from Arithmetic); Row is the verifying
	// sweep's row; Plans the services' plans and Unplanned, by service
	// name, why a service has none; Load the workload's demand against the
	// limits (nil: not checked).
	Decision  *results.Decision
	Row       results.SweepRow
	Plans     []Plan
	Unplanned map[string]error
	Plan      *Plan // the plan of the decision's service (nil: none)
	Load      *LoadCheck
	// Tuned is the strategy as verified: the scenario's, paced at the
	// headroom, with the chosen cap.
	Tuned scenarios.Strategy
	// Measured holds every configuration the search measured that meets
	// the rule, by what it was ("capped at cap 4, headroom 0.9", "paced
	// as written"), each over every seed it ran.
	Measured map[string]results.SweepPoint
}

// Decide is the one function that says what to set. It searches the
// knobs that matter over several seeds: the strategy (every strategy of
// the scenario is run as written; when one answers faster beyond the
// tolerance than the tuned one, it is tuned too and the faster kept), the
// cap that binds (the global cap, or the per-service cap whose sweep is not
// flat), swept around the arithmetic's cap and extended while the choice
// sits at an edge, and the pace (SearchHeadrooms tried at the chosen cap).
// The cap is chosen by the rule; the unbounded strategy under the same
// seeds is the contrast. A scenario whose services have no limits to plan
// from gets a decision from the sweep alone. o.Strategy fixes the
// strategy, o.Headroom the pace. When ctx ends during a sweep of caps,
// Decide returns, with ctx.Err(), a Result whose Row holds the points
// measured and whose Decision is nil (nil when no point was).
func Decide(ctx context.Context, sc *scenarios.Scenario, o Options) (*Result, error) {
	name, o, opts, err := setUp(sc, o)
	if err != nil {
		return nil, err
	}
	written, points, peaks, err := asWritten(ctx, sc, name, o, opts)
	if err != nil {
		return nil, err
	}
	o.writtenPeak = peaks
	t, err := tune(ctx, sc, name, o, opts)
	all := []*tuning{t}
	if err == nil && o.Strategy == "" {
		t, all, err = tryOthers(ctx, sc, t, written, points, o, opts)
	}
	var measured []config
	if err == nil {
		writtenNow := func() []config { return writtenConfigs(sc, points, peaks, o) }
		t, measured, err = across(ctx, sc, t, all, writtenNow, o, opts)
	}
	if err != nil {
		if ctx.Err() != nil && t != nil && len(t.sw.row.Points) > 0 {
			// Interrupted: the points measured, no decision.
			return &Result{Tuned: t.tuned, Row: t.sw.row, Plans: t.plans, Unplanned: t.unplanned, Plan: t.plan}, err
		}
		return nil, err
	}
	return decided(ctx, sc, t, measured, written, o)
}

// setUp checks Decide's strategy and options against sc and returns the
// strategy to tune first, o with the objective, each run's simulated time,
// the seeds and the search's shared runs set, and the simulator's options.
func setUp(sc *scenarios.Scenario, o Options) (string, Options, sim.Options, error) {
	name := o.Strategy
	if name == "" {
		name = sim.SweepStrategy(sc)
	}
	if sc.Strategy(name) == nil {
		_, err := (&sim.Options{Strategies: []string{name}}).Apply(sc)
		return "", o, sim.Options{}, InputError{err}
	}
	if o.Rule.Objective == "" {
		o.Rule.Objective = sc.Objective
	}
	seeds := o.Seeds
	if seeds == 0 {
		seeds = DefaultSeeds
	}
	opts := sim.Options{Seed: o.Seed, Duration: o.Duration, Seeds: seeds, Cache: o.Cache, Parallel: o.Parallel}
	applied, err := opts.Apply(sc)
	if err != nil {
		return "", o, opts, InputError{err}
	}
	o.each, o.seeds = applied.Duration, sim.Seeds(applied.Seed, seeds)
	if !o.NoEarlyStop {
		o.stops = newEarlyStops(applied, o.Rule, o.each)
	}
	o.paced = map[paceKey]*trial{}
	if !o.noMemo {
		o.runs = runMemo{}
	}
	return name, o, opts, nil
}

// decided makes the Result of tuning t, the one set: the load check
// (unless o.NoLoad), the decision in words and figures, the strategy as
// set, and every configuration measured that meets the rule.
func decided(ctx context.Context, sc *scenarios.Scenario, t *tuning, measured []config, written []results.Outcome, o Options) (*Result, error) {
	res := &Result{Tuned: t.tuned, Row: t.sw.row, Plans: t.plans, Unplanned: t.unplanned, Plan: t.plan, Measured: map[string]results.SweepPoint{}}
	for _, m := range measured {
		res.Measured[m.what] = m.p
	}
	var err error
	if res.Load, err = measureLoad(ctx, sc, o, res.Plans); err != nil {
		return nil, err
	}
	service := t.svc
	if service == "" && res.Plan != nil {
		service = res.Plan.Service.Name
	}
	in := input{
		Strategy: t.name, Service: service, PerService: t.svc != "",
		MaxInFlight: t.tuned.MaxInFlight, MaxInFlightPerService: t.tuned.MaxInFlightPerService,
		Headroom: t.headroom, Pace: paces(sc, t.headroom), Retry: setup.RetryText(&t.tuned),
		Plan: res.Plan, Row: t.sw.row, Best: t.sw.best, Extended: t.sw.extended, Rule: o.Rule,
		Seeds: o.seeds, DurationS: o.each.Seconds(), Load: res.Load,
		Strategies: written, Paces: t.paces, Search: t.search, CapFlat: flat(t.sw.row.Points, o.Rule),
		Priced: priced(sc), Undecided: undecidedText(t.sw, o.Rule),
	}
	if ub := unboundedStrategy(sc); ub != "" && ub != t.name {
		for _, w := range written {
			if w.Strategy == ub {
				in.Baseline = &w
			}
		}
	}
	d := build(in)
	res.Decision = &d
	if res.Row.Chosen > 0 {
		res.Tuned = withCap(t.tuned, t.svc, res.Row.Chosen)
	}
	return res, nil
}

// scoreText shows a point's score under r's objective ("no answer" for
// none): "p95 3.4 s", "$0.0166 per answered task", "97.5% answered".
func scoreText(r Rule, p *results.SweepPoint) string {
	if p == nil || math.IsInf(r.Score(*p), 1) {
		return "no answer"
	}
	switch r.Objective {
	case scenarios.ObjectiveCost:
		return dollarsText(p.CostPerAnsweredTaskUSD) + " per answered task"
	case scenarios.ObjectiveCompletion:
		return percent(p.AnsweredShare) + " answered"
	}
	return "p95 " + p95Text(p)
}

// undecidedText says which smaller caps the rule's test still could not
// tell from a better one after MaxSeeds ("" when none): the decision keeps
// the larger cap, as it is not shown worse.
func undecidedText(sw extendedSweep, r Rule) string {
	var caps []int
	for _, c := range sw.undecided {
		if c < sw.row.Chosen {
			caps = append(caps, c)
		}
	}
	if len(caps) == 0 {
		return ""
	}
	word := "cap"
	if len(caps) > 1 {
		word = "caps"
	}
	n := 0
	for _, p := range sw.row.Points {
		n = max(n, p.Seeds)
	}
	return fmt.Sprintf("undecided: %s %s could be within %s%% of cap %d but %d seeds do not show it, so %d is kept",
		word, joinInts(caps), numfmt.Num(100*r.tolerance()), sw.row.Chosen, n, sw.row.Chosen)
}

// priced reports whether sc prices a service.
func priced(sc *scenarios.Scenario) bool {
	for i := range sc.Services {
		if sc.Services[i].Priced() {
			return true
		}
	}
	return false
}

// headroomFor is the headroom a decision paces at: the one asked for, else
// the strategy's own when it paces, else DefaultHeadroom.
func headroomFor(asked float64, st *scenarios.Strategy) float64 {
	switch {
	case asked != 0:
		return asked
	case st != nil && st.TokenBucket && st.Headroom > 0:
		return st.Headroom
	}
	return DefaultHeadroom
}

// planOf returns the plan whose cap a decision sweeps: the plan of svc
// when the strategy's one per-service cap is swept (nil when svc has
// none), else that of the service a turn calls most.
func planOf(plans []Plan, svc string) *Plan {
	if svc == "" {
		return Dominant(plans)
	}
	for i := range plans {
		if plans[i].Service.Name == svc {
			return &plans[i]
		}
	}
	return nil
}

// withStrategy returns a copy of sc with its strategy of st's name
// replaced by st.
func withStrategy(sc *scenarios.Scenario, st scenarios.Strategy) *scenarios.Scenario {
	out := *sc
	out.Strategies = slices.Clone(sc.Strategies)
	for i := range out.Strategies {
		if out.Strategies[i].Name == st.Name {
			out.Strategies[i] = st
		}
	}
	return &out
}

// settle returns the trials of a sweep, run over their first seed only,
// whose other seeds are still needed: the rule's choice and the best cap
// over the points as they stand must rest on caps run over all n seeds,
// and a cap run over one seed may stay so only when that seed settles it.
// It does when the seed fails the rule whatever the others measure
// (cannotQualify), or when its p95 sits clearly beyond what could change
// the choice: a cap below the chosen one answers slower than the chosen
// cap's p95 (and its interval's high end, and the best's) by the
// tolerance and a margin; a cap above it answers no faster than the
// chosen cap's p95 ÷ (1 + tolerance), the margin taken off. The best cap
// (the lowest p95 of the points) has every seed too, as evidence quotes
// it; a one-seed cap within the tolerance of it may stay so, though its
// mean over every seed could come out a hair lower. The margin is 5 times
// the largest seed-to-seed spread of the p95 (relative standard deviation)
// among the caps run over all seeds, and at least minMargin: a first seed
// that far from the line is not brought back over it by two more.
func settle(ts []*trial, r Rule, n int) []*trial {
	if n < 2 {
		return nil
	}
	var pts []results.SweepPoint
	byCap := map[int]*trial{}
	for _, t := range ts {
		if len(t.runs) > 0 {
			pts = append(pts, t.point(n))
			byCap[t.cap] = t
		}
	}
	partial := func(t *trial) bool { return len(t.runs) == 1 }
	chosen, best, ok := r.Choose(pts)
	if ok && r.Objective != "" && r.Objective != scenarios.ObjectiveP95 {
		ok = false // the margins below read the p95: every seed of every cap that may qualify
	}
	var open []*trial
	if !ok {
		// Nothing qualifies as the points stand: every cap whose first
		// seed may yet qualify needs the others.
		for _, t := range ts {
			if partial(t) && !r.cannotQualify(t.seedPoints(), n) {
				open = append(open, t)
			}
		}
		return open
	}
	if c := byCap[chosen]; partial(c) {
		return []*trial{c}
	}
	if b := byCap[best]; partial(b) {
		// The decision's evidence names the best cap and draws its
		// interval: it rests on every seed, as the chosen cap does.
		return []*trial{b}
	}
	cp, bp := byCap[chosen].point(n), byCap[best].point(n)
	m := max(minMargin, 5*seedSpread(ts, n))
	tol := 1 + r.tolerance()
	for _, t := range ts {
		if !partial(t) || r.cannotQualify(t.seedPoints(), n) {
			continue
		}
		x := float64(t.point(n).P95Ms)
		var settled bool
		if t.cap < chosen {
			line := tol * max(float64(cp.P95Ms), float64(cp.P95HiMs), float64(bp.P95HiMs))
			settled = x*(1-m) > line*(1+m)
		} else {
			settled = x*(1-m)*tol >= float64(cp.P95Ms)
		}
		if !settled {
			open = append(open, t)
		}
	}
	return open
}

// minMargin is the least margin, as a fraction of the p95, by which a
// cap's first seed must clear what could change the choice for its other
// seeds to be left out (settle).
const minMargin = 0.02

// chainProgress returns a progress func that reports to both a (nil: none)
// and b.
func chainProgress(a, b func(string, time.Duration, time.Duration)) func(string, time.Duration, time.Duration) {
	if a == nil {
		return b
	}
	return func(strategy string, done, total time.Duration) {
		a(strategy, done, total)
		b(strategy, done, total)
	}
}

// unboundedStrategy names the scenario's first strategy with no cap, no
// pacing and no fan-out limit: the contrast a decision is set against.
func unboundedStrategy(sc *scenarios.Scenario) string {
	for _, st := range sc.Strategies {
		if st.MaxInFlight == 0 && len(st.MaxInFlightPerService) == 0 && !st.TokenBucket && st.FanOut == 0 {
			return st.Name
		}
	}
	return ""
}

// paces returns, per service with a request or token limit, the rates a
// client-side token bucket at the headroom uses: the tighter of rps and rpm
// for requests, tpm for tokens, both scaled.
func paces(sc *scenarios.Scenario, headroom float64) map[string]results.Pace {
	out := map[string]results.Pace{}
	for _, s := range sc.Services {
		var p results.Pace
		rpm := s.RequestsPerMinute
		if s.RequestsPerSecond > 0 && (rpm == 0 || s.RequestsPerSecond*60 < rpm) {
			rpm = s.RequestsPerSecond * 60
		}
		p.RequestsPerMinute = rpm * headroom
		p.TokensPerMinute = s.TokensPerMinute * headroom
		if p != (results.Pace{}) {
			p.PerSecond = PerSecond(&s)
			out[s.Name] = p
		}
	}
	return out
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

func joinList(s []string) string { return strings.Join(s, ", ") }

// InputError marks an error caused by the input (an unknown strategy, an
// option the scenario cannot take), which the command line reports as
// invalid input. Err is the error it marks, whose message it carries.
type InputError struct{ Err error }

func (e InputError) Error() string { return e.Err.Error() }
func (e InputError) Unwrap() error { return e.Err }

// Arithmetic is Decide without the sweep: the plans at the headroom
// Decide would use, and the workload's demand against them (unless
// o.NoLoad). Its Decision is nil.
func Arithmetic(ctx context.Context, sc *scenarios.Scenario, o Options) (*Result, error) {
	name := o.Strategy
	if name == "" {
		name = sim.SweepStrategy(sc)
	}
	d := &Result{}
	d.Plans, d.Unplanned = PlanServices(sc, headroomFor(o.Headroom, sc.Strategy(name)))
	d.Plan = Dominant(d.Plans)
	var err error
	d.Load, err = measureLoad(ctx, sc, o, d.Plans)
	return d, err
}
