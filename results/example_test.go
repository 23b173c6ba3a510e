package results_test

import (
	"fmt"
	"log"
	"os"

	"github.com/simbench/simbench/results"
)

// Write and Read are the one writer and reader of results.json: what one
// writes, the other reads back field for field.
func Example() {
	dir, err := os.MkdirTemp("", "results-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	res := &results.Results{
		Scenario:  "tier3",
		Seed:      42,
		Mode:      "virtual",
		DurationS: 600,
		Strategies: []results.StrategyResult{
			{Name: "bounded-8", Turns: 120, Calls: 960, Attempts: 1004, RateLimited: 44},
		},
	}
	if err := results.Write(dir, res); err != nil {
		log.Fatal(err)
	}
	back, err := results.Read(dir) // a directory holding results.json, or the file
	if err != nil {
		log.Fatal(err)
	}
	s := back.Strategy("bounded-8")
	fmt.Printf("%s seed %d: %s made %d attempts for %d calls, %d rate limited\n",
		back.Scenario, back.Seed, s.Name, s.Attempts, s.Calls, s.RateLimited)
	// Output: tier3 seed 42: bounded-8 made 1004 attempts for 960 calls, 44 rate limited
}

// SeedStatsOf summarises a strategy run over seeds: each figure's mean and
// 95% interval, keyed as results.json's seed_stats keys it.
func ExampleSeedStatsOf() {
	s := results.StrategyResult{Name: "bounded-64", SeedRuns: []results.StrategyResult{
		{Turns: 1000, GoodputPerS: 145.0}, {Turns: 1010, GoodputPerS: 146.0}, {Turns: 990, GoodputPerS: 144.0},
	}}
	stats := results.SeedStatsOf(&s)
	for _, key := range []string{"turns", "goodput_per_s"} {
		iv := stats[key]
		fmt.Printf("%s: %.1f ±%.2f (%d seeds)\n", key, iv.Mean, iv.HalfWidth(), iv.N)
	}
	// Output:
	// turns: 1000.0 ±24.84 (3 seeds)
	// goodput_per_s: 145.0 ±2.48 (3 seeds)
}
