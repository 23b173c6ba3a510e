package results

import "strings"

// ClassResult is one session class's figures under a strategy (workload
// key classes): what priority classes trade between the classes sharing
// one key.
type ClassResult struct {
	// Name is the class's name, as in the scenario.
	Name string `json:"name"`
	// Sessions is how many sessions are of the class.
	Sessions int `json:"sessions"`
	// Turns and FailedTurns count the class's turns finished within the
	// run, as the strategy's fields do.
	Turns       int64 `json:"turns"`
	FailedTurns int64 `json:"failed_turns"`
	// Calls counts the class's tool calls finished within the run (as
	// the strategy's Calls counts them);
	// GoodCalls those that succeeded.
	Calls     int64 `json:"calls"`
	GoodCalls int64 `json:"good_calls"`
	// CallShare is the class's fraction of every class's successful tool
	// calls: what a priority table's guaranteed share bounds from below
	// while the class has calls waiting.
	CallShare float64 `json:"call_share"`
	// TurnLatencyMs and AnswerLatencyMs are the class's turn latency and
	// time to a full answer, as the strategy's.
	TurnLatencyMs   Summary       `json:"turn_latency_ms"`
	AnswerLatencyMs AnswerSummary `json:"answer_latency_ms"`
}

// ClassFigure is the prefix of the per-class figures: "classes.batch.
// call_share" is the CallShare of the strategy's class named batch, and
// the rest of the key is the JSON path of a ClassResult field
// (classFigures).
const ClassFigure = "classes."

// classFigures is the list of a class's figures, keyed by the JSON path of
// their ClassResult fields.
var classFigures = []struct {
	key  string
	read func(c *ClassResult) (float64, bool)
}{
	{"turns", func(c *ClassResult) (float64, bool) { return float64(c.Turns), true }},
	{"failed_turns", func(c *ClassResult) (float64, bool) { return float64(c.FailedTurns), true }},
	{"calls", func(c *ClassResult) (float64, bool) { return float64(c.Calls), true }},
	{"good_calls", func(c *ClassResult) (float64, bool) { return float64(c.GoodCalls), true }},
	{"call_share", func(c *ClassResult) (float64, bool) { return c.CallShare, true }},
	{"turn_latency_ms.p50", func(c *ClassResult) (float64, bool) { return c.TurnLatencyMs.P50, c.Turns > 0 }},
	{"turn_latency_ms.p95", func(c *ClassResult) (float64, bool) { return c.TurnLatencyMs.P95, c.Turns > 0 }},
	{"answer_latency_ms.p50", func(c *ClassResult) (float64, bool) { return float64(c.AnswerLatencyMs.P50), c.Turns > 0 }},
	{"answer_latency_ms.p95", func(c *ClassResult) (float64, bool) { return float64(c.AnswerLatencyMs.P95), c.Turns > 0 }},
	{"answer_latency_ms.p99", func(c *ClassResult) (float64, bool) { return float64(c.AnswerLatencyMs.P99), c.Turns > 0 }},
	{"answer_latency_ms.answered_share", func(c *ClassResult) (float64, bool) { return c.AnswerLatencyMs.AnsweredShare, c.Turns > 0 }},
}

// classFigure reads "NAME.FIELD" of the strategy's classes.
func (s *StrategyResult) classFigure(key string) (float64, bool) {
	for i := range s.Classes {
		c := &s.Classes[i]
		field, ok := strings.CutPrefix(key, c.Name+".")
		if !ok {
			continue
		}
		for _, f := range classFigures {
			if f.key == field {
				return f.read(c)
			}
		}
	}
	return 0, false
}

// classFigureKeys lists ClassFigure + class + "." + field for every class
// of the strategies, classes in the order they first appear.
func classFigureKeys(ss []*StrategyResult) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range ss {
		for _, c := range s.Classes {
			if seen[c.Name] {
				continue
			}
			seen[c.Name] = true
			for _, f := range classFigures {
				out = append(out, ClassFigure+c.Name+"."+f.key)
			}
		}
	}
	return out
}
