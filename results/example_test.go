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
