package results_test

import (
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/simbench/simbench/results"
)

// Read refuses a results file that simbench could not have written,
// listing every problem with the file and the field.
func ExampleRead_refused() {
	dir, err := os.MkdirTemp("", "results-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, results.ResultsFile)
	data := `{"scenario": "../x", "mode": "quantum", "duration_s": -1, "strategies": []}`
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		log.Fatal(err)
	}
	_, err = results.Read(path)
	var bad *results.Error
	if errors.As(err, &bad) {
		for _, p := range bad.Problems {
			fmt.Printf("%s: %s\n", p.Field, p.Message)
		}
	}
	// Output:
	// scenario: "../x" starts with '.'; a scenario name starts with a letter or a digit, since it names the folder its results go to
	// duration_s: is -1; want seconds above 0 and at most 63072000 (two years)
	// mode: is "quantum"; want "virtual" or "live"
	// strategies: is empty; a run has at least one strategy
}

// Check applies Read's checks to results held in memory.
func ExampleCheck() {
	res := &results.Results{Scenario: "tier3", Mode: "virtual", DurationS: 600,
		Strategies: []results.StrategyResult{{Name: "bounded-8", Attempts: 10, RateLimited: 12}}}
	for _, p := range results.Check("run.json", res) {
		fmt.Println(p)
	}
	// Output:
	// run.json: strategies[0].rate_limited: is 12, more than the 10 attempts: every 429 answers an attempt
}
