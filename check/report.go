package check

import (
	"encoding/json"
	"fmt"
	"io"
)

// Verdict grades one line: PASS, NOT MEASURED, WARN or FAIL.
type Verdict string

// The verdicts, from best to worst. NotMeasured is a line with nothing to
// measure in this run: its figure names the scenario that would measure
// it.
const (
	Pass        Verdict = "PASS"
	NotMeasured Verdict = "NOT MEASURED"
	Warn        Verdict = "WARN"
	Fail        Verdict = "FAIL"
)

// rank orders verdicts from best to worst.
func (v Verdict) rank() int {
	switch v {
	case Fail:
		return 3
	case Warn:
		return 2
	case NotMeasured:
		return 1
	}
	return 0
}

// worse returns the worse of v and w.
func worse(v, w Verdict) Verdict {
	if w.rank() > v.rank() {
		return w
	}
	return v
}

// Checks name the lines of a report (Line.Check).
const (
	CheckInFlight    = "in_flight"
	CheckRateLimited = "rate_limited"
	CheckEarly       = "early_retries"
	CheckJitter      = "jitter"
	CheckAttempts    = "attempts"
	CheckCancel      = "cancellation"
	CheckWrites      = "writes"
	CheckNonRetry    = "non_retryable"
	CheckTimeout     = "attempt_timeout"
	CheckAnswerGap   = "answer_gap"
	CheckClient      = "client" // about the run: no requests, the command's exit
)

// Line is one graded figure of one client's requests to one service.
type Line struct {
	// Client and Service say whose requests to what ("" for a line about
	// the whole run).
	Client  string `json:"client,omitempty"`
	Service string `json:"service,omitempty"`
	// Check names the rule (one of the Check* constants); Verdict is how
	// the figure fared against it.
	Check   string  `json:"check"`
	Verdict Verdict `json:"verdict"`
	// Value is the figure measured, in the unit the check states (a count,
	// a share in [0, 1], or seconds); Figure says it in words.
	Value  float64 `json:"value"`
	Figure string  `json:"figure"`
	// Rule is the rule the figure was held to.
	Rule string `json:"rule"`
}

// Report is the grading of a run: one Line per check per client and
// service, then the lines about the run.
type Report struct {
	// Scenario is the scenario's name.
	Scenario string `json:"scenario"`
	// Verdict is the worst of the lines' (PASS when there are none).
	Verdict Verdict `json:"verdict"`
	// Requests counts the records graded.
	Requests int `json:"requests"`
	// ToolCalls counts the logical calls to tools (paths under /tools/);
	// LostResults those whose last attempt failed, so that the agent got
	// no result: its model was handed an error in place of one. Lines
	// holds the graded lines, per client and service, then the run's.
	ToolCalls   int    `json:"tool_calls"`
	LostResults int    `json:"lost_results"`
	Lines       []Line `json:"lines"`
}

// add appends l and folds its verdict into the report's.
func (r *Report) add(l Line) {
	r.Lines = append(r.Lines, l)
	r.Verdict = worse(r.Verdict, l.Verdict)
}

// Add appends a line about the run (the command's exit, say).
func (r *Report) Add(l Line) { r.add(l) }

// WriteText writes the report for a person: per client and service a
// heading, then one line per check with its verdict, figure and rule.
func (r *Report) WriteText(w io.Writer) error {
	var head string
	for _, l := range r.Lines {
		if h := l.Client + "\x00" + l.Service; l.Client != "" && h != head {
			head = h
			if _, err := fmt.Fprintf(w, "client %s · service %s\n", l.Client, l.Service); err != nil {
				return err
			}
		}
		if _, err := fmt.Fprintf(w, "  %s  %-13s %s  (rule: %s)\n", l.Verdict, l.Check, l.Figure, l.Rule); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "%s: %d requests graded, %s; %s\n", r.Scenario, r.Requests, r.summary(), r.lost())
	return err
}

// summary counts the lines by verdict: "12 PASS, 2 NOT MEASURED, 1 WARN,
// 3 FAIL".
func (r *Report) summary() string {
	n := r.Count()
	return fmt.Sprintf("%d PASS, %d NOT MEASURED, %d WARN, %d FAIL", n[Pass], n[NotMeasured], n[Warn], n[Fail])
}

// lost says how many tool calls lost their result.
func (r *Report) lost() string {
	if r.ToolCalls == 0 {
		return "no tool calls"
	}
	return fmt.Sprintf("%d of %s lost their result (its last attempt failed: the model was handed an error)",
		r.LostResults, plural(r.ToolCalls, "tool call"))
}

// Count counts the lines by verdict.
func (r *Report) Count() map[Verdict]int {
	n := map[Verdict]int{}
	for _, l := range r.Lines {
		n[l.Verdict]++
	}
	return n
}

// WriteJSON writes the report as indented JSON; the field names are an
// interface.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
