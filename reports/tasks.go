package reports

import (
	"fmt"
	"strings"

	"github.com/simbench/simbench/results"
)

// taskMetrics are the agent-level figures (results.Tasks): the columns of
// the tasks table, and columns the terminal table shows on request.
func taskMetrics() []metric {
	return fromRegistry([]metric{
		{key: "tasks.completion", scale: 100, format: dec1},
		{key: "tasks.time_to_answer_ms.p50", format: millis},
		{key: "tasks.time_to_answer_ms.p95", format: millis},
		{key: "tasks.model_failures", format: count},
		{key: "tasks.cost_usd", format: dollars},
		{key: "tasks.cost_per_answered_task_usd", format: dollars},
	}...)
}

// tokenMetrics are the billed tokens, columns on request only.
func tokenMetrics() []metric {
	return fromRegistry([]metric{
		{key: "tasks.input_tokens", format: count},
		{key: "tasks.output_tokens", format: count},
		{key: "tasks.skipped_subagents", format: count},
	}...)
}

// schedulerMetrics are the figures of the turns the scheduler could
// answer (those the model did not get wrong): columns on request in the
// terminal, and in the report's tasks table when a strategy has them.
func schedulerMetrics() []metric {
	return fromRegistry([]metric{
		{key: "tasks.model_failed_turns", format: count},
		{key: "tasks.scheduler_answer_latency_ms.answered_share", scale: 100, format: dec1},
		{key: "tasks.scheduler_answer_latency_ms.p95", format: answerFloat},
	}...)
}

// taskColumns are the columns of the tasks table: taskMetrics, and in a
// report (not the terminal, whose table stays within 80 columns) the
// schedulerMetrics when a strategy of r has them.
func taskColumns(r *results.Results, report bool) []metric {
	ms := taskMetrics()
	if !report {
		return ms
	}
	for i := range r.Strategies {
		if t := r.Strategies[i].Tasks; t != nil && t.SchedulerAnswerLatencyMs != nil {
			return append(ms, schedulerMetrics()...)
		}
	}
	return ms
}

// dollars formats an amount of dollars: cents from a dollar up, four
// decimals under it (a task's cost is often a fraction of a cent).
func dollars(v float64) string {
	if v >= 1 {
		return dec2(v)
	}
	return fixed(v, 4, false)
}

// taskKey explains the tasks table in one sentence.
const taskKey = "a task is a session's turns (one turn without a set number of them), completed when every turn was answered in full; task p50 and p95 (ms): from its first turn's start to its last turn's end, completed tasks only; model fails: model turns wrong for reasons of the model (success), retried or abandoning the task; cost: billed tokens (every call answered, one attempt each) at the services' prices per 1,000 tokens; $/answer: the run's cost over the tasks completed; * best in its column"

// taskHeaders are the headers of the tasks table of columns ms.
func taskHeaders(ms []metric) []string {
	hs := []string{"strategy"}
	for _, m := range ms {
		hs = append(hs, m.header)
	}
	return hs
}

// taskRows returns the tasks table of columns ms, a row per strategy with
// the best value of each column marked "*" (nil when no strategy has
// tasks).
func taskRows(r *results.Results, ms []metric) [][]string {
	some := false
	for i := range r.Strategies {
		some = some || r.Strategies[i].Tasks != nil
	}
	if !some {
		return nil
	}
	marks := make([][]bool, len(ms))
	for j, m := range ms {
		marks[j] = best(m, r.Strategies)
	}
	var rows [][]string
	for i := range r.Strategies {
		s := &r.Strategies[i]
		row := []string{s.Name}
		for j, m := range ms {
			text := cellText(m, s)
			if marks[j][i] {
				text += "*"
			}
			row = append(row, text)
		}
		rows = append(rows, row)
	}
	return rows
}

// taskSpare are the tasks table's columns a narrow terminal leaves out,
// the least essential first: completion, task p95 and $/answer are what
// tasks are judged by.
var taskSpare = []string{"task p50", "cost $", "model fails"}

// taskTextTable is the terminal's tasks table in columns: the strategy is
// text, aligned left, the others numbers.
func taskTextTable(rows [][]string) columnTable {
	return columnTable{headers: taskHeaders(taskMetrics()), rows: rows, left: 1, spare: taskSpare}
}

// taskTableMarkdown writes the tasks table as a Markdown section.
func taskTableMarkdown(b *strings.Builder, ms []metric, rows [][]string) {
	b.WriteString("## Tasks\n\n")
	mdTable(b, taskHeaders(ms), 1, rows)
	fmt.Fprintf(b, "\n%s\n\n", mdEscape(sentence(taskKeyOf(ms))))
}

// schedulerKey explains the schedulerMetrics columns.
const schedulerKey = "; model-failed turns: turns the model got wrong and its retries did not cure; sched answered % and sched answer p95: the turns answered and the p95 time to answer among the other turns, those the scheduler could answer, which the decision's rule reads"

// taskKeyOf is the tasks table's key for columns ms.
func taskKeyOf(ms []metric) string {
	if len(ms) > len(taskMetrics()) {
		return strings.TrimSuffix(taskKey, "; * best in its column") + schedulerKey + "; * best in its column"
	}
	return taskKey
}
