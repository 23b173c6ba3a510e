package results

// Tasks is a strategy's agent-level outcome: the tasks its sessions set
// out to answer and what answering them cost. A task is a closed-model
// session's workload.turns turns, or one turn when the workload has no set
// number of turns (the open model, or sessions that run until the
// duration ends). A task is completed when each of its turns was answered
// in full within the duration.
type Tasks struct {
	// Begun counts the tasks whose first turn began; Completed those
	// answered in full within the duration; FailedTasks those that ended
	// unanswered (a failed turn, a model failure the retries did not
	// cure). The rest were still running when the run ended.
	Begun       int64 `json:"begun"`
	Completed   int64 `json:"completed"`
	FailedTasks int64 `json:"failed"`
	// Completion is Completed over Begun (0 when none began): the share
	// of tasks answered end to end.
	Completion float64 `json:"completion"`
	// ModelFailures counts model turns that failed for reasons of the
	// model (workload.llm.success): each draw that failed, retried or not;
	// ModelRetries those made again (workload.llm.retries).
	ModelFailures int64 `json:"model_failures,omitempty"`
	ModelRetries  int64 `json:"model_retries,omitempty"`
	// ModelFailedTurns counts the turns ended within the duration that
	// failed for reasons of the model: a model turn wrong and not cured by
	// its retries (the turn's task is abandoned). Present only when the
	// scenario's model turns may fail (workload.llm.success below 1).
	ModelFailedTurns int64 `json:"model_failed_turns,omitempty"`
	// SchedulerAnswerLatencyMs is the time to answer among the turns the
	// scheduler could answer: answer_latency_ms's percentiles and answered
	// share over the turns ended within the duration less
	// ModelFailedTurns. A turn the model got wrong is no failure of the
	// caps or the pacing, so the decision's rule ("answer ≥ 95% of
	// turns", its p95) reads this one when present. Present only when the
	// scenario's model turns may fail.
	SchedulerAnswerLatencyMs *AnswerSummary `json:"scheduler_answer_latency_ms,omitempty"`
	// SkippedSubagents counts the subagents an orchestrator turn did not
	// spawn because its orchestrator_budget had no room for them.
	SkippedSubagents int64 `json:"skipped_subagents,omitempty"`
	// TimeToAnswerMs summarises the time from a completed task's first
	// turn's start to its last turn's end, in milliseconds.
	TimeToAnswerMs Summary `json:"time_to_answer_ms"`
	// InputTokens and OutputTokens are the tokens billed: those of every
	// call (model and tool) that succeeded within the duration, one
	// attempt's worth each (a 429 or a failed attempt is not billed), by
	// the service's split (a model call's output_tokens are output, the
	// rest input). Services holds them per service, in the scenario's
	// order of services, with each service's cost.
	InputTokens  int64         `json:"input_tokens"`
	OutputTokens int64         `json:"output_tokens"`
	Services     []ServiceCost `json:"services,omitempty"`
	// CostUSD is the run's cost in dollars: over the services, input
	// tokens × price_per_1k_input / 1000 + output tokens ×
	// price_per_1k_output / 1000. CostPerAnsweredTaskUSD is CostUSD over
	// Completed (0 when no task was completed): what one answer cost,
	// the tokens of the tasks that failed included.
	CostUSD                float64 `json:"cost_usd"`
	CostPerAnsweredTaskUSD float64 `json:"cost_per_answered_task_usd,omitempty"`
}

// ServiceCost is the tokens one service billed and what they cost.
type ServiceCost struct {
	// Service ("service") is the service's name in the scenario.
	Service string `json:"service"`
	// InputTokens ("input_tokens") and OutputTokens ("output_tokens") are
	// the tokens the service billed over the run, in tokens.
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	// PricePer1kInput and PricePer1kOutput are the service's prices, in
	// dollars per 1,000 tokens (0: free); CostUSD what its tokens cost.
	PricePer1kInput  float64 `json:"price_per_1k_input,omitempty"`
	PricePer1kOutput float64 `json:"price_per_1k_output,omitempty"`
	CostUSD          float64 `json:"cost_usd"`
}
