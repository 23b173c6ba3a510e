package reports_test

import (
	"fmt"
	"log"
	"os"
	"time"

	"github.com/simbench/simbench/reports"
	"github.com/simbench/simbench/sim"
)

// The worked numbers: 600 requests/min, 8 calls per turn, 70% headroom.
func ExampleRecommend() {
	p, err := reports.Recommend(reports.Service{
		Name:         "search",
		RPM:          600,
		MeanLatency:  800 * time.Millisecond,
		CallsPerTurn: 8,
		Headroom:     0.7,
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, line := range p.Lines() {
		fmt.Println(line)
	}
	// Output:
	// search: limits 600 requests/min; 800 ms mean latency, 8 calls/turn
	// requests/min allowed by rpm: 600
	// binding limit: rpm at 600 requests/min
	// usable with headroom 0.7: 600 × 0.7 = 420 requests/min
	// reserved for retries: 600 − 420 = 180 requests/min
	// Little's-law cap: floor(10 requests/s × 0.7 × 0.8 s) = floor(5.6) = 5 in flight
	// turns/min sustainable: floor(420 requests/min ÷ 8 calls/turn) = floor(52.5) = 52
	// token bucket: 420 requests/min
}

// 10,000 requests/min at 400 ms mean latency with 70% headroom: Little's
// law gives 46.67 requests in flight, rounded down.
func ExampleRecommend_littlesLaw() {
	p, err := reports.Recommend(reports.Service{RPM: 10000, MeanLatency: 400 * time.Millisecond, CallsPerTurn: 8, Headroom: 0.7})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%.2f → cap %d, %d turns/min\n", p.LittleCap, p.MaxInFlight, p.TurnsPerMinute)
	// Output:
	// 46.67 → cap 46, 875 turns/min
}

func ExampleChooseCap() {
	sweep := []reports.SweepPoint{
		{Cap: 8, P95Ms: 1540, AnsweredShare: 1, GoodputPerS: 89},
		{Cap: 16, P95Ms: 1310, AnsweredShare: 1, GoodputPerS: 121},
		{Cap: 32, P95Ms: 1220, AnsweredShare: 1, GoodputPerS: 142, RateLimitedShare: 0.0004},
		{Cap: 64, P95Ms: 1170, AnsweredShare: 1, GoodputPerS: 147, RateLimitedShare: 0.0061}, // too many 429s
	}
	chosen, ok := reports.ChooseCap(sweep, reports.DefaultMaxRateLimitedShare)
	fmt.Println(chosen, ok)
	// Output:
	// 32 true
}

func ExampleWriteTable() {
	r := &sim.Results{
		Scenario: "tier3", Seed: 42, SimbenchVersion: "v0.3.0", DurationS: 600, Mode: "virtual",
		Strategies: []sim.StrategyResult{
			{
				Name: "unbounded", Turns: 3010, FailedTurns: 211, Calls: 24080, Attempts: 30920,
				TurnLatencyMs:   sim.Summary{P50: 1210, P95: 9870, P99: 21400},
				AnswerLatencyMs: sim.AnswerSummary{P50: 1250, P95: sim.Unanswered, P99: sim.Unanswered, AnsweredShare: 0.93},
				GoodputPerS:     40.1, RateLimited: 6840, EarlyRetries: 1070, WastedWorkS: 206.3,
				PeakInFlight: map[string]int{"llm": 400},
			},
			{
				Name: "bounded-8", MaxInFlight: 8, Turns: 3340, Calls: 26720, Attempts: 26720,
				TurnLatencyMs:   sim.Summary{P50: 980, P95: 1540, P99: 1890},
				AnswerLatencyMs: sim.AnswerSummary{P50: 980, P95: 1540, P99: 1890, AnsweredShare: 1},
				GoodputPerS:     44.5, WastedWorkS: 1.6,
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
	// unbounded  3,010            211   24,080     30,920    1,210    9,870   21,400            —       40.10   6,840        0   1,070      206.3       0    400
	// bounded-8  3,340              0*  26,720     26,720      980    1,540    1,890        1,540*      44.50*      0*       0       0*       1.6*      0      8
	//
	// * best in its column; latencies are per turn; turns, calls and latencies are marked only among the strategies that fail the fewest turns
	// answer p95: turn latency with every failed turn counted as never answered (—: the 95th-percentile turn got no answer)
	// early: retries sent before the server's Retry-After; wasted s: server seconds spent on results nobody read
	// races: overlapping writes to one resource; peak: most attempts in flight at llm
}

// Set a workload's demand against what a limit sustains: 600 requests/min
// at 8 calls a turn and headroom 0.7 carries 52.5 turns/min, so 20 sessions
// offering 2 turns/min each fit, and 40 do not.
func ExampleCheckLoad() {
	plan, err := reports.Recommend(reports.Service{Name: "sources", RPM: 600, MeanLatency: 400 * time.Millisecond, CallsPerTurn: 8})
	if err != nil {
		log.Fatal(err)
	}
	for _, sessions := range []int{20, 40} {
		check, _ := reports.CheckLoad(float64(sessions)*2/60, sessions, []reports.Plan{plan})
		fmt.Printf("%d sessions: fits %v, ×%.2f, %d fit\n", sessions, check.Fits(), check.Ratio, check.FitSessions)
	}
	// Output:
	// 20 sessions: fits true, ×0.76, 26 fit
	// 40 sessions: fits false, ×1.52, 26 fit
}
