package decision

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/simbench/simbench/results"
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
	// Progress, when set, follows the sweep's runs (sim.Options.Progress).
	Progress func(strategy string, done, total time.Duration)
}

// Result is a decision with what was computed on the way.
type Result struct {
	// Decision is what to set (nil from Arithmetic).
	Decision  *results.Decision
	Row       results.SweepRow
	Plans     []Plan
	Unplanned map[string]error
	Plan      *Plan // the plan of the decision's service (nil: none)
	Load      *LoadCheck
	// Tuned is the strategy as verified: the scenario's, paced at the
	// headroom, with the chosen cap.
	Tuned scenarios.Strategy
}

// Decide is the one function that says what to set: the arithmetic at the
// headroom, the workload's demand, then a sweep of the tuned strategy's
// cap over several seeds around the arithmetic's cap, extended while the
// choice sits at an edge, the cap chosen by the rule, and the unbounded
// strategy under the same seeds for contrast. A scenario whose services
// have no limits to plan from gets a decision from the sweep alone. When
// ctx ends during the sweep, Decide returns, with ctx.Err(), a Result
// whose Row holds the points measured and whose Decision is nil (nil when
// no point was).
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
	headroom := headroomFor(o.Headroom, base)
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
	svc := sim.SweepService(&tuned)
	res := &Result{Tuned: tuned}
	res.Plans, res.Unplanned = PlanServices(sc, headroom)
	res.Plan = planOf(res.Plans, svc)
	if res.Load, err = measureLoad(ctx, sc, sim.Options{Seed: o.Seed, Duration: o.Duration}, res.Plans); err != nil {
		return nil, err
	}
	caps := o.Caps
	if len(caps) == 0 {
		caps = []int{1, 2, 4, 8, 16, 32, 64}
		if res.Plan != nil {
			caps = CapsAround(res.Plan.MaxInFlight)
		}
	}
	swOpts := opts
	swOpts.Progress = o.Progress
	sw, err := sweepExtending(ctx, withStrategy(sc, tuned), name, caps, o.Rule, swOpts)
	res.Row = sw.row
	if err != nil {
		if ctx.Err() != nil && len(res.Row.Points) > 0 {
			return res, err // interrupted: the points measured, no decision
		}
		return nil, err
	}

	service := svc
	if service == "" && res.Plan != nil {
		service = res.Plan.Service.Name
	}
	in := input{
		Strategy: name, Service: service, PerService: svc != "",
		MaxInFlight: tuned.MaxInFlight, MaxInFlightPerService: tuned.MaxInFlightPerService,
		Headroom: headroom, Pace: paces(sc, headroom), Retry: sim.RetryText(&tuned),
		Plan: res.Plan, Row: sw.row, Best: sw.best, Extended: sw.extended, Rule: o.Rule,
		Seeds: sim.Seeds(applied.Seed, seeds), DurationS: applied.Duration.Seconds(), Load: res.Load,
	}
	if in.Baseline, err = baseline(ctx, sc, name, opts); err != nil {
		if ctx.Err() != nil {
			return res, err // interrupted: the sweep's points, no decision
		}
		return nil, err
	}
	d := build(in)
	res.Decision = &d
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

// extendedSweep is a sweep grown while its choice sat at an edge.
type extendedSweep struct {
	row      results.SweepRow
	best     int      // the cap with the lowest p95 (0: none qualified)
	extended []string // why the range grew, a round a line
}

// sweepExtending sweeps strategy name of sc over caps, then over the caps
// Extend adds while the rule's choice sits at an edge of the range, for at
// most maxExtensions rounds.
func sweepExtending(ctx context.Context, sc *scenarios.Scenario, name string, caps []int, rule Rule, opts sim.Options) (extendedSweep, error) {
	var out extendedSweep
	var points []results.SweepPoint
	for round := 0; ; round++ {
		rows, err := sim.Sweep(ctx, sc, name, caps, nil, opts)
		if len(rows) > 0 {
			for i, s := range rows[0].Results {
				points = append(points, SweepPointOf(rows[0].Caps[i], s))
			}
		}
		slices.SortFunc(points, func(a, b results.SweepPoint) int { return a.Cap - b.Cap })
		out.row = NewSweepRow("as written", points, rule)
		if err != nil {
			// Interrupted: out.row holds the points measured.
			return out, err
		}
		_, out.best, _ = rule.Choose(points)
		more, why := Extend(points, out.row.Chosen)
		if len(more) == 0 || round == maxExtensions {
			return out, nil
		}
		out.extended = append(out.extended, fmt.Sprintf("%s, so caps %s were added", why, joinInts(more)))
		caps = more
	}
}

// baseline runs the scenario's unbounded strategy under opts' seeds for
// contrast with the tuned one (nil when it has none, or tunes it).
func baseline(ctx context.Context, sc *scenarios.Scenario, tuned string, opts sim.Options) (*results.Outcome, error) {
	ub := unboundedStrategy(sc)
	if ub == "" || ub == tuned {
		return nil, nil
	}
	opts.Strategies = []string{ub}
	r, err := sim.RunSeeds(ctx, sc, opts)
	if err != nil {
		return nil, err
	}
	b := outcomeOf(ub, SweepPointOf(0, r.Strategies[0]))
	return &b, nil
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
// Decide would use, and the workload's demand against them. Its Decision
// is nil.
func Arithmetic(ctx context.Context, sc *scenarios.Scenario, o Options) (*Result, error) {
	name := o.Strategy
	if name == "" {
		name = sim.SweepStrategy(sc)
	}
	d := &Result{}
	d.Plans, d.Unplanned = PlanServices(sc, headroomFor(o.Headroom, sc.Strategy(name)))
	d.Plan = Dominant(d.Plans)
	var err error
	d.Load, err = measureLoad(ctx, sc, sim.Options{Seed: o.Seed, Duration: o.Duration}, d.Plans)
	return d, err
}
