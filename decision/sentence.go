package decision

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/simbench/simbench/internal/numfmt"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
)

// decisionSentence says the decision in one line: what to set, what it gives, and
// what the unbounded strategy gives for contrast.
func decisionSentence(d *results.Decision, in input) string {
	if d.Evidence.Chosen == 0 {
		why := fmt.Sprintf("no cap of %s kept 429s at or below %s%% and answered %s%% of turns", d.Strategy, numfmt.Num(100*in.Rule.MaxShare), numfmt.Num(100*MinAnsweredShare))
		if in.Load != nil && !in.Load.Fits() {
			return why + fmt.Sprintf(": the workload offers %s× what the limits sustain — lighten the load or raise the limit", numfmt.Num(in.Load.Ratio))
		}
		return why + ": pace with a token bucket at a lower headroom, or lighten the load"
	}
	pace := ""
	if p, ok := d.Pace[d.Service]; ok && (p.RequestsPerMinute > 0 || p.TokensPerMinute > 0) {
		pace = "pace " + d.Service + " at " + numfmt.Rates(p.RequestsPerMinute, p.TokensPerMinute, p.PerSecond)
	}
	set := fmt.Sprintf("with strategy %s, set %s = %d", d.Strategy, d.Knob, d.Evidence.Chosen)
	if others := otherCaps(d); others != "" {
		set += " (the cap that binds; " + others + ")"
	}
	if pace != "" {
		set += " and " + pace
	}
	if d.Evidence.CapFlat && pace != "" {
		set = fmt.Sprintf("%s, with strategy %s and %s = %d: caps %s answer within %s%% of each other, so the pace, not the cap, sets the figures",
			pace, d.Strategy, d.Knob, d.Evidence.Chosen, capRange(d.Evidence.Caps), numfmt.Num(100*in.Rule.tolerance()))
	}
	e := d.Expected
	p95 := secondsText(float64(e.P95Ms))
	if len(d.Evidence.Seeds) > 1 && e.P95HiMs.Answered() {
		p95 += " ±" + secondsText(float64(e.P95HiMs-e.P95LoMs)/2)
	}
	s := fmt.Sprintf("%s: p95 answer %s, %s answered, %s", set, p95, percent(e.AnsweredShare), limitedText(e.RateLimitedShare))
	if in.Priced {
		s += costText(d)
	}
	if o := in.Rule.Objective; o != "" && o != scenarios.ObjectiveP95 {
		s += "; the scenario's objective: " + ObjectiveText(o)
	}
	if b := d.Baseline; b != nil && b.Stopped != nil {
		s += " (" + stopText(b.Strategy, b.AnsweredShare, b.Stopped) + ")"
	} else if b != nil {
		s += fmt.Sprintf(" (%s answers %s", b.Strategy, percent(b.AnsweredShare))
		if b.AnsweredShare >= MinAnsweredShare && b.P95Ms.Answered() {
			s += ", p95 " + secondsText(float64(b.P95Ms))
		}
		s += ")"
	}
	if in.Load != nil {
		s += overText(*in.Load)
	}
	if in.Undecided != "" {
		s += "; " + in.Undecided
	}
	return s
}

// overText says, when the workload offers more turns than even the full
// limit sustains, that every turn is answered only because turns wait:
// "; the workload offers 1.78× what even the full limit sustains, so turns
// queue: the limit carries about 45 of the 80 sessions" ("" when it fits
// the full limit).
func overText(l LoadCheck) string {
	if l.FullPerMinute <= 0 || l.OfferedPerMinute <= l.FullPerMinute {
		return ""
	}
	over := l.OfferedPerMinute / l.FullPerMinute
	carries := fmt.Sprintf("about %s turns/s of the %s offered", numfmt.Num(l.FullPerMinute/60), numfmt.Num(l.OfferedPerMinute/60))
	if l.Sessions > 0 {
		carries = fmt.Sprintf("about %d of the %d sessions", int(math.Floor(float64(l.Sessions)/over+floorSlack)), l.Sessions)
	}
	return fmt.Sprintf("; the workload offers %s× what even the full limit of %s sustains, so turns queue: the limit carries %s", numfmt.Num(over), l.LimitedBy, carries)
}

// costText says what the chosen configuration costs per answered task
// and, when another that meets the rule costs less, which and how much
// (a phrase starting ", "; "" when the choice completed no task).
func costText(d *results.Decision) string {
	e := &d.Expected
	if e.CostPerAnsweredTaskUSD <= 0 {
		return ""
	}
	s := ", " + dollarsText(e.CostPerAnsweredTaskUSD) + " per answered task"
	if c := d.Evidence.Cheapest; c != nil && c.Strategy != e.Strategy && c.CostPerAnsweredTaskUSD < e.CostPerAnsweredTaskUSD {
		s += fmt.Sprintf("; %s as written also meets the rule at %s per answered task, p95 answer %s", c.Strategy, dollarsText(c.CostPerAnsweredTaskUSD), secondsText(float64(c.P95Ms)))
	}
	return s
}

// dollarsText shows dollars: cents from a dollar up, four decimals below
// ("$0.0183").
func dollarsText(v float64) string {
	if v >= 1 {
		return "$" + numfmt.Fixed(v, 2, false)
	}
	return "$" + numfmt.Fixed(v, 4, false)
}

// secondsText shows milliseconds as seconds to one decimal ("3.4 s"), or
// as milliseconds below one second.
func secondsText(msv float64) string {
	if msv < 1000 {
		return numfmt.Fixed(msv, 0, false) + " ms"
	}
	return numfmt.Fixed(msv/1000, 1, false) + " s"
}

// percent shows a share as a whole percentage, with one decimal below 10%
// and above 90% where a whole number would round to 0 or 100.
func percent(share float64) string {
	v := 100 * share
	switch {
	case v == 0 || v == 100:
		return numfmt.Fixed(v, 0, false) + "%"
	case v < 10 || v > 90:
		return numfmt.Fixed(v, 1, false) + "%"
	}
	return numfmt.Fixed(v, 0, false) + "%"
}

// limitedText shows a 429 share: "0 429s" when none, else its percentage.
func limitedText(share float64) string {
	if share == 0 {
		return "0 429s"
	}
	return numfmt.Fixed(100*share, 2, false) + "% 429s"
}

// otherCaps names the strategy's per-service caps other than the one
// swept, as they stay ("crm stays at 1"); "" when there are none.
func otherCaps(d *results.Decision) string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(d.MaxInFlightPerService)) {
		if d.Knob != "max_in_flight_per_service."+name {
			out = append(out, fmt.Sprintf("%s stays at %d", name, d.MaxInFlightPerService[name]))
		}
	}
	if len(out) == 0 {
		return ""
	}
	return strings.Join(out, ", ")
}

// capRange shows the caps swept, "1 and 2" or "16–130".
func capRange(caps []int) string {
	switch len(caps) {
	case 0:
		return ""
	case 1:
		return fmt.Sprint(caps[0])
	case 2:
		return fmt.Sprintf("%d and %d", caps[0], caps[1])
	}
	return fmt.Sprintf("%d–%d", caps[0], caps[len(caps)-1])
}
