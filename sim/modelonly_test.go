package sim

import (
	"context"
	"fmt"
	"testing"

	"github.com/simbench/simbench/internal/setup"
	"github.com/simbench/simbench/scenarios"
)

// A run's calls are its tool calls, unless its workload makes model calls
// only: then they are its model calls, counted in calls, attempts,
// goodput and call latency as tool calls are. Two sessions of 5 turns
// with no think time run to the end, each model call answering in 100 ms
// and each tool call in 50 ms, so every figure is exact: a turn of one
// model call (llm), of a model call then 3 tool calls (tools), of a model
// call then a subagent of 2 iterations of one model call (subagent
// models) or of one tool call (subagent tools).
func TestModelOnlyWorkloadCountsItsModelCalls(t *testing.T) {
	for _, c := range []struct {
		name, workload string
		modelOnly      bool
		callsPerTurn   int64
		callMs         float64
	}{
		{"llm", ``, true, 1, 100},
		{"tools", `calls = [ { tool = "t", count = 3 } ]`, false, 3, 50},
		{"subagent models", `subagents = { count = 1, max_iterations = 2, llm = { service = "model", tokens = 10 } }`, true, 3, 100},
		{"subagent tools", `subagents = { count = 1, max_iterations = 2, calls = [ { tool = "t", count = 1 } ] }`, false, 2, 50},
	} {
		src := fmt.Sprintf(`
name = "model-only"
duration = "1h"
[workload]
sessions = 2
turns = 5
llm = { service = "model", tokens = 100 }
%s
[services.model]
latency = "100ms"
network_delay = "0s"
[services.tools]
latency = "50ms"
network_delay = "0s"
[tools.t]
service = "tools"
tokens = 10
[[strategy]]
name = "s"
max_in_flight = 16
`, c.workload)
		sc, err := scenarios.Parse("model-only.toml", []byte(src))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := sc.Workload.ModelOnly(); got != c.modelOnly {
			t.Errorf("%s: ModelOnly %v; want %v", c.name, got, c.modelOnly)
		}
		res, err := Run(context.Background(), sc, Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		s := res.Strategies[0]
		calls := 10 * c.callsPerTurn // 2 sessions × 5 turns
		if s.Turns != 10 || s.FailedTurns != 0 || s.Calls != calls || s.Attempts != calls || s.Failed != 0 {
			t.Errorf("%s: %d turns (%d failed), %d calls, %d attempts, %d failed; want 10 turns, %d calls and attempts",
				c.name, s.Turns, s.FailedTurns, s.Calls, s.Attempts, s.Failed, calls)
		}
		if s.CallLatencyMs.Mean != c.callMs || s.CallLatencyMs.Max != c.callMs {
			t.Errorf("%s: call latency mean %v ms, max %v; want %v", c.name, s.CallLatencyMs.Mean, s.CallLatencyMs.Max, c.callMs)
		}
		goodput := setup.Round6(float64(calls) / sc.Duration.Seconds())
		if s.GoodputPerS != goodput || s.AnsweredGoodputPerS != goodput {
			t.Errorf("%s: goodput %v/s, answered %v/s; want %v/s, every call a success of an answered turn", c.name, s.GoodputPerS, s.AnsweredGoodputPerS, goodput)
		}
	}
}
