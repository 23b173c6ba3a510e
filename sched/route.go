package sched

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/simbench/simbench/sched/internal/vocab"
	"github.com/simbench/simbench/sched/satmath"
)

// RoutePolicy says which of a route's deployments a call's attempt goes to.
type RoutePolicy uint8

const (
	// RouteOrdered sends a call to the first deployment, in the route's
	// order, that is not cooling down, and falls back to the next ones in
	// that order.
	RouteOrdered RoutePolicy = iota
)

var routePolicies = vocab.Vocab[RoutePolicy]{What: "route policy", Names: []string{"ordered"}}

// String returns the policy's name as written in scenario files.
func (p RoutePolicy) String() string { return routePolicies.Name(p) }

// ParseRoutePolicy returns the policy named s (as String prints it).
func ParseRoutePolicy(s string) (RoutePolicy, error) { return routePolicies.Parse(s) }

// RoutePolicies returns every route policy, in order.
func RoutePolicies() []RoutePolicy { return routePolicies.Choices() }

// MarshalText returns the policy's name (encoding.TextMarshaler).
func (p RoutePolicy) MarshalText() ([]byte, error) { return routePolicies.Marshal(p) }

// UnmarshalText sets p to the policy text names (encoding.TextUnmarshaler).
func (p *RoutePolicy) UnmarshalText(text []byte) error { return routePolicies.Unmarshal(p, text) }

// NoFallBack, as RouteConfig.FallBackAfter, never falls back: every call
// goes to the route's first deployment and waits out every 429 there, and
// a cooldown of that deployment holds the calls back instead of sending
// them elsewhere.
const NoFallBack time.Duration = -1

// RouteConfig describes a route: one logical service, named like a service
// in Call.Service, served by several deployments (providers, regions,
// keys), each a service of Config.Services with its own caps and buckets.
//
// Each call naming the route is sent to a deployment chosen by Policy. A
// 429 from a deployment sends the call on to the next deployment at once,
// instead of waiting, when the wait the server asks for (Retry-After)
// exceeds FallBackAfter or the call's remaining deadline. A deployment
// that answers CooldownAfter such 429s in a row cools down for Cooldown:
// no attempt is sent to it meanwhile, and calls waiting for it move to a
// deployment that is not cooling down. A deployment does not cool down
// while it is the last of its route that is warm: its calls would only
// wait.
//
// A fallback is not a retry: it does not count against
// RetryPolicy.MaxAttempts, and a call falls back at most once less than
// the route has deployments. Result.Deployment and Result.Fallbacks say
// where each call went.
type RouteConfig struct {
	// Deployments names the route's services, in order of preference;
	// each must be a key of Config.Services, listed once.
	Deployments []string
	// Policy picks the deployment of each call (0: RouteOrdered).
	Policy RoutePolicy
	// FallBackAfter is the longest server-given wait a call sits out on a
	// deployment; a 429 asking for longer sends it to the next deployment.
	// 0 falls back on every 429; NoFallBack never does.
	FallBackAfter time.Duration
	// CooldownAfter is the count of 429s in a row, each asking for a
	// wait the route would fall back on (longer than FallBackAfter or the
	// call's deadline), after which a deployment cools down for Cooldown
	// (0: never). A success resets the count; a 429 asking for a short
	// wait does not count. Under NoFallBack nothing cools down.
	CooldownAfter int
	Cooldown      time.Duration
}

// route is a Core's state of one route.
type route struct {
	name string
	cfg  RouteConfig
	deps []*serviceState
}

