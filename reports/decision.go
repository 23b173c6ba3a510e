package reports

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/simbench/simbench/sim"
)

// DecisionInput is what Decide turns into a decision: the strategy tuned,
// the sweep that verified it and the arithmetic it started from.
type DecisionInput struct {
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
	Pace     map[string]sim.Pace
	// Retry is the strategy's retry policy in words.
	Retry string
	// Plan is the binding service's arithmetic (nil when none could be made).
	Plan *Plan
	// Row is the sweep over every cap simulated; Best the cap with the
	// lowest p95; Extended the reasons the range was extended, a round a line.
	Row      SweepRow
	Best     int
	Extended []string
	// Rule chose Row.Chosen.
	Rule Rule
	// Seeds and DurationS describe each simulated run.
	Seeds     []uint64
	DurationS float64
	// Baseline is the unbounded strategy under the same seeds (nil: none).
	Baseline *sim.Outcome
	// Load is the workload's demand against the limits (nil: not measured).
	Load *LoadCheck
}

// OutcomeOf converts a sweep point into the decision's figures.
func OutcomeOf(strategy string, p SweepPoint) sim.Outcome {
	o := sim.Outcome{Strategy: strategy, P50Ms: p.P50Ms, P95Ms: p.P95Ms, P95LoMs: p.P95Ms, P95HiMs: p.P95Ms,
		AnsweredShare: p.AnsweredShare, RateLimitedShare: p.RateLimitedShare}
	if p.Seeds >= 2 {
		o.P95LoMs, o.P95HiMs = p.P95LoMs, p.P95HiMs
	}
	return o
}

// Decide builds the decision from a verified sweep: the caps to set (the
// strategy's, with the swept one at the chosen cap), the pace, the retry
// policy, the expected figures at the chosen cap, and the sentence that
// says it all. With no cap chosen the sentence says what to change instead.
func Decide(in DecisionInput) sim.Decision {
	d := sim.Decision{
		Strategy: in.Strategy, Service: in.Service, Knob: "max_in_flight",
		MaxInFlight: in.MaxInFlight, MaxInFlightPerService: maps.Clone(in.MaxInFlightPerService),
		Headroom: in.Headroom, Pace: in.Pace, Retry: in.Retry, Baseline: in.Baseline,
		Evidence: sim.Evidence{
			Chosen: in.Row.Chosen, Best: in.Best, Knee: in.Row.Knee, Extended: in.Extended,
			Rule: in.Rule.String(), MaxShare: in.Rule.MaxShare, Tolerance: in.Rule.tolerance(),
			Seeds: in.Seeds, DurationS: in.DurationS,
		},
	}
	if in.PerService {
		d.Knob = "max_in_flight_per_service." + in.Service
	}
	for _, p := range in.Row.Points {
		d.Evidence.Caps = append(d.Evidence.Caps, p.Cap)
	}
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
				d.Expected = OutcomeOf(fmt.Sprintf("%s@%d", in.Strategy, p.Cap), p)
			}
		}
	}
	d.Sentence = decisionSentence(&d, in)
	return d
}

// decisionSentence says the decision in one line: what to set, what it gives, and
// what the unbounded strategy gives for contrast.
func decisionSentence(d *sim.Decision, in DecisionInput) string {
	if d.Evidence.Chosen == 0 {
		why := fmt.Sprintf("no cap of %s kept 429s at or below %s%% and answered %s%% of turns", d.Strategy, num(100*in.Rule.MaxShare), num(100*MinAnsweredShare))
		if in.Load != nil && !in.Load.Fits() {
			return why + fmt.Sprintf(": the workload offers %s× what the limits sustain — lighten the load or raise the limit", num(in.Load.Ratio))
		}
		return why + ": pace with a token bucket at a lower headroom, or lighten the load"
	}
	set := fmt.Sprintf("set %s = %d", d.Knob, d.Evidence.Chosen)
	if p, ok := d.Pace[d.Service]; ok && (p.RequestsPerMinute > 0 || p.TokensPerMinute > 0) {
		set += " and pace " + d.Service + " at " + paceText(p)
	}
	e := d.Expected
	p95 := secondsText(float64(e.P95Ms))
	if len(d.Evidence.Seeds) > 1 && e.P95HiMs.Answered() {
		p95 += " ±" + secondsText(float64(e.P95HiMs-e.P95LoMs)/2)
	}
	s := fmt.Sprintf("%s: p95 answer %s, %s answered, %s", set, p95, percent(e.AnsweredShare), limitedText(e.RateLimitedShare))
	if b := d.Baseline; b != nil {
		s += fmt.Sprintf(" (%s answers %s", b.Strategy, percent(b.AnsweredShare))
		if b.AnsweredShare >= MinAnsweredShare && b.P95Ms.Answered() {
			s += ", p95 " + secondsText(float64(b.P95Ms))
		}
		s += ")"
	}
	return s
}

