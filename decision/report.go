package decision

import (
	"fmt"

	"github.com/simbench/simbench/results"
)

// Report is a decision as `recommend --json` prints it: the decision, each
// service's recommendation and its arithmetic a step a line, the overall
// cap of a runtime that calls several services, the workload's demand
// against the limits, and the verifying sweep with its verdict. Its field
// names are an interface, as results.json's are.
type Report struct {
	// Scenario ("scenario") is the scenario's name.
	Scenario string `json:"scenario"`
	// Decision ("decision") is what to set, verified by simulation; absent
	// when no sweep was made.
	Decision *results.Decision `json:"decision,omitempty"`
	// Recommendation ("recommendation") holds each planned service's
	// advised cap and bucket settings, by service name (empty: none).
	Recommendation map[string]results.Recommendation `json:"recommendation"`
	// Arithmetic ("arithmetic") holds, by service name, the steps of its
	// recommendation, one a line, or why it has none.
	Arithmetic map[string][]string `json:"arithmetic"`
	// Overall ("overall") is the runtime-wide cap and turn rate, and
	// OverallLines ("overall_arithmetic") its steps; both absent unless
	// more than one service was planned.
	Overall      *Overall `json:"overall,omitempty"`
	OverallLines []string `json:"overall_arithmetic,omitempty"`
	// Load ("load") sets the workload's offered turn rate against what the
	// limits sustain, and LoadLines ("load_arithmetic") its steps; absent
	// when not checked.
	Load      *LoadCheck `json:"load,omitempty"`
	LoadLines []string   `json:"load_arithmetic,omitempty"`
	// Sweep ("sweep") is the verifying sweep's row, Strategy ("strategy")
	// the name of the strategy swept, and Verdict ("verdict") the sentence
	// comparing the arithmetic's cap with the sweep's; absent with
	// Decision.
	Sweep    *results.SweepRow `json:"sweep,omitempty"`
	Strategy string            `json:"strategy,omitempty"`
	Verdict  string            `json:"verdict,omitempty"`
}

// Report gathers what `recommend --json` prints about scenario from the
// result of Decide or Arithmetic.
func (d *Result) Report(scenario string) Report {
	res := Report{Scenario: scenario, Recommendation: d.Recommendations(), Arithmetic: map[string][]string{}}
	if res.Recommendation == nil {
		res.Recommendation = map[string]results.Recommendation{}
	}
	for name, err := range d.Unplanned {
		res.Arithmetic[name] = []string{fmt.Sprintf("no recommendation: %v", err)}
	}
	for _, p := range d.Plans {
		res.Arithmetic[p.Service.Name] = p.Lines()
	}
	if len(d.Plans) > 1 {
		ov, _ := OverallOf(d.Plans)
		res.Overall, res.OverallLines = &ov, ov.Lines(d.Plans)
	}
	if d.Load != nil {
		res.Load, res.LoadLines = d.Load, d.Load.Lines()
	}
	if d.Decision != nil {
		res.Decision, res.Sweep, res.Strategy = d.Decision, &d.Row, d.Decision.Strategy
		res.Verdict = d.Decision.Evidence.Verdict
	}
	return res
}