// validate reports the first impossible setting of route name.
func (r *RouteConfig) validate(name string, services map[string]ServiceConfig) error {
	if name == "" {
		return fmt.Errorf("sched: a route has an empty name")
	}
	if _, ok := services[name]; ok {
		return fmt.Errorf("sched: route %q has the name of a service; a call must name one or the other", name)
	}
	if len(r.Deployments) == 0 {
		return fmt.Errorf("sched: route %q lists no deployment", name)
	}
	if len(r.Deployments) > 1<<15 {
		return fmt.Errorf("sched: route %q lists %d deployments, more than %d", name, len(r.Deployments), 1<<15)
	}
	for i, d := range r.Deployments {
		if _, ok := services[d]; !ok {
			return fmt.Errorf("sched: route %q: deployment %q is not a key of Config.Services", name, d)
		}
		if slices.Index(r.Deployments, d) != i {
			return fmt.Errorf("sched: route %q lists deployment %q twice", name, d)
		}
	}
	if int(r.Policy) >= len(routePolicies.Names) {
		return fmt.Errorf("sched: route %q: unknown policy %d", name, r.Policy)
	}
	if r.FallBackAfter < 0 && r.FallBackAfter != NoFallBack {
		return fmt.Errorf("sched: route %q: fall-back threshold %v is negative (NoFallBack never falls back)", name, r.FallBackAfter)
	}
	if r.CooldownAfter < 0 || r.Cooldown < 0 {
		return fmt.Errorf("sched: route %q: negative cooldown (after %d 429s, for %v)", name, r.CooldownAfter, r.Cooldown)
	}
	if (r.CooldownAfter > 0) != (r.Cooldown > 0) {
		return fmt.Errorf("sched: route %q: a cooldown needs both a count of 429s (CooldownAfter %d) and a length (Cooldown %v)", name, r.CooldownAfter, r.Cooldown)
	}
	return nil
}

// initRoutes builds the Core's routes; each deployment learns the first
// route, by name, that lists it, whose cooldown applies to calls naming it
// directly.
func (c *Core) initRoutes() {
	if len(c.cfg.Routes) == 0 {
		return
	}
	c.routes = make(map[string]*route, len(c.cfg.Routes))
	for _, name := range slices.Sorted(maps.Keys(c.cfg.Routes)) {
		rc := c.cfg.Routes[name]
		rc.Deployments = slices.Clone(rc.Deployments)
		rt := &route{name: name, cfg: rc}
		for _, d := range rc.Deployments {
			s := c.service(d)
			if s.route == nil {
				s.route = rt
			}
			rt.deps = append(rt.deps, s)
		}
		c.routes[name] = rt
	}
}

// routeOf returns the route a call names, nil for a call naming a service.
func (c *Core) routeOf(cs *callState) *route {
	if !cs.routed {
		return nil
	}
	return c.routes[cs.call.Service]
}

// warm reports whether a deployment is not cooling down now.
func (c *Core) warm(s *serviceState) bool { return s.coolUntil <= c.now }

// pickDeployment returns the deployment a call of rt goes to: the first
// that is warm, or when all cool down the one that warms up first; a
// route that never falls back keeps every call on its first.
func (c *Core) pickDeployment(rt *route) *serviceState {
	best := rt.deps[0]
	if rt.cfg.FallBackAfter == NoFallBack {
		return best
	}
	for _, s := range rt.deps {
		if c.warm(s) {
			return s
		}
		if s.coolUntil < best.coolUntil {
			best = s
		}
	}
	return best
}

// nextDeployment returns the first warm deployment of rt after from, in
// the route's order, or nil.
func (c *Core) nextDeployment(rt *route, from *serviceState) *serviceState {
	i := slices.Index(rt.deps, from)
	for _, s := range rt.deps[i+1:] {
		if c.warm(s) {
			return s
		}
	}
	return nil
}

// moveTo sends a call that holds no slot to deployment s.
func (c *Core) moveTo(cs *callState, s *serviceState) {
	cs.svc = s
	if cs.fallbacks < 1<<15-1 {
		cs.fallbacks++
	}
}

