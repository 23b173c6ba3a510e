package sched_test

import (
	"fmt"
	"time"

	"github.com/simbench/simbench/sched"
)

// Two priority classes share one service that runs one call at a time: a
// batch backfill queued first, and interactive calls that came after it.
// The interactive class goes first; the batch class is guaranteed a
// quarter of the admissions while it waits, so it never starves.
func ExamplePriorityClass() {
	core, _ := sched.New(sched.Config{
		Services: map[string]sched.ServiceConfig{"api": {MaxInFlight: 1}},
		Priorities: []sched.PriorityClass{
			{Name: "interactive"},
			{Name: "batch", Share: 0.25},
		},
	})
	var calls []sched.Call
	for i := range 6 {
		calls = append(calls, sched.Call{ID: fmt.Sprint("batch-", i), Service: "api", Priority: 1})
	}
	for i := range 4 {
		calls = append(calls, sched.Call{ID: fmt.Sprint("chat-", i), Service: "api", Priority: 0})
	}
	core.Submit(0, sched.Turn{Calls: calls})
	// Each attempt answers 100 ms after it started.
	var acts []sched.Action
	for now := time.Duration(0); core.Turns() > 0; now += 100 * time.Millisecond {
		acts = core.Actions(acts[:0])
		for _, a := range acts {
			if a.Kind == sched.ActStart {
				fmt.Println(now, a.Call.ID)
				core.Complete(now+100*time.Millisecond, a.Attempt, sched.Succeeded(nil))
			}
		}
	}
	// Output:
	// 0s chat-0
	// 100ms chat-1
	// 200ms chat-2
	// 300ms batch-0
	// 400ms chat-3
	// 500ms batch-1
	// 600ms batch-2
	// 700ms batch-3
	// 800ms batch-4
	// 900ms batch-5
}
