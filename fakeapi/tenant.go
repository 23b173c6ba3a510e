package fakeapi

import (
	"fmt"
	"math/bits"
	"time"

	"github.com/simbench/simbench/sched/satmath"
	"github.com/simbench/simbench/spec"
)

// A tenant's limits: its rate limiters, one per kind of rate, and its
// concurrency cap. Admission handles every rate with one piece of code, a
// loop over the kinds below; what differs between the kinds is data: the
// Limit a 429 names, the window, the units a request needs (units) and the
// sets of kinds a rule applies to (requestRates, sharedRates).

// rate is a kind of rate limit a tenant may enforce. Admission checks the
// kinds in this order and a tie in wait goes to the first, so the order is
// part of the model's behaviour: it decides which limit a 429 names.
type rate uint8

// Kinds of rate limit.
const (
	// rateRPS: requests per second (ServiceConfig.RPS).
	rateRPS rate = iota
	// rateRPM: requests per minute (ServiceConfig.RPM).
	rateRPM
	// rateTPM: input plus output tokens per minute (ServiceConfig.TPM).
	rateTPM
	// rateITPM: input tokens per minute (ServiceConfig.InputTPM).
	rateITPM
	// rateOTPM: output tokens per minute (ServiceConfig.OutputTPM).
	rateOTPM
	numRates
)

// rates holds, per kind, the limit a rejection names, the window the limit
// counts over, and the windows in a minute (providers publish request
// limits per minute: a per-second limit as the per-minute budget it allows).
var rates = [numRates]struct {
	limit     Limit
	window    time.Duration
	perMinute int64
}{
	rateRPS:  {LimitRPS, time.Second, int64(time.Minute / time.Second)},
	rateRPM:  {LimitRPM, time.Minute, 1},
	rateTPM:  {LimitTPM, time.Minute, 1},
	rateITPM: {LimitITPM, time.Minute, 1},
	rateOTPM: {LimitOTPM, time.Minute, 1},
}

// rateSet is a set of kinds of rate limit, one bit per kind.
type rateSet uint8

// bit is the set holding only k.
func (k rate) bit() rateSet { return 1 << k }

// first is the first kind in s, in kind order; s must not be empty. A loop
// over the kinds of a set visits only its members:
//
//	for ; s != 0; s &= s - 1 { r := s.first(); … }
func (s rateSet) first() rate { return rate(bits.TrailingZeros8(uint8(s))) }

// Sets of kinds with a rule of their own.
const (
	// allRates holds every kind.
	allRates rateSet = 1<<numRates - 1
	// tokenRates count tokens, as many as a request needs of each.
	tokenRates rateSet = allRates &^ requestRates
	// requestRates count requests, one unit each: a rejected request spends
	// them too under ServiceConfig.CountRejected, and they are published as
	// Decision.Requests (the per-minute one when both are enforced).
	requestRates rateSet = 1<<rateRPS | 1<<rateRPM
	// sharedRates are the kinds an API key overrides (spec.Key), an event
	// changes (spec.EventLimits) and background traffic spends
	// (spec.Background); every tenant's input- and output-token limits
	// keep the service's values and only the driver's requests spend them.
	sharedRates rateSet = 1<<rateRPS | 1<<rateRPM | 1<<rateTPM
)

// units is what one request needs of each kind of rate limit.
type units [numRates]int64

// set makes u what a request of in input and out output tokens needs: one
// unit of each request rate, total (the tokens' saturated sum) of the
// token rate, in and out of the input- and output-token rates. (Set in
// place: a composite literal is built aside and copied, which costs the
// hot path a stalled load.)
func (u *units) set(in, out, total int64) {
	u[rateRPS], u[rateRPM], u[rateTPM], u[rateITPM], u[rateOTPM] = 1, 1, total, in, out
}

// tenant is the state of one API key (or of a service without keys): its
// limits, what it has in flight and its background traffic.
type tenant struct {
	// lim are the rate limiters, by kind; has says which are enforced. A
	// limiter an event turned off keeps its state for when it comes back.
	lim [numRates]limiter
	has rateSet
	// maxConc caps the requests in flight (0: no cap).
	maxConc  int
	inFlight int
	// base is the configured limits, which events change and restore.
	base      limitSet
	bgNext    time.Duration // next background arrival (spec.Background)
	bgWaiting int64         // background requests waiting for room
	// up is the level above under nested limits (spec.Config.Projects): a
	// key's project or organisation, a project's organisation; nil at the
	// top and for every tenant of a service without projects. level and
	// name say which level t is, for a 429 it causes (LevelNone without
	// projects).
	up    *tenant
	level Level
	name  string
	// admitted and limitedBy count a key's admissions and 429s, the
	// latter by the level that refused (nested limits only).
	admitted  int64
	limitedBy [numLevels]int64
}

// Level is a level of nested limits (spec.Config.Projects) that refused a
// request.
type Level uint8

// Levels, from the deepest.
const (
	// LevelNone: no level refused, or the service has no projects.
	LevelNone Level = iota
	// LevelKey: the API key's own limits.
	LevelKey
	// LevelProject: the limits the key's project shares.
	LevelProject
	// LevelOrganization: the service's limits, which every key shares.
	LevelOrganization
	numLevels
)

// levelNames are the levels' names.
var levelNames = [numLevels]string{"none", "key", "project", "organization"}

// String returns the level's name: "key", "project", "organization" or
// "none".
func (l Level) String() string {
	if l < numLevels {
		return levelNames[l]
	}
	return fmt.Sprintf("level(%d)", uint8(l))
}

// newTenant returns a tenant enforcing the service's limits, with key k's
// overrides (the zero spec.Key for a service without keys).
func (m *Model) newTenant(k spec.Key) tenant {
	c := m.cfg
	or := func(a, b int64) int64 {
		if a != 0 {
			return a
		}
		return b
	}
	var limit, burst units
	limit[rateRPS], burst[rateRPS] = or(k.RPS, c.RPS), c.Burst
	limit[rateRPM] = or(k.RPM, c.RPM)
	if limit[rateRPS] == 0 {
		burst[rateRPM] = c.Burst // Burst sizes the rpm bucket when there is no rps one
	}
	limit[rateTPM], burst[rateTPM] = or(k.TPM, c.TPM), c.TokenBurst
	limit[rateITPM], limit[rateOTPM] = c.InputTPM, c.OutputTPM
	t := tenant{maxConc: c.MaxConcurrent}
	if k.MaxConcurrent != 0 {
		t.maxConc = k.MaxConcurrent
	}
	for r := range numRates {
		if limit[r] > 0 {
			t.has |= r.bit()
			t.lim[r] = newLimiter(c.Algorithm, limit[r], rates[r].window, burst[r])
		}
	}
	t.base = limitsOf(&t)
	return t
}

// newLevel returns a level of nested limits above keys: the organisation
// (the service's limits, as newTenant sets them for a service without
// keys) or project p, which sets only its own limits.
func (m *Model) newLevel(p *spec.Project) tenant {
	if p == nil {
		t := m.newTenant(spec.Key{})
		t.level, t.name = LevelOrganization, m.cfg.Name
		return t
	}
	var limit units
	limit[rateRPS], limit[rateRPM], limit[rateTPM] = p.RPS, p.RPM, p.TPM
	t := m.ownTenant(limit, p.MaxConcurrent)
	t.level, t.name = LevelProject, p.Name
	return t
}

// ownTenant returns a tenant enforcing only limit and a cap of conc in
// flight (0: none), each bucket one window's worth: a key's or a
// project's level of nested limits.
func (m *Model) ownTenant(limit units, conc int) tenant {
	t := tenant{maxConc: conc}
	for r := range numRates {
		if limit[r] > 0 {
			t.has |= r.bit()
			t.lim[r] = newLimiter(m.cfg.Algorithm, limit[r], rates[r].window, 0)
		}
	}
	t.base = limitsOf(&t)
	return t
}

// tooLarge returns the first enforced token limit of set, at t's level or
// one above, that can never admit u at once (a request that needs more
// than its bucket or window holds), or LimitNone. A request rate's one
// unit always fits.
func (t *tenant) tooLarge(u *units, set rateSet) Limit {
	for ; t != nil; t = t.up {
		for s := set & t.has & tokenRates; s != 0; s &= s - 1 {
			if r := s.first(); u[r] > t.lim[r].max() {
				return rates[r].limit
			}
		}
	}
	return LimitNone
}

// wait brings the enforced limiters of set, at t's level and every one
// above, to now and returns how long after now they would admit u, the
// binding limit and its level: the one with the longest wait, the deepest
// level and then the first in kind order on a tie (0, LimitNone and nil:
// now).
func (t *tenant) wait(now time.Duration, u *units, set rateSet) (time.Duration, Limit, *tenant) {
	var w time.Duration
	l := LimitNone
	var by *tenant
	for ; t != nil; t = t.up {
		for s := set & t.has; s != 0; s &= s - 1 {
			r := s.first()
			t.lim[r].advance(now)
			if x := t.lim[r].wait(now, u[r]); x > w {
				w, l, by = x, rates[r].limit, t
			}
		}
	}
	return w, l, by
}

// full returns the deepest level, t's or one above, whose requests in
// flight are at its cap, or nil.
func (t *tenant) full() *tenant {
	for ; t != nil; t = t.up {
		if t.maxConc > 0 && t.inFlight >= t.maxConc {
			return t
		}
	}
	return nil
}

// take spends u of the enforced limiters of set at now, at t's level and
// once at every level above.
func (t *tenant) take(now time.Duration, u *units, set rateSet) {
	for ; t != nil; t = t.up {
		for s := set & t.has; s != 0; s &= s - 1 {
			r := s.first()
			t.lim[r].take(now, u[r])
		}
	}
}

// quota is the field of d that publishes rate r.
func (d *Decision) quota(r rate) *Quota {
	switch r {
	case rateRPS, rateRPM:
		return &d.Requests
	case rateTPM:
		return &d.TokenQuota
	case rateITPM:
		return &d.InputTokenQuota
	}
	return &d.OutputTokenQuota
}

// quotas sets d's quotas from t's limiters at now (see own); under nested
// limits, of each quota the one with the least remaining of t's level and
// those above, the tightest a client meets.
func (t *tenant) quotas(now time.Duration, d *Decision) {
	if t.up == nil {
		t.own(now, d)
		return
	}
	var tight Decision
	for ; t != nil; t = t.up {
		var q Decision
		t.own(now, &q)
		qs, ts := q.quotas(), tight.quotas()
		for i, x := range qs {
			if x.Limit > 0 && (ts[i].Limit == 0 || x.Remaining < ts[i].Remaining) {
				*ts[i] = *x
			}
		}
	}
	d.Requests, d.TokenQuota, d.InputTokenQuota, d.OutputTokenQuota = tight.Requests, tight.TokenQuota, tight.InputTokenQuota, tight.OutputTokenQuota
}

// own sets d's quotas from t's own limiters at now, each limit per minute
// as providers publish them, and what is truly left of it (a per-second
// limit's remaining is what that second's bucket admits now, not scaled);
// of the request limits, the per-minute one when both are enforced.
func (t *tenant) own(now time.Duration, d *Decision) {
	s := t.has
	if s&rateRPM.bit() != 0 {
		s &^= rateRPS.bit()
	}
	for ; s != 0; s &= s - 1 {
		r := s.first()
		limit, remaining, reset := t.lim[r].state(now)
		limit = satmath.Mul(limit, rates[r].perMinute)
		*d.quota(r) = Quota{Limit: limit, Remaining: remaining, Reset: reset}
	}
}
