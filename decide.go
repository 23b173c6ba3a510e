package main

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

// DefaultDecisionSeeds is how many seeds each cap of the deciding sweep runs
// with unless --seeds says otherwise: enough for an interval, few enough
// that `run` stays quick.
const DefaultDecisionSeeds = 3

// maxExtensions bounds the rounds that grow a sweep whose choice sits at an
// edge of its range.
const maxExtensions = 6

// decideOptions are the settings of the one computation of what to set;
// `run`, `sweep` and `recommend` fill them from the same flags with the
// same defaults, so that all three print the same decision.
type decideOptions struct {
	// Strategy names the strategy to tune ("": the one sim.SweepStrategy picks).
	Strategy string
	// Headroom is the fraction of the limits to pace at (0: the strategy's
	// own when it paces, else reports.DefaultHeadroom).
	Headroom float64
	// Rule chooses the cap.
	Rule reports.Rule
	// Seeds (0: DefaultDecisionSeeds), Seed (nil: the scenario's) and
	// Duration (0: the scenario's) shape each simulated run.
	Seeds    int
	Seed     *uint64
	Duration time.Duration
	// Caps, when set, are the caps to start from (default: around the
	// arithmetic's cap).
	Caps []int
}

// decided is a decision with what was computed on the way.
type decided struct {
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

// decide is the one function that says what to set: the arithmetic at the
// headroom, the workload's demand, then a sweep of the tuned strategy's
// cap over several seeds around the arithmetic's cap, extended while the
// choice sits at an edge, the cap chosen by the rule, and the unbounded
// strategy under the same seeds for contrast. A scenario whose services
// have no limits to plan from gets a decision from the sweep alone.
func decide(ctx context.Context, sc *scenarios.Scenario, o decideOptions) (*decided, error) {
	name := o.Strategy
	if name == "" {
		name = sim.SweepStrategy(sc)
	}
	base := sc.Strategy(name)
	if base == nil {
		_, err := (&sim.Options{Strategies: []string{name}}).Apply(sc)
		return nil, codedError{err, exitInvalid}
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
		seeds = DefaultDecisionSeeds
	}
	opts := sim.Options{Seed: o.Seed, Duration: o.Duration, Seeds: seeds}
	applied, err := opts.Apply(sc)
	if err != nil {
		return nil, codedError{err, exitInvalid}
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

	res := &decided{Tuned: tuned}
	res.Plans, res.Unplanned = planServices(sc, headroom)
	res.Plan = dominant(res.Plans)
	if svc != "" {
		res.Plan = nil
		for i := range res.Plans {
			if res.Plans[i].Service.Name == svc {
				res.Plan = &res.Plans[i]
			}
		}
	}
	if res.Load, err = checkLoad(ctx, sc, sim.Options{Seed: o.Seed, Duration: o.Duration}, res.Plans); err != nil {
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
		Headroom: headroom, Pace: paces(sc, headroom), Retry: retryText(tuned.Retry),
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

// retryText says a retry policy in words.
func retryText(r scenarios.Retry) string {
	if r.Attempts <= 1 && r.Backoff == scenarios.BackoffNone && r.Base == 0 {
		return "none (one attempt)"
	}
	var parts []string
	switch {
	case r.Backoff == scenarios.BackoffNone:
		parts = append(parts, "at once")
	case r.Cap > 0:
		parts = append(parts, fmt.Sprintf("%s from %s to %s", r.Backoff, shortDuration(r.Base), shortDuration(r.Cap)))
	default:
		parts = append(parts, fmt.Sprintf("%s from %s", r.Backoff, shortDuration(r.Base)))
	}
	if r.Attempts > 0 {
		parts = append(parts, fmt.Sprintf("%d attempts", r.Attempts))
	}
	if r.HonorRetryAfter {
		parts = append(parts, "honouring Retry-After")
	} else {
		parts = append(parts, "ignoring Retry-After")
	}
	return strings.Join(parts, ", ")
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

// shortDuration writes a duration without trailing zero units: 1m, not
// 1m0s; 1h30m, not 1h30m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
