package reports_test

import (
	"log"
	"os"

	"github.com/simbench/simbench/reports"
	"github.com/simbench/simbench/results"
)

func ExampleWriteTable() {
	r := &results.Results{
		Scenario: "tier3", Seed: 42, SimbenchVersion: "v0.3.0", DurationS: 600, Mode: "virtual",
		Strategies: []results.StrategyResult{
			{
				Name: "unbounded", Turns: 3010, FailedTurns: 211, Calls: 24080, Attempts: 30920,
				TurnLatencyMs:   results.Summary{P50: 1210, P95: 9870, P99: 21400},
				AnswerLatencyMs: results.AnswerSummary{P50: 1250, P95: results.Unanswered, P99: results.Unanswered, AnsweredShare: 0.93},
				GoodputPerS:     40.1, AnsweredGoodputPerS: 36.3, RateLimited: 6840, EarlyRetries: 1070, WastedWorkS: 206.3,
				PeakInFlight: map[string]int{"llm": 400},
			},
			{
				Name: "bounded-8", MaxInFlight: 8, Turns: 3340, Calls: 26720, Attempts: 26720,
				TurnLatencyMs:   results.Summary{P50: 980, P95: 1540, P99: 1890},
				AnswerLatencyMs: results.AnswerSummary{P50: 980, P95: 1540, P99: 1890, AnsweredShare: 1},
				GoodputPerS:     44.5, AnsweredGoodputPerS: 44.5, WastedWorkS: 1.6,
				PeakInFlight: map[string]int{"llm": 8},
			},
		},
	}
	if err := reports.WriteTable(os.Stdout, r, false); err != nil {
		log.Fatal(err)
	}
	// Output:
	// scenario tier3 · seed 42 · virtual · 600 s · simbench v0.3.0
	//
	// strategy   turns   failed turns    calls   attempts   p50 ms   p95 ms   p99 ms   answer p95   goodput/s    429s   failed   early   wasted s   races   peak
	// unbounded  3,010            211   24,080     30,920    1,210    9,870   21,400            —       36.30   6,840        0   1,070      206.3       0    400
	// bounded-8  3,340              0*  26,720     26,720      980    1,540    1,890        1,540*      44.50*      0*       0       0*       1.6*      0      8
	//
	// * best in its column (no mark when every value is equal; never on an invalid run); turns, calls, p50 ms, p95 ms, p99 ms are marked only among the strategies whose share of failed turns is within 1 percentage point of the lowest
	// answer p95: turn latency with every failed turn counted as never answered (—: the 95th-percentile turn got no answer)
	// goodput: successful calls of turns answered in full, per second (a success inside a failed turn is not goodput)
	// early: retries sent before the server's Retry-After; wasted s: server seconds spent on results nobody read
	// races: overlapping writes to one resource; peak: most attempts in flight at llm
}
