package decision

import (
	"fmt"
	"math"
	"strings"

	"github.com/simbench/simbench/internal/numfmt"
	"github.com/simbench/simbench/results"
)

// LoadCheck sets the turn rate a workload offers against the rate its
// services' limits sustain, so a recommendation can say when no cap fits.
type LoadCheck struct {
	// OfferedPerMinute is the turns per minute the workload offers when no
	// limit holds it back (sim.Demand × 60).
	OfferedPerMinute float64 `json:"offered_turns_per_minute"`
	// SustainedPerMinute is the turns per minute the plans sustain at their
	// headroom, FullPerMinute at the full limit; LimitedBy names the
	// service that binds.
	SustainedPerMinute float64 `json:"sustained_turns_per_minute"`
	FullPerMinute      float64 `json:"full_limit_turns_per_minute"`
	LimitedBy          string  `json:"limited_by"`
	// Ratio is OfferedPerMinute ÷ SustainedPerMinute: above 1, turns queue
	// or fail under any cap.
	Ratio float64 `json:"ratio"`
	// Sessions is the closed workload's session count (0: open workload);
	// FitSessions is how many sessions the sustained rate carries.
	Sessions    int `json:"sessions,omitempty"`
	FitSessions int `json:"fit_sessions,omitempty"`
	// FitArrivalPerS is the open workload's arrival rate, in turns per
	// second, that the sustained rate carries.
	FitArrivalPerS float64 `json:"fit_arrival_rate_per_s,omitempty"`
}

// CheckLoad compares offeredPerS, the turns per second a workload offers
// (sim.Demand), with what the plans sustain together. sessions is the
// closed workload's session count, 0 for an open one. ok is false without
// plans or without demand.
func CheckLoad(offeredPerS float64, sessions int, plans []Plan) (l LoadCheck, ok bool) {
	if len(plans) == 0 || offeredPerS <= 0 {
		return LoadCheck{}, false
	}
	l = LoadCheck{OfferedPerMinute: offeredPerS * 60, Sessions: sessions}
	for i, p := range plans {
		full := p.BindingRPM / p.Service.CallsPerTurn
		if i == 0 || p.Turns < l.SustainedPerMinute {
			l.SustainedPerMinute, l.FullPerMinute, l.LimitedBy = p.Turns, full, p.Service.Name
		}
	}
	l.Ratio = l.OfferedPerMinute / l.SustainedPerMinute
	if sessions > 0 {
		l.FitSessions = int(math.Floor(float64(sessions)/l.Ratio + floorSlack))
	} else {
		l.FitArrivalPerS = l.SustainedPerMinute / 60
	}
	return l, true
}

// Fits reports whether the workload offers no more than the limits sustain
// at the plans' headroom.
func (l LoadCheck) Fits() bool { return l.Ratio <= 1 }

// Lines shows the check line by line, like Plan.Lines.
func (l LoadCheck) Lines() []string {
	lines := []string{
		fmt.Sprintf("the workload offers %s turns/min (measured with every limit lifted and each turn's calls issued at once)", numfmt.Num(l.OfferedPerMinute)),
		fmt.Sprintf("the limits sustain %s turns/min at the headroom (%s at the full limit of %s): offered ÷ sustained = %s",
			numfmt.Num(l.SustainedPerMinute), numfmt.Num(l.FullPerMinute), l.LimitedBy, numfmt.Num(l.Ratio)),
	}
	if l.Fits() {
		return append(lines, "the load fits: a cap shapes bursts; it does not have to hold turns back")
	}
	fit := fmt.Sprintf("about %s turns/s", numfmt.Num(l.FitArrivalPerS))
	if l.Sessions > 0 {
		fit = fmt.Sprintf("about %d of the %d sessions", l.FitSessions, l.Sessions)
	}
	over := "it eats into the headroom kept for retries; at the computed cap turns queue, and a larger cap spends the headroom instead"
	if l.OfferedPerMinute > l.FullPerMinute {
		over = "it exceeds even the full limit; turns queue under any cap, or fail without one"
	}
	advice := fmt.Sprintf("to fit, raise the limit or serve %s", fit)
	if l.Sessions > 0 && l.FitSessions == 0 {
		// Not even one session fits: fewer sessions cannot be the answer.
		advice = fmt.Sprintf("to fit, raise the limit or slow each session down: even one session offers %s× what the limits sustain", numfmt.Num(l.Ratio/float64(l.Sessions)))
	}
	return append(lines, fmt.Sprintf("the load does not fit — %s", over), advice)
}

// Annotate adds the check to the recommendation of the service that binds
// the turn rate: the offered rate, and the check's lines after its
// arithmetic.
func (l LoadCheck) Annotate(recs map[string]results.Recommendation) {
	rec, ok := recs[l.LimitedBy]
	if !ok {
		return
	}
	rec.OfferedTurnsPerMinute = l.OfferedPerMinute
	rec.Reason += "\n" + strings.Join(l.Lines(), "\n")
	recs[l.LimitedBy] = rec
}
