package live_test

import (
	"errors"
	"fmt"

	"github.com/simbench/simbench/live"
	"github.com/simbench/simbench/scenarios"
)

// Check a live run's options before starting it: a time scale no machine
// can play, or shares that do not match the processes, is refused with
// ErrBadLiveOption.
func ExampleLiveOptions_Validate() {
	sc, err := scenarios.Builtin("burst-8")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, o := range []live.LiveOptions{
		{TimeScale: 0.05},
		{TimeScale: 1e-12},
		{TimeScale: 0.05, Processes: 3, Shares: []float64{2, 1}},
	} {
		err := o.Validate(sc)
		fmt.Println(errors.Is(err, live.ErrBadLiveOption), err)
	}
	// Output:
	// false <nil>
	// true live: time scale 1e-12: want a number from 1e-06 to 1; the fake services play faster than life, not slower (0.01 plays 10 minutes in 6 seconds)
	// true live: 2 shares for 3 processes
}
