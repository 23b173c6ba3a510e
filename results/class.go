package results

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
	// Calls counts the class's tool calls finished within the run;
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
