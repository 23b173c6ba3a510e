package quota

import (
	"context"
	"sync"
	"time"
)

// DefaultLeaseTTL is how long a lease's slice stays valid.
const DefaultLeaseTTL = time.Second

// LeaseStats counts a Lease's work.
type LeaseStats struct {
	Local    int64   // takes served from the slice, without I/O
	Refills  int64   // slices reserved from the backend
	Direct   int64   // takes reserved from the backend one by one (no slice to be had)
	Returned float64 // unused units given back to the backend
	Size     float64 // units in the current (or last) slice
}

// Lease keeps the shared backend off the hot path: it reserves a slice of k
// units valid for TTL from Backend and hands units out locally without I/O,
// returns the unused part when the slice expires, runs out or the lease is
// closed, and sizes the next slice to the rate at which this process used
// the last one: k = rate × TTL, bounded by Min and Max (and at least the
// units asked for). Units held in a slice are unavailable to other
// processes until returned, so a large Max trades fairness for fewer
// round trips. A returned slice gives back what the bucket's refund bound
// allows (see Backend.Refund).
//
// Set the fields before first use. Safe for concurrent use; takes that need
// the backend hold the lease's lock for the round trip.
type Lease struct {
	// Backend is the store holding the shared bucket; Limit names the
	// bucket and gives its size.
	Backend Backend
	Limit   Limit
	TTL     time.Duration    // slice validity; DefaultLeaseTTL if 0
	Min     float64          // smallest slice, units; 1 if 0
	Max     float64          // largest slice, units; Limit.Burst if 0
	Now     func() time.Time // time.Now if nil

	mu      sync.Mutex
	left    float64 // units of the slice not handed out
	used    float64 // units handed out of the slice
	mark    Mark
	start   time.Time
	expires time.Time
	held    bool
	rate    float64 // observed use, units per second (moving average)
	stats   LeaseStats
}

func (l *Lease) defaults() (ttl time.Duration, lo, hi float64) {
	if l.Now == nil {
		l.Now = time.Now
	}
	ttl, lo, hi = l.TTL, l.Min, l.Max
	if ttl <= 0 {
		ttl = DefaultLeaseTTL
	}
	if lo <= 0 {
		lo = 1
	}
	if hi <= 0 {
		hi = l.Limit.Burst
	}
	return ttl, lo, max(hi, lo)
}

// Take hands out n units: from the current slice if it holds them, else from
// a new slice, else straight from the backend if the wait is at most maxWait.
// It returns whether the units were granted and, when they were reserved
// from the backend directly, how long until they are available (0 for a
// slice). Errors are the backend's.
func (l *Lease) Take(ctx context.Context, n float64, maxWait time.Duration) (ok bool, wait time.Duration, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ttl, lo, hi := l.defaults()
	now := l.Now()
	if l.held && now.Before(l.expires) && l.left >= n {
		l.left -= n
		l.used += n
		l.stats.Local++
		return true, 0, nil
	}
	if err := l.release(ctx, now); err != nil {
		return false, 0, err
	}
	k := max(min(max(l.rate*ttl.Seconds(), lo), hi), n)
	r, err := l.Backend.Reserve(ctx, l.Limit, k, 0)
	if err != nil {
		return false, 0, err
	}
	if r.OK {
		l.held, l.left, l.used, l.mark = true, k-n, n, r.Mark
		l.start, l.expires = now, now.Add(ttl)
		l.stats.Refills++
		l.stats.Size = k
		return true, 0, nil
	}
	if k == n && maxWait == 0 {
		return false, r.Wait, nil
	}
	r, err = l.Backend.Reserve(ctx, l.Limit, n, maxWait)
	if err != nil || !r.OK {
		return false, r.Wait, err
	}
	l.stats.Direct++
	return true, r.Wait, nil
}

// Return gives n units taken from the current slice back to it, without
// I/O (a call that used fewer tokens than it took). Units of an expired
// slice, or taken directly, are not returned.
func (l *Lease) Return(n float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held && n > 0 && l.Now().Before(l.expires) {
		n = min(n, l.used)
		l.left += n
		l.used -= n
	}
}

// release returns the unused part of the current slice and folds its use
// into the rate estimate.
func (l *Lease) release(ctx context.Context, now time.Time) error {
	if !l.held {
		return nil
	}
	elapsed := max(now.Sub(l.start).Seconds(), 1e-3)
	if obs := l.used / elapsed; l.rate == 0 {
		l.rate = obs
	} else {
		l.rate = (l.rate + obs) / 2
	}
	l.held = false
	if l.left <= 0 {
		return nil
	}
	left := l.left
	l.left = 0
	if err := l.Backend.Refund(ctx, l.Limit, left, l.mark); err != nil {
		return err
	}
	l.stats.Returned += left
	return nil
}

// Close returns the unused part of the current slice to the backend.
func (l *Lease) Close(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.defaults()
	return l.release(ctx, l.Now())
}

// Stats returns a copy of the counters.
func (l *Lease) Stats() LeaseStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stats
}

// Rate returns the observed use, units per second, that sizes the next slice.
func (l *Lease) Rate() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rate
}

// Charge takes n more units for usage beyond what was taken (a call that
// used more tokens than estimated): from the current slice if it holds
// them, else from the backend at once, into debt if need be.
func (l *Lease) Charge(ctx context.Context, n float64) error {
	if n <= 0 {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.defaults()
	if l.held && l.Now().Before(l.expires) && l.left >= n {
		l.left -= n
		l.used += n
		l.stats.Local++
		return nil
	}
	_, err := l.Backend.Reserve(ctx, l.Limit, n, Forever)
	if err == nil {
		l.stats.Direct++
	}
	return err
}
