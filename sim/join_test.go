package sim

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/simbench/simbench/internal/simtest"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
)

func runJoin(t *testing.T, join string) results.StrategyResult {
	t.Helper()
	res, err := Run(context.Background(), simtest.JoinScenario(t, join), Options{})
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

// orderStatMean returns the mean of the k-th smallest of n independent
// uniform draws on [lo, hi], from first principles: E[X] = lo + (hi − lo)
// ∫₀¹ P(U₍ₖ₎ > u) du, where U₍ₖ₎ > u when fewer than k of the n uniforms
// on [0, 1] fall at or below u, a binomial tail, integrated by Simpson's
// rule. (It is lo + (hi − lo)·k/(n + 1), the mean of a Beta(k, n + 1 − k).)
func orderStatMean(k, n int, lo, hi float64) float64 {
	below := func(u float64) float64 { // P(fewer than k of n at or below u)
		var p, c float64 = 0, 1 // c: n choose j
		for j := range k {
			p += c * math.Pow(u, float64(j)) * math.Pow(1-u, float64(n-j))
			c = c * float64(n-j) / float64(j+1)
		}
		return p
	}
	const steps = 1000 // even
	h := 1.0 / steps
	sum := below(0) + below(1)
	for i := 1; i < steps; i++ {
		w := 2.0
		if i%2 == 1 {
			w = 4
		}
		sum += w * below(float64(i)*h)
	}
	return lo + (hi-lo)*sum*h/3
}

// foldScenario is one session with no think time whose turns make 10
// calls, each answering in uniform(200 ms, 900 ms), under a progressive
// join of the first 8 with late calls late; limit adds a max_in_flight.
func foldScenario(t *testing.T, late string, limit bool) *scenarios.Scenario {
	t.Helper()
	capKey := ""
	if limit {
		capKey = "max_in_flight = 16"
	}
	src := fmt.Sprintf(`
name = "fold"
duration = "1h"
seed = 1
[workload]
sessions = 1
calls = [ { tool = "t", count = 10 } ]
[services.svc]
latency = { dist = "uniform", min = "200ms", max = "900ms" }
network_delay = "0s"
price_per_1k_input = 1
[tools.t]
service = "svc"
tokens = 10
[[strategy]]
name = "s"
%s
progressive_join = { first = 8, late = %q }
`, capKey, late)
	sc, err := scenarios.Parse("fold.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// A progressive join of the first 8 of 10 calls at uniform(200, 900) ms
// ends a turn at its calls' 8th order statistic, 200 + 700·8/11 ≈ 709 ms
// on average, whether the 2 late calls run on (fold) or are cancelled
// (drop). Folded late calls run on after their turn ended, while the
// session's next turn starts: they must not count as its answers (a turn
// faster than any of its calls), and the ended turn's storage must not be
// reused for the next until they are in. Every call counts once, with
// every late one billed under fold and none under drop. Without a cap the
// calls of every turn run at once; the run ends within a bounded number of
// events (a turn ending at once, answered by another's late results,
// would loop without end).
func TestProgressiveJoinTurnIsTheKthOrderStatistic(t *testing.T) {
	want := orderStatMean(8, 10, 200, 900)
	if math.Abs(want-(200+700*8.0/11)) > 1e-6 {
		t.Fatalf("order statistic mean %v ms by integration, %v ms by the Beta mean", want, 200+700*8.0/11)
	}
	for _, late := range []string{"fold", "drop"} {
		for _, limit := range []bool{true, false} {
			name := fmt.Sprintf("late %s, max_in_flight %v", late, limit)
			sc := foldScenario(t, late, limit)
			// A run of about 5,000 turns takes some 70,000 events, 5
			// progress reports; 20 are 330,000 events.
			ctx, cancel := context.WithCancel(context.Background())
			reports := 0
			res, err := Run(ctx, sc, Options{Parallel: 1, Progress: func(string, time.Duration, time.Duration) {
				if reports++; reports > 20 {
					cancel()
				}
			}})
			cancel()
			if err != nil {
				t.Fatalf("%s: %v (%d progress reports)", name, err, reports)
			}
			s := res.Strategies[0]
			got := s.TurnLatencyMs.Mean
			t.Logf("%s: mean turn %.2f ms over %d turns; the 8th of 10 order statistic: %.2f ms", name, got, s.Turns, want)
			if math.Abs(got-want)/want > 0.03 {
				t.Errorf("%s: mean turn %.2f ms over %d turns; want %.2f ms ± 3%%", name, got, s.Turns, want)
			}
			// One session, no think time: the turns follow one another.
			if wantTurns := sc.Duration.Seconds() * 1000 / want; math.Abs(float64(s.Turns)-wantTurns)/wantTurns > 0.03 {
				t.Errorf("%s: %d turns in %v; want %.0f ± 3%%", name, s.Turns, sc.Duration, wantTurns)
			}
			// Every call of an ended turn counts, its late ones included
			// (the last turn's late calls may finish after the end).
			if s.Calls > 10*s.Turns || s.Calls < 10*s.Turns-2 {
				t.Errorf("%s: %d calls for %d turns; want 10 a turn", name, s.Calls, s.Turns)
			}
			billed := s.Tasks.Services[0].InputTokens
			if ok := 10 * (s.Calls - s.Failed); billed != ok {
				t.Errorf("%s: %d tokens billed; want %d, 10 for each of %d calls that succeeded", name, billed, ok, s.Calls-s.Failed)
			}
			// Drop cancels each turn's 2 late calls: they fail.
			if wantFailed := map[string]int64{"fold": 0, "drop": 2 * s.Turns}[late]; s.Failed != wantFailed {
				t.Errorf("%s: %d calls failed; want %d", name, s.Failed, wantFailed)
			}
		}
	}
}
