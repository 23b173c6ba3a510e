package sched

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// outage is the closed-form case of a route: the primary is in an outage
// for the first outageEnd of the run, answering every attempt with a 429
// whose Retry-After is 60 s; the fallback always answers. Every attempt
// takes outageLatency. One call a second is submitted from 0 to calls-1 s, each
// with a 15 s deadline.
const (
	outageEnd     = 120 * time.Second
	outageRA      = 60 * time.Second
	outageLatency = 100 * time.Millisecond
	outageCalls   = 180
	deadline15    = 15 * time.Second
)

// routedOutage runs the outage case under route and returns the results by
// call id, the starts and the primary's 429s.
func routedOutage(t *testing.T, rc RouteConfig) (map[string]Result, []startRec, int) {
	t.Helper()
	rc.Deployments = []string{"primary", "fallback"}
	cfg := Config{
		Services:    map[string]ServiceConfig{"primary": {}, "fallback": {}},
		Routes:      map[string]RouteConfig{"chat": rc},
		Retry:       RetryPolicy{Backoff: BackoffExponential, Base: time.Second, Cap: 10 * time.Second, MaxAttempts: 5},
		CallTimeout: deadline15,
	}
	d := newDriver(t, cfg, nil)
	limited := 0
	d.at = func(dep string, _ *Call, _ int, now time.Duration) (time.Duration, Outcome) {
		if dep == "primary" && now < outageEnd {
			limited++
			return outageLatency, Outcome{Class: ClassRateLimited, Status: 429, RetryAfter: outageRA, HasRetryAfter: true}
		}
		return outageLatency, Succeeded("ok")
	}
	for i := range outageCalls {
		d.run(time.Duration(i) * time.Second)
		d.now = time.Duration(i) * time.Second
		d.submit(Call{ID: fmt.Sprint(i), Service: "chat"})
	}
	d.run(time.Hour)
	if len(d.results) != outageCalls {
		t.Fatalf("%d results for %d calls", len(d.results), outageCalls)
	}
	return d.results, d.starts, limited
}

// TestRouteOutageClosedForm checks the figures of a primary in a known
// outage against their closed form.
//
// Falling back after 15 s (or past the deadline), with a cooldown of 60 s
// after 3 429s in a row: the calls of seconds 0, 1 and 2 meet the
// primary's 429 at s+0.1 s and fall back; the third 429, at 2.1 s, cools
// the primary until 62.1 s, so the calls of seconds 3 to 62 go straight to
// the fallback. The call of second 63 finds the primary warm and still in
// its outage: 63, 64 and 65 fall back, the 429 at 65.1 s cools it until
// 125.1 s, and 66 to 125 go to the fallback. From 126 on the outage is
// over and the primary answers. So 6 calls fall back, 120 start on the
// fallback, 54 stay on the primary; every call answers, 6 429s in all,
// each call in one outageLatency (0.1 s) or two (0.2 s) for those that fell
// back.
//
// Always waiting (NoFallBack, no cooldown): every call before 120 s meets
// the 429 at s+0.1 s, and its retry 60 s later would pass its 15 s
// deadline, so it fails at once; the 60 calls from 120 s on answer.
func TestRouteOutageClosedForm(t *testing.T) {
	fellBack := func(s int) bool { return s <= 2 || (s >= 63 && s <= 65) }
	direct := func(s int) bool { return (s >= 3 && s <= 62) || (s >= 66 && s <= 125) }
	tests := []struct {
		name string
		give RouteConfig
	}{
		{"threshold 15s", RouteConfig{FallBackAfter: 15 * time.Second, CooldownAfter: 3, Cooldown: 60 * time.Second}},
		// A threshold above the server's 60 s: the deadline alone
		// decides, and with 15 s left it falls back all the same.
		{"deadline decides", RouteConfig{FallBackAfter: 90 * time.Second, CooldownAfter: 3, Cooldown: 60 * time.Second}},
		{"always fall back", RouteConfig{FallBackAfter: 0, CooldownAfter: 3, Cooldown: 60 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			results, starts, limited := routedOutage(t, tt.give)
			if limited != 6 {
				t.Errorf("primary answered %d 429s, want 6", limited)
			}
			for s := range outageCalls {
				r := results[fmt.Sprint(s)]
				want := Result{Deployment: "primary", Fallbacks: 0, Attempts: 1, Running: outageLatency}
				switch {
				case fellBack(s):
					want = Result{Deployment: "fallback", Fallbacks: 1, Attempts: 2, Running: 2 * outageLatency}
				case direct(s):
					want.Deployment = "fallback"
				}
				if r.Err != nil || r.Deployment != want.Deployment || r.Fallbacks != want.Fallbacks || r.Attempts != want.Attempts || r.Running != want.Running {
					t.Fatalf("call of second %d: %s after %d attempts, %d fallbacks, ran %v (err %v); want %s, %d, %d, %v",
						s, r.Deployment, r.Attempts, r.Fallbacks, r.Running, r.Err, want.Deployment, want.Attempts, want.Fallbacks, want.Running)
				}
			}
			// No attempt reaches the primary while it cools down.
			for _, st := range starts {
				if st.service == "primary" && (inWindow(st.at, 2100*time.Millisecond, 62100*time.Millisecond) || inWindow(st.at, 65100*time.Millisecond, 125100*time.Millisecond)) {
					t.Fatalf("call %s started on the primary at %v, in its cooldown", st.id, st.at)
				}
			}
		})
	}
	t.Run("always wait", func(t *testing.T) {
		results, _, limited := routedOutage(t, RouteConfig{FallBackAfter: NoFallBack})
		answered := 0
		for s := range outageCalls {
			r := results[fmt.Sprint(s)]
			if r.Err == nil {
				answered++
			}
			if wantOK := time.Duration(s)*time.Second >= outageEnd; (r.Err == nil) != wantOK || r.Deployment != "primary" || r.Fallbacks != 0 {
				t.Fatalf("call of second %d: err %v on %s with %d fallbacks; want success %v on the primary", s, r.Err, r.Deployment, r.Fallbacks, wantOK)
			}
			if r.Err != nil && !errors.Is(r.Err, ErrDeadline) {
				t.Fatalf("call of second %d failed with %v, want a deadline", s, r.Err)
			}
		}
		if want := outageCalls - int(outageEnd/time.Second); answered != want || limited != int(outageEnd/time.Second) {
			t.Fatalf("%d answered, %d 429s; want %d and %d", answered, limited, want, int(outageEnd/time.Second))
		}
	})
}

