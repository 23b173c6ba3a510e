package setup

import (
	"fmt"
	"maps"
	"math"
	"strings"
	"time"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
)

// LimitsOf returns the limits of the services the scenario's workload
// calls, in service order (see Results.Limits).
func LimitsOf(sc *scenarios.Scenario) []results.ServiceLimits {
	var out []results.ServiceLimits
	for _, l := range Loads(sc) {
		out = append(out, results.ServiceLimits{
			Service: l.Name, RequestsPerMinute: Round6(l.RequestsPerMinute), TokensPerMinute: Round6(l.TokensPerMinute),
			MaxConcurrent: l.MaxConcurrent, CallsPerTurn: Round6(l.CallsPerTurn),
		})
	}
	return out
}

// ServiceCaps returns a copy of st's per-service caps on attempts in
// flight, by service name (nil when it has none, as results.json reads
// back).
func ServiceCaps(st *scenarios.Strategy) map[string]int {
	if len(st.MaxInFlightPerService) == 0 {
		return nil
	}
	return maps.Clone(st.MaxInFlightPerService)
}

// RetryText describes a strategy's retry policy in one line, such as
// "full-jitter 1s–60s, 5 attempts, honours Retry-After": the backoff, its
// base and cap, the attempts, and how the strategy treats the server's
// Retry-After.
func RetryText(st *scenarios.Strategy) string {
	r := &st.Retry
	var parts []string
	b := r.Backoff.String()
	if r.Base > 0 {
		b += " " + shortDuration(r.Base)
		if r.Cap > 0 {
			b += "–" + shortDuration(r.Cap)
		}
	}
	parts = append(parts, b)
	if r.Attempts > 0 {
		parts = append(parts, fmt.Sprintf("%d attempts", r.Attempts))
	}
	if r.Budget > 0 {
		parts = append(parts, "budget "+shortDuration(r.Budget))
	}
	if r.HonorRetryAfter {
		ra := "honours Retry-After"
		if r.RetryAfterJitter > 0 {
			ra += " +" + shortDuration(r.RetryAfterJitter) + " jitter"
		}
		parts = append(parts, ra)
	} else {
		parts = append(parts, "ignores Retry-After")
	}
	if st.PauseOnRetryAfter {
		parts = append(parts, "pauses the service on Retry-After")
	}
	if st.KeepSlotDuringBackoff {
		parts = append(parts, "keeps its slot while waiting")
	}
	return strings.Join(parts, ", ")
}

// shortDuration writes d without trailing zero units: 1s, 500ms, 1m30s.
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

// Round6 returns x rounded to six decimal places, as results record
// figures.
func Round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }
