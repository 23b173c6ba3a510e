package sched

import (
	"fmt"
	"time"
)

// CreditKind names the limit a credit counts against.
type CreditKind uint8

const (
	// CreditRequests counts requests: one unit per attempt.
	CreditRequests CreditKind = iota
	// CreditTokens counts tokens: Call.Tokens units per attempt, settled
	// against Outcome.Tokens when the outcome reports usage.
	CreditTokens
)

// String returns "requests" or "tokens".
func (k CreditKind) String() string {
	if k == CreditTokens {
		return "tokens"
	}
	return "requests"
}

// CreditAction is the detail of an ActCredit or ActReturnCredit.
type CreditAction struct {
	// Service is the name of the service whose shared limit is meant;
	// Kind whether its requests or its tokens.
	Service string
	Kind    CreditKind
	// Units: for ActCredit, the fewest units the next grant must hold
	// (the waiting call's need plus any debt); for ActReturnCredit, the
	// units of grant Ticket left unspent (negative: usage beyond the
	// grant, to be charged).
	Units  float64
	Ticket uint64
}

// credit is the units of one shared limit a service holds: the current
// grant, valid until until, of which units are unspent (negative: debt
// from usage beyond what calls reserved).
type credit struct {
	units  float64
	until  time.Duration
	ticket uint64 // the driver's id of the current grant; 0: none
	asked  bool   // an ActCredit is outstanding
}

// usesCredit reports whether the service admits calls against credit.
func (s *serviceState) usesCredit() bool { return s.cfg.CreditRequests || s.cfg.CreditTokens }

// creditNeed returns the units of kind a call needs.
func creditNeed(cs *callState, kind CreditKind) float64 {
	if kind == CreditTokens {
		return float64(cs.call.Tokens)
	}
	return 1
}

// covered reports whether the service's credit covers the call's next
// attempt now; when it does not, it asks the driver for credit (once until
// answered).
func (c *Core) covered(s *serviceState, cs *callState) bool {
	ok := true
	for k, on := range [2]bool{s.cfg.CreditRequests, s.cfg.CreditTokens} {
		if !on {
			continue
		}
		kind := CreditKind(k)
		cr := &s.credit[k]
		need := creditNeed(cs, kind)
		if cr.ticket != 0 && cr.until > c.now && cr.units >= need {
			continue
		}
		ok = false
		if !cr.asked {
			cr.asked = true
			c.out = append(c.out, Action{Kind: ActCredit, Credit: &CreditAction{Service: s.name, Kind: kind, Units: need - min(cr.units, 0)}})
		}
	}
	return ok
}

// spendCredit takes the call's units from its service's credit.
func (c *Core) spendCredit(cs *callState) {
	s := cs.svc
	if s.cfg.CreditRequests {
		s.credit[CreditRequests].units--
	}
	if s.cfg.CreditTokens {
		s.credit[CreditTokens].units -= float64(cs.call.Tokens)
	}
}

// refundCredit gives an unused reservation's units back to the service's
// current grant. Units reserved earlier and spent later never exceed what
// the shared limit granted; at worst they are held a little longer.
func (c *Core) refundCredit(cs *callState) {
	s := cs.svc
	if s.cfg.CreditRequests {
		s.credit[CreditRequests].units++
	}
	if s.cfg.CreditTokens {
		s.credit[CreditTokens].units += float64(cs.reserved)
	}
}

// Credit gives service units of kind from a shared quota, valid until
// until (a time on the Core's clock); ticket (non-zero) names the grant in
// the ActReturnCredit that gives back what is left of it. It answers an
// ActCredit. Unspent units of the previous grant are returned (an
// ActReturnCredit) and its debt is carried over. Calls of a service whose
// ServiceConfig sets CreditRequests or CreditTokens are admitted only while
// its credit covers them; waiting for credit holds no concurrency slot.
// Credit for a service that uses none is returned at once; a grant whose
// until has passed starts what it covers now and returns the rest.
func (c *Core) Credit(now time.Duration, service string, kind CreditKind, units float64, until time.Duration, ticket uint64) {
	c.advanceTo(now)
	s := c.service(service)
	if ticket == 0 {
		panic("sched: Credit needs a non-zero ticket")
	}
	on := (kind == CreditRequests && s.cfg.CreditRequests) || (kind == CreditTokens && s.cfg.CreditTokens)
	if !on {
		c.out = append(c.out, Action{Kind: ActReturnCredit, Credit: &CreditAction{Service: service, Kind: kind, Units: units, Ticket: ticket}})
		c.announceWake()
		return
	}
	// A grant that arrives after its time (a slow driver) is still good
	// for the calls it can start now: units reserved earlier and spent
	// later never exceed the limit. What they leave goes back at once.
	until = max(until, c.now+1)
	cr := &s.credit[kind]
	c.dropGrant(s, kind)
	cr.units += units
	cr.until, cr.ticket, cr.asked = until, ticket, false
	c.setTimer(timer{at: until, kind: timerCredit, svc: s, credit: kind})
	c.pump()
	c.announceWake()
}

// dropGrant ends the service's current grant of kind: its unspent units go
// back (an ActReturnCredit, with Units 0 when all were spent, so the driver
// can forget the grant); any debt stays.
func (c *Core) dropGrant(s *serviceState, kind CreditKind) {
	cr := &s.credit[kind]
	if cr.ticket == 0 {
		return
	}
	c.out = append(c.out, Action{Kind: ActReturnCredit, Credit: &CreditAction{Service: s.name, Kind: kind, Units: max(cr.units, 0), Ticket: cr.ticket}})
	cr.units = min(cr.units, 0)
	cr.ticket, cr.until = 0, 0
}

// creditExpired ends a grant at its time.
func (c *Core) creditExpired(t *timer) {
	c.dropGrant(t.svc, t.credit)
}

// CreditRefused answers an ActCredit the quota could not grant (a shared
// backend that fails closed): every call of service waiting to be admitted
// ends now with ClassOverloaded and an error wrapping err, so each still
// gets exactly one result; calls submitted later ask again.
func (c *Core) CreditRefused(now time.Duration, service string, kind CreditKind, err error) {
	c.advanceTo(now)
	s := c.service(service)
	s.credit[kind].asked = false
	var waiting []*callState
	for _, q := range s.queues() {
		for _, cs := range q.fifo[q.head:] {
			if !cs.done {
				waiting = append(waiting, cs)
			}
		}
		for _, cs := range q.retries {
			if !cs.done {
				waiting = append(waiting, cs)
			}
		}
	}
	for _, cs := range waiting {
		c.finish(cs, ClassOverloaded, nil, fmt.Errorf("call %q to %q: no %s credit from the shared quota: %w", cs.call.ID, service, kind, err))
	}
	c.pump()
	c.announceWake()
}

// DropCredit returns every grant's unspent units and any debt (as
// ActReturnCredit with negative Units), for a driver that is stopping.
func (c *Core) DropCredit(now time.Duration) {
	c.advanceTo(now)
	for _, s := range c.svcList {
		for k := range s.credit {
			cr := &s.credit[k]
			if cr.units < 0 {
				c.out = append(c.out, Action{Kind: ActReturnCredit, Credit: &CreditAction{Service: s.name, Kind: CreditKind(k), Units: cr.units, Ticket: cr.ticket}})
				cr.units, cr.ticket, cr.until = 0, 0, 0
			}
			c.dropGrant(s, CreditKind(k))
		}
	}
	c.announceWake()
}
