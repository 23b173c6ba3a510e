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
	Scenario       string                            `json:"scenario"`
	Decision       *results.Decision                 `json:"decision,omitempty"`
	Recommendation map[string]results.Recommendation `json:"recommendation"`
	Arithmetic     map[string][]string               `json:"arithmetic"`
	Overall        *Overall                          `json:"overall,omitempty"`
	OverallLines   []string                          `json:"overall_arithmetic,omitempty"`
	Load           *LoadCheck                        `json:"load,omitempty"`
	LoadLines      []string                          `json:"load_arithmetic,omitempty"`
	Sweep          *results.SweepRow                 `json:"sweep,omitempty"`
	Strategy       string                            `json:"strategy,omitempty"`
	Verdict        string                            `json:"verdict,omitempty"`
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
