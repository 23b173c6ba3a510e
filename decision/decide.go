// Package decision says what to set: it runs the recommendation
// arithmetic, measures the workload's demand, sweeps the tuned strategy's
// cap over seeds around the arithmetic's cap (extending the range while the
// choice sits at an edge), chooses by reports.Rule and builds the
// sim.Decision that run, sweep, recommend and the reports all show. It
// orchestrates sim and reports; neither may import the other's way.
package decision

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/simbench/simbench/reports"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sim"
)

// DefaultSeeds is how many seeds each cap of the deciding sweep runs
// with unless --seeds says otherwise: enough for an interval, few enough
// that `run` stays quick.
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
	// own when it paces, else reports.DefaultHeadroom).
	Headroom float64
	// Rule chooses the cap.
	Rule reports.Rule
	// Seeds (0: DefaultSeeds), Seed (nil: the scenario's) and
	// Duration (0: the scenario's) shape each simulated run.
	Seeds    int
	Seed     *uint64
	Duration time.Duration
	// Caps, when set, are the caps to start from (default: around the
	// arithmetic's cap).
	Caps []int
}

// Result is a decision with what was computed on the way.
type Result struct {
	Decision  sim.Decision
	Row       reports.SweepRow
	Plans     []reports.Plan
	Unplanned map[string]error
	Plan      *reports.Plan // the plan of the decision's service (nil: none)
	Load      *reports.LoadCheck
	// Tuned is the strategy as verified: the scenario's, paced at the
	// headroom, with the chosen cap.
	Tuned scenarios.Strategy
}