// paceText shows a pace: "9,000 requests/min and 9,000,000 tokens/min".
func paceText(p sim.Pace) string {
	var parts []string
	if p.RequestsPerMinute > 0 {
		parts = append(parts, num(p.RequestsPerMinute)+" requests/min")
	}
	if p.TokensPerMinute > 0 {
		parts = append(parts, num(p.TokensPerMinute)+" tokens/min")
	}
	return strings.Join(parts, " and ")
}

// secondsText shows milliseconds as seconds to one decimal ("3.4 s"), or
// as milliseconds below one second.
func secondsText(msv float64) string {
	if msv < 1000 {
		return fixed(msv, 0, false) + " ms"
	}
	return fixed(msv/1000, 1, false) + " s"
}

// percent shows a share as a whole percentage, with one decimal below 10%
// and above 90% where a whole number would round to 0 or 100.
func percent(share float64) string {
	v := 100 * share
	switch {
	case v == 0 || v == 100:
		return fixed(v, 0, false) + "%"
	case v < 10 || v > 90:
		return fixed(v, 1, false) + "%"
	}
	return fixed(v, 0, false) + "%"
}

// limitedText shows a 429 share: "0 429s" when none, else its percentage.
func limitedText(share float64) string {
	if share == 0 {
		return "0 429s"
	}
	return fixed(100*share, 2, false) + "% 429s"
}

// DecisionLines shows a decision for terminals: the sentence, then the
// settings and the evidence, a fact a line.
func DecisionLines(d *sim.Decision) []string {
	lines := []string{d.Sentence}
	if d.Evidence.Chosen > 0 {
		lines = append(lines, fmt.Sprintf("  settings: strategy %s with %s", d.Strategy, settingsText(d)))
	}
	ev := d.Evidence
	seeds := fmt.Sprintf("%d seed", len(ev.Seeds))
	if len(ev.Seeds) != 1 {
		seeds += "s"
	}
	caps := make([]string, len(ev.Caps))
	for i, c := range ev.Caps {
		caps[i] = fmt.Sprint(c)
	}
	lines = append(lines, fmt.Sprintf("  evidence: arithmetic %d, caps %s simulated over %s of %s virtual s each", ev.ArithmeticCap, strings.Join(caps, ", "), seeds, num(ev.DurationS)))
	for _, x := range ev.Extended {
		lines = append(lines, "  range extended: "+x)
	}
	lines = append(lines, "  rule: "+ev.Rule)
	return lines
}

// settingsText lists what to set: caps, pace and retries.
func settingsText(d *sim.Decision) string {
	var parts []string
	if d.MaxInFlight > 0 {
		parts = append(parts, fmt.Sprintf("max_in_flight = %d", d.MaxInFlight))
	}
	for _, name := range slices.Sorted(maps.Keys(d.MaxInFlightPerService)) {
		parts = append(parts, fmt.Sprintf("max_in_flight_per_service.%s = %d", name, d.MaxInFlightPerService[name]))
	}
	parts = append(parts, fmt.Sprintf("token buckets at headroom %s", num(d.Headroom)))
	for _, name := range slices.Sorted(maps.Keys(d.Pace)) {
		if t := paceText(d.Pace[name]); t != "" {
			parts = append(parts, name+" "+t)
		}
	}
	if d.Retry != "" {
		parts = append(parts, "retries "+d.Retry)
	}
	return strings.Join(parts, "; ")
}