func inWindow(at, from, to time.Duration) bool { return at >= from && at < to }

// TestRouteConfigErrors checks that each impossible route is refused with
// a message naming it.
func TestRouteConfigErrors(t *testing.T) {
	svcs := map[string]ServiceConfig{"a": {}, "b": {}}
	tests := []struct {
		give RouteConfig
		name string
		want string
	}{
		{RouteConfig{}, "r", "lists no deployment"},
		{RouteConfig{Deployments: []string{"a", "x"}}, "r", `deployment "x" is not a key`},
		{RouteConfig{Deployments: []string{"a", "a"}}, "r", `lists deployment "a" twice`},
		{RouteConfig{Deployments: []string{"a"}}, "a", "has the name of a service"},
		{RouteConfig{Deployments: []string{"a"}, FallBackAfter: -2}, "r", "is negative"},
		{RouteConfig{Deployments: []string{"a"}, CooldownAfter: 3}, "r", "needs both"},
		{RouteConfig{Deployments: []string{"a"}, Cooldown: time.Second}, "r", "needs both"},
		{RouteConfig{Deployments: []string{"a"}, Policy: 7}, "r", "unknown policy"},
	}
	for _, tt := range tests {
		_, err := New(Config{Services: svcs, Routes: map[string]RouteConfig{tt.name: tt.give}})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: got %v, want an error with %q", tt.give, err, tt.want)
		}
	}
	if _, err := New(Config{Services: svcs, Routes: map[string]RouteConfig{"r": {Deployments: []string{"b", "a"}, FallBackAfter: NoFallBack}}}); err != nil {
		t.Fatal(err)
	}
}

// TestRouteProperties checks routes over random call sets, caps, buckets
// and outcomes, with a primary that answers many 429s: every call gets
// exactly one result, caps and buckets hold, and no attempt starts on a
// deployment while it cools down. The cooldowns are worked out again from
// the attempts' outcomes as the Hook reports them, by the rule RouteConfig
// states: CooldownAfter 429s in a row from a deployment, a success
// resetting the count.
func TestRouteProperties(t *testing.T) {
	forSeeds(t, propertyChecks, checkRouteProperties)
}

