package decision_test

import (
	"fmt"
	"log"
	"time"

	"github.com/simbench/simbench/decision"
	"github.com/simbench/simbench/results"
)

// The worked numbers: 600 requests/min, 8 calls per turn, 70% headroom.
func ExampleRecommend() {
	p, err := decision.Recommend(decision.Service{
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
	p, err := decision.Recommend(decision.Service{RPM: 10000, MeanLatency: 400 * time.Millisecond, CallsPerTurn: 8, Headroom: 0.7})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%.2f → cap %d, %d turns/min\n", p.LittleCap, p.MaxInFlight, p.TurnsPerMinute)
	// Output:
	// 46.67 → cap 46, 875 turns/min
}

func ExampleChooseCap() {
	sweep := []results.SweepPoint{
		{Cap: 8, P95Ms: 1540, AnsweredShare: 1, GoodputPerS: 89},
		{Cap: 16, P95Ms: 1310, AnsweredShare: 1, GoodputPerS: 121},
		{Cap: 32, P95Ms: 1220, AnsweredShare: 1, GoodputPerS: 142, RateLimitedShare: 0.0004},
		{Cap: 64, P95Ms: 1170, AnsweredShare: 1, GoodputPerS: 147, RateLimitedShare: 0.0061}, // too many 429s
	}
	chosen, ok := decision.ChooseCap(sweep, decision.DefaultMaxRateLimitedShare)
	fmt.Println(chosen, ok)
	// Output:
	// 32 true
}

// Set a workload's demand against what a limit sustains: 600 requests/min
// at 8 calls a turn and headroom 0.7 carries 52.5 turns/min, so 20 sessions
// offering 2 turns/min each fit, and 40 do not.
func ExampleCheckLoad() {
	plan, err := decision.Recommend(decision.Service{Name: "sources", RPM: 600, MeanLatency: 400 * time.Millisecond, CallsPerTurn: 8})
	if err != nil {
		log.Fatal(err)
	}
	for _, sessions := range []int{20, 40} {
		check, _ := decision.CheckLoad(float64(sessions)*2/60, sessions, []decision.Plan{plan})
		fmt.Printf("%d sessions: fits %v, ×%.2f, %d fit\n", sessions, check.Fits(), check.Ratio, check.FitSessions)
	}
	// Output:
	// 20 sessions: fits true, ×0.76, 26 fit
	// 40 sessions: fits false, ×1.52, 26 fit
}
