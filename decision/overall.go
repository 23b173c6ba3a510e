package decision

import (
	"fmt"

	"github.com/simbench/simbench/internal/numfmt"
)

// Overall is the recommendation for a whole agent runtime that calls
// several services: the process-wide cap and the turn rate they sustain
// together.
type Overall struct {
	// MaxInFlight is the sum of the services' caps: each service's calls
	// may fill its own cap at once, and a global cap below the sum would
	// let one slow service starve the others.
	MaxInFlight int `json:"max_in_flight"`
	// TurnsPerMinute is the smallest of the services' sustainable turn
	// rates: a turn needs every service it calls.
	TurnsPerMinute int `json:"turns_per_minute"`
	// LimitedBy names the service whose turn rate binds.
	LimitedBy string `json:"limited_by"`
}

// OverallOf combines per-service plans; ok is false without plans.
func OverallOf(plans []Plan) (o Overall, ok bool) {
	for i, p := range plans {
		o.MaxInFlight += p.MaxInFlight
		if i == 0 || p.TurnsPerMinute < o.TurnsPerMinute {
			o.TurnsPerMinute, o.LimitedBy = p.TurnsPerMinute, p.Service.Name
		}
	}
	return o, len(plans) > 0
}

// Lines shows the combination line by line, like Plan.Lines.
func (o Overall) Lines(plans []Plan) []string {
	caps := ""
	for i, p := range plans {
		if i > 0 {
			caps += " + "
		}
		caps += fmt.Sprintf("%s (%s)", numfmt.Num(float64(p.MaxInFlight)), p.Service.Name)
	}
	return []string{
		fmt.Sprintf("overall max in flight: %s = %s", caps, numfmt.Num(float64(o.MaxInFlight))),
		fmt.Sprintf("overall turns/min sustainable: %s, limited by %s (a turn needs every service it calls)", numfmt.Num(float64(o.TurnsPerMinute)), o.LimitedBy),
	}
}
