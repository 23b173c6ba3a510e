package calibrate_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/simbench/simbench/calibrate"
)

// A trace of `simbench run --trace` holds a section per strategy; pick one
// with ReadOptions.Strategy, as `calibrate --strategy` does.
func ExampleCalibrator_Strategies() {
	dir, err := os.MkdirTemp("", "calibrate-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "run.jsonl")
	trace := `{"simbench_trace":1,"strategy":"sequential"}
{"turn":1,"service":"api","tool":"search","start":0,"end":0.2,"outcome":"success"}
{"simbench_trace":1,"strategy":"unbounded"}
{"turn":1,"service":"api","tool":"search","start":0,"end":0.3,"outcome":"rate_limited"}
`
	if err := os.WriteFile(path, []byte(trace), 0o644); err != nil {
		log.Fatal(err)
	}
	all := calibrate.New(calibrate.Options{})
	if err := all.ReadFile(path, calibrate.ReadOptions{}); err != nil {
		log.Fatal(err)
	}
	fmt.Println("strategies:", all.Strategies())
	one := calibrate.New(calibrate.Options{})
	if err := one.ReadFile(path, calibrate.ReadOptions{Strategy: "sequential"}); err != nil {
		log.Fatal(err)
	}
	fmt.Println("attempts of sequential:", one.Records())
	// Output:
	// strategies: [sequential unbounded]
	// attempts of sequential: 1
}
