package decision

import (
	"fmt"
	"maps"
	"slices"

	"github.com/simbench/simbench/results"
)

// input is what build turns into a decision: the strategy tuned,
// the sweep that verified it and the arithmetic it started from.
type input struct {
	// Strategy names the strategy tuned; Service the service whose cap was
	// swept (PerService) or whose limits bind (global cap).
	Strategy   string
	Service    string
	PerService bool
	// MaxInFlight and MaxInFlightPerService are the strategy's caps as
	// written; the swept one is replaced by the chosen cap.
	MaxInFlight           int
	MaxInFlightPerService map[string]int
	// Headroom and Pace are the client-side pacing the sweep ran with.
	Headroom float64
	Pace     map[string]results.Pace
	// Retry is the strategy's retry policy in words.
	Retry string
	// Plan is the binding service's arithmetic (nil when none could be made).
	Plan *Plan
	// Row is the sweep over every cap simulated; Best the cap with the
	// lowest p95; Extended the reasons the range was extended, a round a line.
	Row      results.SweepRow
	Best     int
	Extended []string
	// Rule chose Row.Chosen.
	Rule Rule
	// Seeds and DurationS describe each simulated run.
	Seeds     []uint64
	DurationS float64
	// Baseline is the unbounded strategy under the same seeds (nil: none).
	Baseline *results.Outcome
	// Load is the workload's demand against the limits (nil: not measured).
	Load *LoadCheck
	// Priced says whether the scenario prices a service: the decision
	// then names the cheapest configuration that meets the rule.
	Priced bool
	// Strategies are the scenario's strategies as written under the same
	// seeds; Paces the headrooms tried at the chosen cap; Search how the
	// strategy and the pace were chosen; CapFlat whether the sweep is flat.
	Strategies []results.Outcome
	Paces      []results.Outcome
	Search     []string
	CapFlat    bool
	// Undecided says what the rule's test could still not decide ("":
	// nothing), for the sentence.
	Undecided string
}

// outcomeOf converts a sweep point into the decision's figures.
func outcomeOf(strategy string, p results.SweepPoint) results.Outcome {
	o := results.Outcome{Strategy: strategy, P50Ms: p.P50Ms, P95Ms: p.P95Ms, P95LoMs: p.P95Ms, P95HiMs: p.P95Ms,
		AnsweredShare: p.AnsweredShare, RateLimitedShare: p.RateLimitedShare, CostPerAnsweredTaskUSD: p.CostPerAnsweredTaskUSD}
	if p.Seeds >= 2 {
		o.P95LoMs, o.P95HiMs = p.P95LoMs, p.P95HiMs
	}
	return o
}

// build makes the decision from a verified sweep: the caps to set (the
// strategy's, with the swept one at the chosen cap), the pace, the retry
// policy, the expected figures at the chosen cap, and the sentence that
// says it all. With no cap chosen the sentence says what to change instead.
func build(in input) results.Decision {
	d := results.Decision{
		Strategy: in.Strategy, Service: in.Service, Knob: "max_in_flight",
		MaxInFlight: in.MaxInFlight, MaxInFlightPerService: maps.Clone(in.MaxInFlightPerService),
		Headroom: in.Headroom, Pace: in.Pace, Retry: in.Retry, Baseline: in.Baseline,
		Evidence: results.Evidence{
			Chosen: in.Row.Chosen, Best: in.Best, Knee: in.Row.Knee, Extended: in.Extended,
			Rule: in.Rule.String(), MaxShare: in.Rule.MaxShare, Tolerance: in.Rule.tolerance(),
			Seeds: in.Seeds, DurationS: in.DurationS,
			Strategies: in.Strategies, Paces: in.Paces, Search: in.Search, CapFlat: in.CapFlat,
		},
	}
	if in.PerService {
		d.Knob = "max_in_flight_per_service." + in.Service
	}
	for _, p := range in.Row.Points {
		d.Evidence.Caps = append(d.Evidence.Caps, p.Cap)
	}
	d.Evidence.Points = slices.Clone(in.Row.Points)
	slices.Sort(d.Evidence.Caps)
	if in.Plan != nil {
		d.Evidence.ArithmeticCap = in.Plan.MaxInFlight
		d.Evidence.Verdict = Verdict(in.Plan, in.Row.Points, in.Row.Chosen, in.Rule.MaxShare, in.Load)
	}
	if in.Load != nil {
		d.Evidence.Load = in.Load.Lines()
	}
	if in.Row.Chosen > 0 {
		if in.PerService {
			if d.MaxInFlightPerService == nil {
				d.MaxInFlightPerService = map[string]int{}
			}
			d.MaxInFlightPerService[in.Service] = in.Row.Chosen
		} else {
			d.MaxInFlight = in.Row.Chosen
		}
		for _, p := range in.Row.Points {
			if p.Cap == in.Row.Chosen {
				d.Expected = outcomeOf(fmt.Sprintf("%s@%d", in.Strategy, p.Cap), p)
				d.Expected.Cap, d.Expected.Headroom, d.Expected.MeetsRule = p.Cap, in.Headroom, true
			}
		}
	}
	if in.Priced {
		d.Evidence.Cheapest = cheapest(&d)
	}
	d.Sentence = decisionSentence(&d, in)
	return d
}

// cheapest returns the configuration of d with the lowest cost per
// answered task among those that meet the rule: the chosen one (first,
// so that it wins a tie) and the strategies as written; nil when none
// that meets it completed a task.
func cheapest(d *results.Decision) *results.Outcome {
	var c []results.Outcome
	if d.Evidence.Chosen > 0 {
		c = append(c, d.Expected)
	}
	for _, o := range d.Evidence.Strategies {
		if o.MeetsRule {
			c = append(c, o)
		}
	}
	var best *results.Outcome
	for i := range c {
		if o := &c[i]; o.CostPerAnsweredTaskUSD > 0 && (best == nil || o.CostPerAnsweredTaskUSD < best.CostPerAnsweredTaskUSD) {
			best = o
		}
	}
	if best == nil {
		return nil
	}
	out := *best
	return &out
}
