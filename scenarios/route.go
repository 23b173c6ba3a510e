package scenarios

import (
	"slices"
	"strconv"
	"time"

	"github.com/simbench/simbench/sched"
)

// Route is a logical service served by several deployments, from a
// [routes.NAME] table: a tool names it where it would name a service, and
// each call goes to one of its deployments, each a service of the
// scenario with its own limits (sched.RouteConfig decides which).
type Route struct {
	// Name is the route's name, a key of [routes], distinct from every
	// service's.
	Name string
	// Deployments names the route's services, in order of preference.
	Deployments []string
	// Policy picks each call's deployment (policy; "ordered").
	Policy sched.RoutePolicy
	// FallBackAfter is the longest server-given wait a call sits out on a
	// deployment before it falls back to the next (fall_back_after; "0s":
	// on every 429, "never": sched.NoFallBack). A wait past the call's
	// deadline falls back whatever the threshold, unless it is "never".
	FallBackAfter time.Duration
	// CooldownAfter 429s in a row from a deployment keep calls off it for
	// Cooldown (cooldown_after, cooldown; 0: no cooldown).
	CooldownAfter int
	Cooldown      time.Duration
}

// Route returns the route called name, or nil.
func (s *Scenario) Route(name string) *Route {
	for i := range s.Routes {
		if s.Routes[i].Name == name {
			return &s.Routes[i]
		}
	}
	return nil
}

// FallBackNever is how a file spells sched.NoFallBack: fall_back_after =
// "never".
const FallBackNever = "never"

// decodeRoutes reads the [routes.NAME] tables; they come after the
// services, which they name, and before the tools, which name them.
func (d *decoder) decodeRoutes(sc *Scenario, t *table) {
	rt := t.sub("routes")
	if rt == nil {
		return
	}
	for _, name := range rt.keys() {
		if msg := NameProblem("route", name); msg != "" {
			rt.add(name, "%s", msg)
		}
		if _, ok := d.services[name]; ok {
			rt.add(name, "route %q has the name of a service; a tool names one or the other, so rename the route", name)
		}
		if r := rt.sub(name); r != nil {
			d.routes[name] = len(sc.Routes)
			sc.Routes = append(sc.Routes, d.decodeRoute(sc, r, name))
		}
	}
}

// decodeRoute reads one [routes.NAME] table.
func (d *decoder) decodeRoute(sc *Scenario, t *table, name string) Route {
	defer t.finish()
	r := Route{Name: name}
	if deps, ok := t.strings("deployments"); ok {
		for i, dep := range deps {
			key := t.key("deployments") + "[" + strconv.Itoa(i) + "]"
			if slices.Index(deps, dep) != i {
				d.add(key, "lists %q twice; each deployment is tried once per call", dep)
				continue
			}
			d.checkService(sc, key, dep)
		}
		if len(deps) == 0 {
			t.add("deployments", "is empty; list the services that serve the route, in order of preference, like deployments = %s", `["primary", "fallback"]`)
		}
		r.Deployments = deps
	} else if !t.has("deployments") {
		d.add(t.path, "missing deployments; list the services that serve the route, in order of preference, like deployments = %s", `["primary", "fallback"]`)
	}
	r.Policy = named(t, "policy", sched.RouteOrdered, sched.RoutePolicies())
	r.FallBackAfter = fallBackAfter(t, "fall_back_after")
	if n, ok := t.integer("cooldown_after", 1, MaxCap, whyCap); ok {
		r.CooldownAfter = int(n)
	}
	r.Cooldown, _ = t.duration("cooldown")
	switch {
	case r.CooldownAfter > 0 && r.Cooldown == 0:
		t.add("cooldown_after", "needs a cooldown to apply; add cooldown = \"60s\" or remove cooldown_after")
	case r.Cooldown > 0 && r.CooldownAfter == 0:
		t.add("cooldown", "needs cooldown_after, the 429s in a row that start it; add cooldown_after = 3 or remove cooldown")
	}
	return r
}

// fallBackAfter reads a fall-back threshold: a duration, or "never"
// (sched.NoFallBack). Absent, it is 0: fall back on every 429.
func fallBackAfter(t *table, k string) time.Duration {
	v, ok := t.get(k)
	if s, isStr := v.(string); ok && isStr {
		if s == FallBackNever {
			return sched.NoFallBack
		}
		if _, err := time.ParseDuration(s); err != nil {
			t.add(k, "is %q; write the longest wait to sit out, like \"15s\" (\"0s\": fall back on every 429), or %q", s, FallBackNever)
			return 0
		}
	}
	d, _ := t.duration(k)
	return d
}
