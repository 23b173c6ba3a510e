package decision

import "github.com/simbench/simbench/scenarios"

// Setting is what a decision sets on one service's calls, the one answer
// `recommend --emit`, `check`'s in_flight rule and the reports share.
type Setting struct {
	// MaxInFlight is the most of the service's calls the tuned strategy
	// lets run at once: its per-service cap on the service, else its
	// global cap (0: none).
	MaxInFlight int
	// PaceRPM is the request rate, in requests per minute, the tuned
	// strategy's token bucket paces the service's calls at (0: not paced).
	PaceRPM float64
	// ArithmeticCap is the service's Little's-law cap at the decision's
	// headroom (0: no limit to plan one from), and Headroom that headroom.
	ArithmeticCap int
	Headroom      float64
}

// Settings returns, by service name, what the decided strategy r.Tuned
// sets on each service of sc that it caps or paces or that has limits to
// plan from: the settings `simbench recommend --emit` prints.
func Settings(sc *scenarios.Scenario, r *Result) map[string]Setting {
	out := map[string]Setting{}
	st := &r.Tuned
	headroom := headroomFor(0, st)
	var pace map[string]float64
	if st.TokenBucket {
		pace = map[string]float64{}
		for name, p := range paces(sc, headroom) {
			pace[name] = p.RequestsPerMinute
		}
	}
	for _, svc := range sc.Services {
		s := Setting{MaxInFlight: st.MaxInFlight, PaceRPM: pace[svc.Name], Headroom: headroom}
		if n, ok := st.MaxInFlightPerService[svc.Name]; ok && n > 0 {
			s.MaxInFlight = n
		}
		for _, p := range r.Plans {
			if p.Service.Name == svc.Name {
				s.ArithmeticCap = p.MaxInFlight
			}
		}
		if s != (Setting{Headroom: headroom}) {
			out[svc.Name] = s
		}
	}
	return out
}