// Decide is the one function that says what to set: the arithmetic at the
// headroom, the workload's demand, then a sweep of the tuned strategy's
// cap over several seeds around the arithmetic's cap, extended while the
// choice sits at an edge, the cap chosen by the rule, and the unbounded
// strategy under the same seeds for contrast. A scenario whose services
// have no limits to plan from gets a decision from the sweep alone.
func Decide(ctx context.Context, sc *scenarios.Scenario, o Options) (*Result, error) {
	name := o.Strategy
	if name == "" {
		name = sim.SweepStrategy(sc)
	}
	base := sc.Strategy(name)
	if base == nil {
		_, err := (&sim.Options{Strategies: []string{name}}).Apply(sc)
		return nil, InputError{err}
	}
	headroom := o.Headroom
	if headroom == 0 {
		headroom = reports.DefaultHeadroom
		if base.TokenBucket && base.Headroom > 0 {
			headroom = base.Headroom
		}
	}
	seeds := o.Seeds
	if seeds == 0 {
		seeds = DefaultSeeds
	}
	opts := sim.Options{Seed: o.Seed, Duration: o.Duration, Seeds: seeds}
	applied, err := opts.Apply(sc)
	if err != nil {
		return nil, InputError{err}
	}

	// The strategy as it will be verified: paced at the headroom.
	tuned := *base
	tuned.TokenBucket, tuned.Headroom = true, headroom
	vsc := *sc
	vsc.Strategies = slices.Clone(sc.Strategies)
	for i := range vsc.Strategies {
		if vsc.Strategies[i].Name == name {
			vsc.Strategies[i] = tuned
		}
	}
	svc := sim.SweepService(&tuned)

	res := &Result{Tuned: tuned}
	res.Plans, res.Unplanned = PlanServices(sc, headroom)
	res.Plan = Dominant(res.Plans)
	if svc != "" {
		res.Plan = nil
		for i := range res.Plans {
			if res.Plans[i].Service.Name == svc {
				res.Plan = &res.Plans[i]
			}
		}
	}
	if res.Load, err = CheckLoad(ctx, sc, sim.Options{Seed: o.Seed, Duration: o.Duration}, res.Plans); err != nil {
		return nil, err
	}

	caps := o.Caps
	if len(caps) == 0 {
		caps = []int{1, 2, 4, 8, 16, 32, 64}
		if res.Plan != nil {
			caps = reports.CapsAround(res.Plan.MaxInFlight)
		}
	}
	var points []reports.SweepPoint
	var extended []string
	var row reports.SweepRow
	best := 0
	for round := 0; ; round++ {
		rows, err := sim.Sweep(ctx, &vsc, name, caps, nil, opts)
		if err != nil {
			return nil, err
		}
		for i, s := range rows[0].Results {
			points = append(points, reports.SweepPointOf(caps[i], s))
		}
		slices.SortFunc(points, func(a, b reports.SweepPoint) int { return a.Cap - b.Cap })
		row = reports.NewSweepRow("as written", points, o.Rule)
		_, best, _ = o.Rule.Choose(points)
		more, why := reports.Extend(points, row.Chosen)
		if len(more) == 0 || round == maxExtensions {
			break
		}
		extended = append(extended, fmt.Sprintf("%s, so caps %s were added", why, joinInts(more)))
		caps = more
	}
	res.Row = row

	service := svc
	if service == "" && res.Plan != nil {
		service = res.Plan.Service.Name
	}
	in := reports.DecisionInput{
		Strategy: name, Service: service, PerService: svc != "",
		MaxInFlight: tuned.MaxInFlight, MaxInFlightPerService: tuned.MaxInFlightPerService,
		Headroom: headroom, Pace: paces(sc, headroom), Retry: sim.RetryText(&tuned),
		Plan: res.Plan, Row: row, Best: best, Extended: extended, Rule: o.Rule,
		Seeds: sim.Seeds(applied.Seed, seeds), DurationS: applied.Duration.Seconds(), Load: res.Load,
	}
	if ub := unboundedStrategy(sc); ub != "" && ub != name {
		o := opts
		o.Strategies = []string{ub}
		r, err := sim.RunSeeds(ctx, sc, o)
		if err != nil {
			return nil, err
		}
		b := reports.OutcomeOf(ub, reports.SweepPointOf(0, r.Strategies[0]))
		in.Baseline = &b
	}
	res.Decision = reports.Decide(in)
	if res.Row.Chosen > 0 {
		if svc != "" {
			res.Tuned.MaxInFlightPerService = maps.Clone(tuned.MaxInFlightPerService)
			res.Tuned.MaxInFlightPerService[svc] = res.Row.Chosen
		} else {
			res.Tuned.MaxInFlight = res.Row.Chosen
		}
	}
	return res, nil
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
func paces(sc *scenarios.Scenario, headroom float64) map[string]sim.Pace {
	out := map[string]sim.Pace{}
	for _, s := range sc.Services {
		var p sim.Pace
		rpm := s.RequestsPerMinute
		if s.RequestsPerSecond > 0 && (rpm == 0 || s.RequestsPerSecond*60 < rpm) {
			rpm = s.RequestsPerSecond * 60
		}
		p.RequestsPerMinute = rpm * headroom
		p.TokensPerMinute = s.TokensPerMinute * headroom
		if p != (sim.Pace{}) {
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

// InputError marks an error caused by the input (an unknown strategy, an
// option the scenario cannot take), which the command line reports as
// invalid input.
type InputError struct{ Err error }

func (e InputError) Error() string { return e.Err.Error() }
func (e InputError) Unwrap() error { return e.Err }

// Arithmetic is Decide without the simulation: the plans at the headroom
// Decide would use, and the workload's demand against them.
func Arithmetic(ctx context.Context, sc *scenarios.Scenario, o Options) (*Result, error) {
	headroom := o.Headroom
	if headroom == 0 {
		headroom = reports.DefaultHeadroom
		name := o.Strategy
		if name == "" {
			name = sim.SweepStrategy(sc)
		}
		if st := sc.Strategy(name); st != nil && st.TokenBucket && st.Headroom > 0 {
			headroom = st.Headroom
		}
	}
	d := &Result{}
	d.Plans, d.Unplanned = PlanServices(sc, headroom)
	d.Plan = Dominant(d.Plans)
	var err error
	d.Load, err = CheckLoad(ctx, sc, sim.Options{Seed: o.Seed, Duration: o.Duration}, d.Plans)
	return d, err
}
