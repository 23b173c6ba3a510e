package quota

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/simbench/simbench/sched"
)

// Shared is a sched.Quota over a Backend: give it to sched.NewRunner with
// sched.WithQuota and the Runner admits the calls of every service with a
// request or token limit against grants reserved from the shared bucket,
// like Lease: a grant of k units valid for TTL, k sized to the rate at which
// this process spent the previous grant (at least the units asked for, at
// most Max× the bucket's burst), or when the bucket cannot hand out k now,
// exactly the units asked for, waited for (without a slot: the Runner
// waits in the background). Unspent units go back with Backend.Refund.
// Under contention, then, each process has at most one call's worth
// reserved ahead per limit, served in the order Redis took the
// reservations: processes with calls waiting share the limit about evenly,
// and what a process does not ask for goes to the others.
//
// Every process sharing a key must use the same limits (NewShared derives
// them from the sched.Config, headroom included). Set the fields before
// first use; safe for concurrent use.
type Shared struct {
	// Backend is the store holding the shared buckets.
	Backend Backend
	TTL     time.Duration // grant validity; DefaultLeaseTTL if 0
	// Max bounds a grant, as a fraction of the bucket's burst (0: 1, the
	// whole burst). Units held in a grant are unavailable to other
	// processes until spent or returned: a smaller Max is fairer, a larger
	// one makes fewer round trips.
	Max float64

	limits map[string][2]*sizer // by service: requests, tokens (nil: not shared)
	mu     sync.Mutex
	stats  SharedStats
}

// SharedStats counts a Shared quota's work.
type SharedStats struct {
	Grants   int64   // grants handed to Runners
	Waited   int64   // grants that had to wait for the shared bucket
	Returned float64 // unspent units given back
	Charged  float64 // units charged for usage beyond what was granted
	Refused  int64   // acquisitions that failed (the backend's error)
}

// sizer is one limit's grant sizing: the units of the last grant, when it
// was made, how much of it came back, and the rate of use so far.
type sizer struct {
	lim      Limit
	last     float64
	at       time.Time
	returned float64
	rate     float64 // units per second, a moving average
}

// mark is a Grant's handle: the limit and the backend's reservation.
type mark struct {
	s *sizer
	m Mark
}

// NewShared returns a Shared quota on b for the services of cfg with a
// request or token limit, as buckets of API key (see Limit.Name). Limits
// are cfg's, scaled by each service's headroom, with the bursts sched uses
// (RequestBurst or one second's requests; TokenBurst or a minute's tokens).
func NewShared(b Backend, key string, cfg sched.Config) *Shared {
	s := &Shared{Backend: b, limits: map[string][2]*sizer{}}
	for name, sc := range cfg.Services {
		h := sc.Headroom
		if h <= 0 {
			h = sched.DefaultHeadroom
		}
		var pair [2]*sizer
		if sc.RequestsPerMinute > 0 {
			burst := sc.RequestBurst
			if burst <= 0 {
				burst = max(1, sc.RequestsPerMinute/60)
			}
			pair[sched.CreditRequests] = &sizer{lim: Limit{Key: key, Service: name, Kind: "rpm", PerMinute: sc.RequestsPerMinute * h, Burst: burst * h}}
		}
		if sc.TokensPerMinute > 0 {
			burst := sc.TokenBurst
			if burst <= 0 {
				burst = sc.TokensPerMinute
			}
			pair[sched.CreditTokens] = &sizer{lim: Limit{Key: key, Service: name, Kind: "tpm", PerMinute: sc.TokensPerMinute * h, Burst: burst * h}}
		}
		if pair[0] != nil || pair[1] != nil {
			s.limits[name] = pair
		}
	}
	return s
}

// Limit returns the shared limit of a service's requests or tokens, and
// whether there is one.
func (s *Shared) Limit(service string, kind sched.CreditKind) (Limit, bool) {
	if z := s.limits[service][kind]; z != nil {
		return z.lim, true
	}
	return Limit{}, false
}

// Stats returns a copy of the counters.
func (s *Shared) Stats() SharedStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// Covers implements sched.Quota.
func (s *Shared) Covers(service string) (requests, tokens bool) {
	p := s.limits[service]
	return p[sched.CreditRequests] != nil, p[sched.CreditTokens] != nil
}

func (s *Shared) ttl() time.Duration {
	if s.TTL <= 0 {
		return DefaultLeaseTTL
	}
	return s.TTL
}

