package sched_test

import (
	"fmt"
	"time"

	"github.com/simbench/simbench/sched"
)

// A read whose first attempt hangs is hedged after 100 ms; the hedge
// answers 50 ms later and wins, and the Core tells the driver to cancel
// the first attempt.
func ExampleHedgePolicy() {
	core, _ := sched.New(sched.Config{
		Services: map[string]sched.ServiceConfig{"search": {}},
		Hedge:    &sched.HedgePolicy{After: 100 * time.Millisecond, Budget: 1},
	})
	core.Submit(0, sched.Turn{Calls: []sched.Call{{ID: "q", Service: "search", Idempotent: true}}})
	var acts []sched.Action
	wake := time.Duration(-1)
	for step := 0; step < 3; step++ {
		acts = core.Actions(acts[:0])
		for _, a := range acts {
			switch a.Kind {
			case sched.ActStart:
				fmt.Printf("%v start attempt %d (hedge %v)\n", core.Now(), a.Attempt, a.Hedge)
				if a.Hedge {
					core.Complete(core.Now()+50*time.Millisecond, a.Attempt, sched.Succeeded("result"))
				}
			case sched.ActCancel:
				fmt.Printf("%v cancel attempt %d\n", core.Now(), a.Attempt)
			case sched.ActResult:
				fmt.Printf("%v %s: %v, hedge won %v\n", core.Now(), a.Result.ID, a.Result.Value, a.Result.HedgeWon)
			case sched.ActWake:
				wake = a.At
			}
		}
		if wake >= 0 {
			core.Advance(wake)
			wake = -1
		}
	}
	// Output:
	// 0s start attempt 1 (hedge false)
	// 100ms start attempt 2 (hedge true)
	// 150ms cancel attempt 1
	// 150ms q: result, hedge won true
}
