package reports

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/simbench/simbench/internal/numfmt"
	"github.com/simbench/simbench/results"
)

// DecisionLines shows a decision for terminals: the sentence, then the
// settings and the evidence, a fact a line.
func DecisionLines(d *results.Decision) []string {
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
	for _, x := range ev.Search {
		lines = append(lines, "  "+x)
	}
	lines = append(lines, "  rule: "+ev.Rule)
	return lines
}

// settingsText lists what to set: caps, pace and retries.
func settingsText(d *results.Decision) string {
	var parts []string
	if d.MaxInFlight > 0 {
		parts = append(parts, fmt.Sprintf("max_in_flight = %d", d.MaxInFlight))
	}
	for _, name := range slices.Sorted(maps.Keys(d.MaxInFlightPerService)) {
		parts = append(parts, fmt.Sprintf("max_in_flight_per_service.%s = %d", name, d.MaxInFlightPerService[name]))
	}
	if d.Headroom > 0 {
		parts = append(parts, fmt.Sprintf("token buckets at headroom %s", num(d.Headroom)))
	} else {
		parts = append(parts, "no token buckets")
	}
	for _, name := range slices.Sorted(maps.Keys(d.Pace)) {
		if t := numfmt.Rates(d.Pace[name].RequestsPerMinute, d.Pace[name].TokensPerMinute, d.Pace[name].PerSecond); t != "" {
			parts = append(parts, name+" "+t)
		}
	}
	if d.Retry != "" {
		parts = append(parts, "retries "+d.Retry)
	}
	return strings.Join(parts, "; ")
}

// PlanLines is one service's recommendation arithmetic, a step a line (the
// decision package's Plan.Lines), for the HTML report to show.
type PlanLines struct {
	// Service is the service's name; Lines the steps, one a line.
	Service string
	Lines   []string
}
