package spec_test

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/simbench/simbench/spec"
)

// Problems is the one validator of a service: it lists every problem at
// once, each under the key a scenario file spells, so that a loader can
// point at the line.
func ExampleConfig_Problems() {
	c := spec.Config{
		Name: "search",
		RPM:  -5,
		Latency: spec.Dist[time.Duration]{
			Kind: spec.DistLognormal, P50: 100 * time.Millisecond, P95: 100 * time.Millisecond,
		},
	}
	for _, p := range c.Problems() {
		fmt.Println(p)
	}
	// Output:
	// rpm: is -5; it must not be negative
	// latency.p95: p95 (100ms) equals p50; a lognormal needs p95 above p50 (for a fixed value, use a constant)
}

// A Sampler draws from a distribution with the stream it is given: the same
// seed gives the same draws, in virtual runs and in the fake servers alike.
func ExampleSampler() {
	d := spec.Dist[time.Duration]{Kind: spec.DistUniform, Min: 200 * time.Millisecond, Max: 900 * time.Millisecond}
	s := spec.NewSampler(d)
	rng := rand.New(rand.NewPCG(42, 1))
	for range 3 {
		v := s.Duration(rng)
		fmt.Println(v >= d.Min && v <= d.Max)
	}
	fmt.Printf("mean %v\n", time.Duration(s.Mean()))
	// Output:
	// true
	// true
	// true
	// mean 550ms
}
