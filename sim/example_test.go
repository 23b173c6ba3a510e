package sim_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sim"
)

// Run a built-in scenario in virtual time: the same seed gives the same
// figures on every machine.
func ExampleRun() {
	sc, err := scenarios.Builtin("burst-8")
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := sim.Run(context.Background(), sc, sim.Options{Duration: time.Minute})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range res.Strategies {
		fmt.Printf("%-12s 429s %4d  failed turns %2d  p95 %6.0f ms\n", s.Name, s.RateLimited, s.FailedTurns, s.TurnLatencyMs.P95)
	}
	// Output:
	// no-jitter    429s  224  failed turns  2  p95  31254 ms
	// full-jitter  429s  388  failed turns  0  p95  23085 ms
	// paced        429s    1  failed turns  0  p95   5612 ms
}

// Sweep one strategy's cap to see where more concurrency stops paying.
func ExampleSweep() {
	sc, err := scenarios.Builtin("research-agent")
	if err != nil {
		fmt.Println(err)
		return
	}
	// semaphore-4 caps one service, sources: the sweep varies that cap.
	caps := []int{1, 2, 4, 8}
	rows, err := sim.Sweep(context.Background(), sc, "semaphore-4", caps, nil, sim.Options{Duration: 2 * time.Minute})
	if err != nil {
		fmt.Println(err)
		return
	}
	for i, r := range rows[0].Results {
		fmt.Printf("sources cap %d: %.2f calls/s\n", caps[i], r.GoodputPerS)
	}
	// Output:
	// sources cap 1: 1.73 calls/s
	// sources cap 2: 3.47 calls/s
	// sources cap 4: 7.13 calls/s
	// sources cap 8: 9.96 calls/s
}

// Measure what a workload offers with every limit lifted, to set against
// what the limits sustain: tier3's 80 agents want far more turns than
// 10,000 requests/min at 8 calls a turn (1,250 turns/min) carries.
func ExampleDemand() {
	sc, err := scenarios.Builtin("tier3")
	if err != nil {
		fmt.Println(err)
		return
	}
	perS, err := sim.Demand(context.Background(), sc, sim.Options{Duration: 2 * time.Minute})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("tier3 offers %.0f turns/min\n", perS*60)
	// Output:
	// tier3 offers 2234 turns/min
}

// Keep runs in a cache: the second Run reads the strategy's run at the
// seed instead of simulating it, and gives the same figures.
func ExampleCache() {
	sc, err := scenarios.Builtin("burst-8")
	if err != nil {
		fmt.Println(err)
		return
	}
	dir, err := os.MkdirTemp("", "simbench-cache-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	cache := sim.NewCache(dir, "example", nil)
	opts := sim.Options{Strategies: []string{"paced"}, Duration: 10 * time.Second, Cache: cache}
	first, err := sim.Run(context.Background(), sc, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	again, err := sim.Run(context.Background(), sc, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("simulated:", len(cache.Simulated()), "reused:", cache.Reused())
	fmt.Println("same calls:", first.Strategies[0].Calls == again.Strategies[0].Calls)
	// Output:
	// simulated: 1 reused: 1
	// same calls: true
}