func checkRouteProperties(rt *testing.T, g *draws) {
	services := []string{"a", "b", "c"}
	cfg := drawConfig(g, services)
	order := g.permutation("deployment order", 3)
	deps := []string{services[order[0]], services[order[1]], services[order[2]]}[:g.intRange("deployments", 1, 3)]
	route := RouteConfig{
		Deployments:   deps,
		FallBackAfter: []time.Duration{NoFallBack, 0, 500 * time.Millisecond, 2 * time.Second}[g.intRange("fall back after", 0, 3)],
	}
	if k := g.intRange("cooldown after", 0, 3); k > 0 {
		route.CooldownAfter, route.Cooldown = k, time.Duration(g.intRange("cooldown ms", 1, 5000))*time.Millisecond
	}
	cfg.Routes = map[string]RouteConfig{"r": route}
	if route.FallBackAfter > 0 {
		// Without deadlines a 429 counts toward a cooldown by its wait
		// alone, which the oracle below can tell.
		cfg.CallTimeout, cfg.TurnTimeout = 0, 0
	}
	cs := drawCalls(g, services)
	for i := range cs {
		if g.intRange("routed", 0, 2) > 0 {
			cs[i].Service = "r"
		}
	}
	drawPriorities(g, &cfg, cs)

	svcPeak, svcNow := map[string]int{}, map[string]int{}
	streak, coolUntil := map[string]int{}, map[string]time.Duration{}
	var bad []string
	var d *vdriver
	var cooled, told []string // cooldowns by the oracle, and as the Core tells them
	cfg.Hook = func(e Event) {
		switch e.Kind {
		case EventPaused:
			if strings.Contains(e.Reason, "cools down") {
				told = append(told, fmt.Sprint(e.Service, "@", e.At))
			}
		case EventStarted:
			svcNow[e.Service]++
			svcPeak[e.Service] = max(svcPeak[e.Service], svcNow[e.Service])
			if e.At < coolUntil[e.Service] {
				bad = append(bad, fmt.Sprintf("call %s started on %s at %v, cooling down until %v", e.CallID, e.Service, e.At, coolUntil[e.Service]))
			}
		case EventFinished, EventCancelled:
			svcNow[e.Service]--
		}
		if e.Kind != EventFinished || route.CooldownAfter == 0 || route.FallBackAfter == NoFallBack || !slices.Contains(deps, e.Service) {
			return
		}
		switch o := d.outcomes[e.Attempt]; {
		case e.Class == ClassSuccess:
			streak[e.Service] = 0
		case e.Class == ClassRateLimited && (route.FallBackAfter == 0 || (o.HasRetryAfter && o.RetryAfter > route.FallBackAfter)):
			other := false // another deployment is warm
			for _, d := range deps {
				other = other || (d != e.Service && coolUntil[d] <= e.At)
			}
			if streak[e.Service]++; streak[e.Service] >= route.CooldownAfter && other {
				streak[e.Service], coolUntil[e.Service] = 0, e.At+route.Cooldown
				cooled = append(cooled, fmt.Sprint(e.Service, "@", e.At))
			}
		}
	}
	primary := deps[0]
	outage := time.Duration(g.intRange("outage s", 0, 30)) * time.Second
	ra := time.Duration(g.intRange("outage retry-after s", 0, 60)) * time.Second
	exec := drawExecutor(g, cfg)
	d = newDriver(rt, cfg, nil)
	d.at = func(dep string, c *Call, n int, now time.Duration) (time.Duration, Outcome) {
		lat, o := exec(c, n, now)
		if dep == primary && now < outage {
			o = Outcome{Class: ClassRateLimited, Status: 429, RetryAfter: ra, HasRetryAfter: ra > 0}
		}
		return lat, o
	}
	d.tagValues, d.late = true, true
	turns := runInTurns(g, d, cs)

	checkResults(rt, d, len(cs), turns)
	checkCaps(rt, d, cfg, services, svcPeak)
	checkBuckets(rt, d, cfg, services)
	checkDependencies(rt, d, cs)
	if !slices.Equal(cooled, told) {
		rt.Fatalf("cooldowns began at %v, the rule says at %v", told, cooled)
	}
	if len(bad) > 0 {
		rt.Fatalf("%d attempts in a cooldown, the first: %s", len(bad), bad[0])
	}
	for _, c := range cs {
		r := d.results[c.ID]
		switch {
		case c.Service != "r" && (r.Deployment != "" || r.Fallbacks != 0):
			rt.Fatalf("call %s names service %q but reports deployment %q, %d fallbacks", c.ID, c.Service, r.Deployment, r.Fallbacks)
		case c.Service == "r" && !slices.Contains(deps, r.Deployment):
			rt.Fatalf("call %s of route r reports deployment %q, not one of %v", c.ID, r.Deployment, deps)
		case route.FallBackAfter == NoFallBack && c.Service == "r" && (r.Fallbacks != 0 || r.Deployment != primary):
			rt.Fatalf("call %s went to %s after %d fallbacks on a route that never falls back from %s", c.ID, r.Deployment, r.Fallbacks, primary)
		}
	}
}
