package sched_test

import (
	"fmt"
	"time"

	"github.com/simbench/simbench/sched"
)

// A route "chat" is served by a primary and a fallback. The primary
// answers 429 asking for 60 s, longer than the route's 15 s threshold, so
// the call falls back at once instead of waiting; the Result says where
// it went. Each ActStart names the deployment its attempt goes to.
func ExampleRouteConfig() {
	core, _ := sched.New(sched.Config{
		Services: map[string]sched.ServiceConfig{"primary": {}, "fallback": {}},
		Routes: map[string]sched.RouteConfig{"chat": {
			Deployments:   []string{"primary", "fallback"},
			FallBackAfter: 15 * time.Second,
			CooldownAfter: 3, Cooldown: time.Minute,
		}},
	})
	core.Submit(0, sched.Turn{Calls: []sched.Call{{ID: "q", Service: "chat"}}})
	var acts []sched.Action
	for step := 0; step < 3; step++ {
		acts = core.Actions(acts[:0])
		for _, a := range acts {
			switch a.Kind {
			case sched.ActStart:
				fmt.Printf("attempt %d of %s goes to %s\n", a.N, a.Call.ID, a.Deployment)
				now := core.Now() + 100*time.Millisecond
				if a.Deployment == "primary" {
					core.Complete(now, a.Attempt, sched.Outcome{Class: sched.ClassRateLimited, Status: 429, RetryAfter: time.Minute, HasRetryAfter: true})
				} else {
					core.Complete(now, a.Attempt, sched.Succeeded("answer"))
				}
			case sched.ActResult:
				r := a.Result
				fmt.Printf("%v %s: %v from %s after %d fallback\n", r.Finished, r.ID, r.Value, r.Deployment, r.Fallbacks)
			}
		}
	}
	// Output:
	// attempt 1 of q goes to primary
	// attempt 2 of q goes to fallback
	// 200ms q: answer from fallback after 1 fallback
}
