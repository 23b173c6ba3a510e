package scenarios_test

import (
	"errors"
	"fmt"

	"github.com/simbench/simbench/scenarios"
)

func ExampleOpen() {
	// A built-in name works from any directory; a path loads that file.
	sc, err := scenarios.Open("tier3")
	if err != nil {
		fmt.Println(err)
		return
	}
	llm := sc.Service("openai")
	fmt.Printf("%s: %v, %d sessions, %.0f RPM, %.0f TPM\n",
		sc.Name, sc.Duration, sc.Workload.Sessions, llm.RequestsPerMinute, llm.TokensPerMinute)
	for _, s := range sc.Strategies {
		fmt.Printf("%-10s max_in_flight=%d fan_out=%d retry=%s\n", s.Name, s.MaxInFlight, s.FanOut, s.Retry.Backoff)
	}
	// Output:
	// tier3: 10m0s, 80 sessions, 10000 RPM, 10000000 TPM
	// sequential max_in_flight=0 fan_out=1 retry=exponential
	// unbounded  max_in_flight=0 fan_out=0 retry=exponential
	// bounded-64 max_in_flight=64 fan_out=0 retry=full-jitter
}

func ExampleLoad() {
	_, err := scenarios.Load("testdata/negative-rate.toml")
	var bad *scenarios.Error
	if errors.As(err, &bad) {
		for _, p := range bad.Problems {
			fmt.Printf("line %d, %s: %s\n", p.Line, p.Key, p.Message)
		}
	}
	// Output:
	// line 10, services.s.rps: "-10/s" is negative; a rate must be greater than 0
	// line 11, services.s.tpm: is -1000/m; a rate must be greater than 0 (leave the key out for no limit)
}

func ExampleScenarioNameProblem() {
	// A scenario's name becomes the folder its results go to (out/NAME).
	for _, name := range []string{"tier3", "../../pwned", "a/b"} {
		if msg := scenarios.ScenarioNameProblem(name); msg != "" {
			fmt.Printf("%s: %s\n", name, msg)
		} else {
			fmt.Printf("%s: ok\n", name)
		}
	}
	// Output:
	// tier3: ok
	// ../../pwned: "../../pwned" starts with '.'; a scenario name starts with a letter or a digit, since it names the folder its results go to
	// a/b: "a/b" holds '/'; a scenario name holds only letters, digits, '.', '_' and '-' (ASCII), since it names the folder its results go to
}