// size returns the units of the next grant of z for a need of n.
func (s *Shared) size(z *sizer, n float64, now time.Time) float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !z.at.IsZero() {
		obs := max(z.last-z.returned, 0) / max(now.Sub(z.at).Seconds(), 1e-3)
		if z.rate == 0 {
			z.rate = obs
		} else {
			z.rate = (z.rate + obs) / 2
		}
	}
	hi := z.lim.Burst
	if s.Max > 0 {
		hi *= s.Max
	}
	return max(min(z.rate*s.ttl().Seconds(), hi), n, 1)
}

// Acquire implements sched.Quota: ReserveAt, a wait on a timer, GrantAt.
func (s *Shared) Acquire(ctx context.Context, service string, kind sched.CreditKind, n float64) (sched.Grant, error) {
	p, err := s.ReserveAt(ctx, time.Now(), service, kind, n)
	if err != nil {
		return sched.Grant{}, err
	}
	if p.Wait > 0 {
		t := time.NewTimer(p.Wait)
		select {
		case <-ctx.Done():
			t.Stop()
			_ = s.Abandon(context.WithoutCancel(ctx), p)
			return sched.Grant{}, ctx.Err()
		case <-t.C:
		}
	}
	return s.GrantAt(p, time.Now()), nil
}

// Pending is a grant reserved from the shared bucket whose units are
// available Wait after the reservation's answer: the first half of Acquire,
// for a driver with a clock of its own.
type Pending struct {
	// Service is the name of the service the grant is for; Kind whether
	// its units are requests or tokens.
	Service string
	Kind    sched.CreditKind
	Units   float64       // units reserved (at least the units asked for)
	Wait    time.Duration // from the reservation's answer until the units are available
	mark    mark
}

// ReserveAt is Acquire without the wait, for a driver that keeps its own
// time (a simulator on a virtual clock; Acquire passes time.Now()): at now
// it sizes the grant and reserves it from the backend (one round trip, or
// two when the bucket cannot hand out the sized grant at once), and returns
// it with the wait before its units are available. The driver waits
// Pending.Wait and calls GrantAt, or gives up and calls Abandon. An error
// is the backend's (counted in SharedStats.Refused).
func (s *Shared) ReserveAt(ctx context.Context, now time.Time, service string, kind sched.CreditKind, n float64) (Pending, error) {
	z := s.limits[service][kind]
	if z == nil {
		return Pending{}, fmt.Errorf("quota: no shared %s limit for service %q", kind, service)
	}
	k := s.size(z, n, now)
	r, err := s.Backend.Reserve(ctx, z.lim, k, 0)
	if err == nil && !r.OK {
		k = n
		r, err = s.Backend.Reserve(ctx, z.lim, n, Forever)
	}
	if err != nil {
		s.mu.Lock()
		s.stats.Refused++
		s.mu.Unlock()
		return Pending{}, err
	}
	return Pending{Service: service, Kind: kind, Units: k, Wait: max(r.Wait, 0), mark: mark{z, r.Mark}}, nil
}

// GrantAt turns p into the grant a Runner takes, at now, when its wait is
// over: valid for TTL from now.
func (s *Shared) GrantAt(p Pending, now time.Time) sched.Grant {
	z := p.mark.s
	s.mu.Lock()
	z.last, z.at, z.returned = p.Units, now, 0
	s.stats.Grants++
	if p.Wait > 0 {
		s.stats.Waited++
	}
	s.mu.Unlock()
	return sched.Grant{Service: p.Service, Kind: p.Kind, Units: p.Units, Until: now.Add(s.ttl()), Mark: p.mark}
}

// Abandon gives every unit of p back to the backend: its driver stopped
// waiting for it.
func (s *Shared) Abandon(ctx context.Context, p Pending) error {
	if p.mark.s == nil {
		return nil
	}
	return s.Backend.Refund(ctx, p.mark.s.lim, p.Units, p.mark.m)
}

// Return implements sched.Quota.
func (s *Shared) Return(ctx context.Context, g sched.Grant, n float64) error {
	z := s.limits[g.Service][g.Kind]
	if z == nil || n == 0 {
		return nil
	}
	m, _ := g.Mark.(mark)
	s.mu.Lock()
	if n > 0 {
		if m.s == z {
			z.returned += n
		}
		s.stats.Returned += n
	} else {
		s.stats.Charged -= n
	}
	s.mu.Unlock()
	if n > 0 {
		return s.Backend.Refund(ctx, z.lim, n, m.m)
	}
	_, err := s.Backend.Reserve(ctx, z.lim, -n, Forever)
	return err
}