// fallBack sends a call whose attempt a deployment answered with 429 to
// the next deployment of its route, at once, when the wait asked exceeds
// the route's threshold or the call's remaining deadline. It reports
// whether it did; if not, the call retries as usual.
func (c *Core) fallBack(cs *callState, o *Outcome) bool {
	rt := c.routeOf(cs)
	if rt == nil || int(cs.hops) >= len(rt.deps)-1 || !c.tooLong(rt, cs, o) {
		return false
	}
	wait := retryAfter(o)
	next := c.nextDeployment(rt, cs.svc)
	if next == nil {
		return false
	}
	from := cs.svc
	c.pauseOn(from, o)
	c.releaseSlot(cs)
	cs.hops++
	c.moveTo(cs, next)
	if c.cfg.Hook != nil {
		c.emitf(func() Event {
			return Event{Kind: EventRetry, Turn: cs.turn.id, Tag: cs.turn.tag, CallID: cs.call.ID, Service: from.name, N: int(cs.attempts), Class: o.Class,
				Reason: fmt.Sprintf("falls back from deployment %q to %q of route %q: the wait asked, %v, exceeds the threshold or the deadline", from.name, next.name, rt.name, wait), Server: o.HasRetryAfter}
		})
	}
	c.enqueue(cs)
	return true
}

// retryAfter returns the wait a 429 asks for (0 without one).
func retryAfter(o *Outcome) time.Duration {
	if o.HasRetryAfter {
		return o.RetryAfter
	}
	return 0
}

// tooLong reports whether a 429 asks call cs to wait longer than route rt
// lets it: longer than FallBackAfter (any wait, when it is 0), or past the
// call's deadline. Under NoFallBack no wait is.
func (c *Core) tooLong(rt *route, cs *callState, o *Outcome) bool {
	switch rt.cfg.FallBackAfter {
	case NoFallBack:
		return false
	case 0:
		return true
	}
	wait := retryAfter(o)
	return wait > rt.cfg.FallBackAfter || (cs.deadline > 0 && satmath.Add(c.now, wait) > cs.deadline)
}

// countStreak counts a deployment's 429s in a row that ask for too long a
// wait (tooLong: those a route falls back on) and starts its cooldown when
// they reach its route's CooldownAfter. A success resets the count; a 429
// asking for a short wait leaves it as it is.
func (c *Core) countStreak(cs *callState, o *Outcome) {
	s := cs.svc
	switch o.Class {
	case ClassSuccess:
		s.streak = 0
		return
	case ClassRateLimited:
	default:
		return
	}
	rt := c.routeOf(cs)
	if rt == nil {
		rt = s.route
	}
	if !c.tooLong(rt, cs, o) {
		return
	}
	s.streak++
	if rt.cfg.CooldownAfter == 0 || s.streak < rt.cfg.CooldownAfter || !c.warmOther(rt, s) {
		return
	}
	s.streak = 0
	s.coolUntil = satmath.Add(c.now, rt.cfg.Cooldown)
	c.coolingUntil = max(c.coolingUntil, s.coolUntil)
	c.setTimer(timer{at: s.coolUntil, kind: timerCool, svc: s})
	if c.cfg.Hook != nil {
		c.emit(Event{Kind: EventPaused, Service: s.name, Delay: rt.cfg.Cooldown, Class: o.Class,
			Reason: fmt.Sprintf("deployment %q cools down after %d 429s in a row", s.name, rt.cfg.CooldownAfter)})
	}
}

// warmOther reports whether a deployment of rt other than s is warm: the
// last warm deployment of a route does not cool down, since its calls
// would have nowhere else to go and would only wait.
func (c *Core) warmOther(rt *route, s *serviceState) bool {
	for _, d := range rt.deps {
		if d != s && c.warm(d) {
			return true
		}
	}
	return false
}

// leaveCooling moves the calls queued for deployments that cool down to a
// warm deployment of their routes, head first, until a head has nowhere
// to go.
func (c *Core) leaveCooling() {
	for _, s := range c.svcList {
		if s.route == nil || c.warm(s) {
			continue
		}
		for {
			h := c.peek(s)
			if h == nil {
				break
			}
			rt := c.routeOf(h)
			if rt == nil {
				break
			}
			to := c.pickDeployment(rt)
			if to == s || !c.warm(to) {
				break
			}
			c.pop(s)
			c.moveTo(h, to)
			c.enqueue(h)
		}
	}
}

// reroute moves a call about to queue for a deployment that cools down to
// a warm one of its route, when there is one.
func (c *Core) reroute(cs *callState) {
	if rt := c.routeOf(cs); rt != nil {
		if to := c.pickDeployment(rt); to != cs.svc && c.warm(to) {
			c.moveTo(cs, to)
		}
	}
}
