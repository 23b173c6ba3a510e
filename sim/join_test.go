package sim

import (
	"context"
	"fmt"
	"testing"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
)

// joinScenario is one session of three turns, each a 100 ms model call
// then three tool calls answering in 100 ms, 300 ms and 2 s, with no
// think time; join is the strategy's progressive_join ("" for none).
func joinScenario(t *testing.T, join string) *scenarios.Scenario {
	t.Helper()
	if join != "" {
		join = "progressive_join = " + join
	}
	src := fmt.Sprintf(`
name = "join"
duration = "1h"
[workload]
sessions = 1
turns = 3
llm = { service = "model", tokens = 1000 }
calls = [ { tool = "fast", count = 1 }, { tool = "mid", count = 1 }, { tool = "slow", count = 1 } ]
[services.model]
latency = "100ms"
network_delay = "0s"
price_per_1k_input = 1
[services.fast]
latency = "100ms"
network_delay = "0s"
[services.mid]
latency = "300ms"
network_delay = "0s"
[services.slow]
latency = "2s"
network_delay = "0s"
price_per_1k_input = 1
[tools.fast]
service = "fast"
tokens = 10
[tools.mid]
service = "mid"
tokens = 10
[tools.slow]
service = "slow"
tokens = 10
[[strategy]]
name = "s"
max_in_flight = 16
%s
`, join)
	sc, err := scenarios.Parse("join.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func runJoin(t *testing.T, join string) results.StrategyResult {
	t.Helper()
	res, err := Run(context.Background(), joinScenario(t, join), Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res.Strategies[0]
}

// With progressive_join first = 2 a turn ends at its second answer, 300 ms
// after its tools began, and the session's next model turn starts then:
// each turn takes 100 + 300 ms and the three-turn task 1.2 s, where waiting
// for every call takes 100 + 2,000 ms a turn and 6.3 s a task. A join
// the turn's calls cannot beat (first = 5 of 3) waits for all of them. The
// late slow calls finish and are billed (fold) or are cancelled and are
// not (drop): 10 tokens each at $1 per 1,000.
func TestProgressiveJoinMovesOnAtTheKthAnswer(t *testing.T) {
	for _, c := range []struct {
		join           string
		turnMs, taskMs float64
		slowTokens     int64
		calls, failed  int64
	}{
		{"", 2100, 6300, 30, 9, 0},
		{"{ first = 5 }", 2100, 6300, 30, 9, 0},
		{"{ first = 2 }", 400, 1200, 30, 9, 0},
		{"{ share = 0.5 }", 400, 1200, 30, 9, 0},
		{"{ share = 0.33, late = \"drop\" }", 200, 600, 0, 9, 6},
		{"{ first = 2, late = \"drop\" }", 400, 1200, 0, 9, 3},
	} {
		s := runJoin(t, c.join)
		if s.Turns != 3 || s.FailedTurns != 0 {
			t.Fatalf("join %q: %d turns, %d failed; want 3 answered", c.join, s.Turns, s.FailedTurns)
		}
		if got := s.AnswerLatencyMs.P50; float64(got) != c.turnMs || s.TurnLatencyMs.Max != c.turnMs {
			t.Errorf("join %q: turn p50 %v ms, max %v; want %v", c.join, got, s.TurnLatencyMs.Max, c.turnMs)
		}
		tk := s.Tasks
		if tk == nil || tk.Completed != 1 || tk.TimeToAnswerMs.P50 != c.taskMs {
			t.Fatalf("join %q: tasks %+v; want 1 completed in %v ms", c.join, tk, c.taskMs)
		}
		if slow := tk.Services[3]; slow.InputTokens != c.slowTokens || slow.CostUSD != float64(c.slowTokens)/1000 {
			t.Errorf("join %q: slow billed %d tokens for $%v; want %d", c.join, slow.InputTokens, slow.CostUSD, c.slowTokens)
		}
		if s.Calls != c.calls || s.Failed != c.failed {
			t.Errorf("join %q: %d calls, %d failed; want %d, %d", c.join, s.Calls, s.Failed, c.calls, c.failed)
		}
	}
}
