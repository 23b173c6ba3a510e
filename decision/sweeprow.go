package decision

import (
	"fmt"
	"slices"
	"strings"

	"github.com/simbench/simbench/internal/numfmt"
	"github.com/simbench/simbench/results"
)

// NewSweepRow chooses the cap by the rule and finds the knee of a load's
// points.
func NewSweepRow(load string, points []results.SweepPoint, rule Rule) results.SweepRow {
	r := results.SweepRow{Load: load, Points: points}
	if c, _, ok := rule.Choose(points); ok {
		r.Chosen = c
	}
	if k, ok := Knee(points); ok {
		r.Knee = k
	}
	return r
}

// CapsAround returns the caps a verifying sweep tries: from a quarter to
// twice the computed cap c, at least 1, without repeats.
func CapsAround(c int) []int {
	var caps []int
	for _, f := range []float64{0.25, 0.5, 0.75, 1, 1.25, 1.5, 2} {
		n := max(1, int(float64(c)*f+0.5))
		if !slices.Contains(caps, n) {
			caps = append(caps, n)
		}
	}
	return caps
}

// Verdict compares the plan's cap with the one a sweep chose and says, in
// a sentence, whether they agree and why not when they do not: a workload
// that offers more than the limits sustain, the token limit binding, 429s
// the mean hides (bursts, retries), a workload that never fills the limit,
// or the latency tail. chosen is 0 when no cap of the sweep qualified; load
// is the workload's check against the limits, nil when not measured.
func Verdict(plan *Plan, points []results.SweepPoint, chosen int, maxShare float64, load *LoadCheck) string {
	computed, name := plan.MaxInFlight, plan.Service.Name
	overloaded := load != nil && !load.Fits()
	switch chosen {
	case 0:
		if overloaded {
			return fmt.Sprintf("the sweep found no cap with 429s at or below %.2f%% that answered 95%% of turns: the workload offers %s× what the limits sustain, so turns queue until they time out or fail under every cap — lighten the load or raise the limit", maxShare*100, numfmt.Num(load.Ratio))
		}
		return fmt.Sprintf("the sweep found no cap with 429s at or below %.2f%% that answered 95%% of turns: the arithmetic's %d is not enough on its own — pace with a token bucket at headroom %.2f", maxShare*100, computed, plan.Service.Headroom)
	case computed:
		return fmt.Sprintf("arithmetic and simulation agree: %d in flight for %s", chosen, name)
	}
	at := func(cp int) *results.SweepPoint {
		for i := range points {
			if points[i].Cap == cp {
				return &points[i]
			}
		}
		return nil
	}
	var why []string
	if plan.BindingLimit == LimitTPM {
		why = append(why, "the token limit binds, so the request arithmetic overstates what fits")
	}
	if p := at(computed); p != nil && p.RateLimitedShare > 0 {
		why = append(why, fmt.Sprintf("at %d the service still answered %.2f%% of attempts with 429 (bursts and retries the mean hides)", computed, p.RateLimitedShare*100))
	}
	switch {
	case chosen > computed && overloaded:
		why = append(why, fmt.Sprintf("the workload offers %s turns/min, %s× the %s the computed cap's headroom sustains, so turns queue at any cap and a larger one queues them less by spending the headroom kept for retries (the strategy's own pacing keeps the 429s away)",
			numfmt.Num(load.OfferedPerMinute), numfmt.Num(load.Ratio), numfmt.Num(load.SustainedPerMinute)))
	case chosen > computed:
		why = append(why, "the workload's bursts queue at the computed cap while the limit has room, so a larger cap only cuts queueing (and the headroom the arithmetic keeps for retries goes unused)")
	default:
		if p, q := at(chosen), at(computed); p != nil && q != nil && q.P95Ms > p.P95Ms {
			why = append(why, fmt.Sprintf("the latency tail: p95 rises from %s ms at %d to %s ms at %d", numfmt.AnswerMillis(float64(p.P95Ms)), chosen, numfmt.AnswerMillis(float64(q.P95Ms)), computed))
		}
	}
	if len(why) == 0 {
		why = append(why, "the p95 time to answer is lowest there")
	}
	return fmt.Sprintf("arithmetic says %d, the simulation %d for %s: %s", computed, chosen, name, strings.Join(why, "; "))
}
