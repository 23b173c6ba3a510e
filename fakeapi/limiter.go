package fakeapi

import (
	"sort"
	"time"

	"github.com/simbench/simbench/sched/satmath"
	"github.com/simbench/simbench/spec"
)

// never is the wait of a request that no amount of waiting admits.
const never time.Duration = -1

// limiter enforces "at most limit units per window" under one algorithm, in
// exact integer arithmetic so that the wait it computes is the wait until the
// next admission to the nanosecond. Time must not go backwards; a smaller now
// is treated as the last one seen.
type limiter struct {
	alg    spec.Algorithm
	limit  int64 // units per window
	window time.Duration

	// token bucket: credit is units × ns, full at capacity × window, refilled
	// at limit per ns (limit/window units per ns); see credit for why it is
	// not one int64.
	capacity int64
	credit   credit
	last     time.Duration

	// fixed window: [winStart, winStart+window) holds used units.
	winStart time.Duration
	used     int64

	// sliding window: a log of admissions with cumulative totals, oldest
	// first from head; entries with t <= now-window have expired.
	log     []logEntry
	head    int
	total   int64 // units ever logged
	expired int64 // units expired (the cum of the last expired entry)
}

type logEntry struct {
	t   time.Duration
	cum int64
}

func newLimiter(alg spec.Algorithm, limit int64, window time.Duration, burst int64) limiter {
	l := limiter{alg: alg, limit: limit, window: window, capacity: limit}
	if burst > 0 {
		l.capacity = burst
	}
	l.credit = whole(l.capacity)
	return l
}

// max is the most units a single request may need.
func (l *limiter) max() int64 {
	if l.alg == spec.TokenBucket {
		return l.capacity
	}
	return l.limit
}

// advance brings the limiter's state to now.
func (l *limiter) advance(now time.Duration) {
	switch l.alg {
	case spec.TokenBucket:
		if now <= l.last {
			return
		}
		dt := now - l.last
		l.last = now
		full := whole(l.capacity)
		if !l.credit.less(full) {
			return
		}
		if l.credit = l.credit.plus(dt, l.limit, l.window); !l.credit.less(full) {
			l.credit = full
		}
	case spec.FixedWindow:
		if now >= satmath.Add(l.winStart, l.window) {
			l.winStart = now - mod(now, l.window)
			l.used = 0
		}
	case spec.SlidingWindow:
		cut := now - l.window
		for l.head < len(l.log) && l.log[l.head].t <= cut {
			l.expired = l.log[l.head].cum
			l.head++
		}
		if l.head >= 64 && l.head*2 >= len(l.log) {
			n := copy(l.log, l.log[l.head:])
			l.log = l.log[:n]
			l.head = 0
		}
	}
}

// wait returns how long after now n units would be admitted (0: now; never:
// n exceeds what the limiter can ever admit at once). Call advance first.
func (l *limiter) wait(now time.Duration, n int64) time.Duration {
	if n > l.max() {
		return never
	}
	switch l.alg {
	case spec.TokenBucket:
		return l.credit.until(n, l.limit, l.window)
	case spec.FixedWindow:
		if satmath.Add(l.used, n) <= l.limit {
			return 0
		}
		return satmath.Sub(satmath.Add(l.winStart, l.window), now)
	default: // SlidingWindow
		if satmath.Add(l.total-l.expired, n) <= l.limit {
			return 0
		}
		// The first entry whose expiry brings the sum low enough.
		target := satmath.Add(l.total, n) - l.limit
		live := l.log[l.head:]
		i := sort.Search(len(live), func(i int) bool { return live[i].cum >= target })
		return satmath.Sub(satmath.Add(live[i].t, l.window), now)
	}
}

// take spends n units at now, overdrawing if need be (counting rejected
// requests); a token bucket never goes below minus its capacity.
func (l *limiter) take(now time.Duration, n int64) {
	if n == 0 {
		return
	}
	switch l.alg {
	case spec.TokenBucket:
		l.credit.units = satmath.Sub(l.credit.units, n)
		if floor := whole(-l.capacity); l.credit.less(floor) {
			l.credit = floor
		}
	case spec.FixedWindow:
		l.used = satmath.Add(l.used, n)
	case spec.SlidingWindow:
		l.total = satmath.Add(l.total, n)
		l.log = append(l.log, logEntry{t: now, cum: l.total})
	}
}

// give returns n units taken earlier (n > 0): a token bucket gains the
// credit back up to its capacity, a fixed window counts them off its
// current window down to 0; a sliding window keeps them, since its log
// cannot tell which admission they belonged to.
func (l *limiter) give(n int64) {
	switch l.alg {
	case spec.TokenBucket:
		if l.credit.units = satmath.Add(l.credit.units, n); !l.credit.less(whole(l.capacity)) {
			l.credit = whole(l.capacity)
		}
	case spec.FixedWindow:
		l.used = max(l.used-n, 0)
	}
}

// state reports the published limit, the units left now (what could be
// admitted at once: for a token bucket, its whole units of credit, so a
// bucket whose burst is below its limit reports its burst level, not a
// share of the limit) and how long until the limiter is back to its
// initial state (full bucket, empty window).
func (l *limiter) state(now time.Duration) (limit, remaining int64, reset time.Duration) {
	switch l.alg {
	case spec.TokenBucket:
		remaining = l.credit.units
		reset = l.credit.until(l.capacity, l.limit, l.window)
	case spec.FixedWindow:
		remaining = satmath.Sub(l.limit, l.used)
		if l.used > 0 {
			reset = satmath.Sub(satmath.Add(l.winStart, l.window), now)
		}
	case spec.SlidingWindow:
		remaining = satmath.Sub(l.limit, l.total-l.expired)
		if l.head < len(l.log) {
			reset = satmath.Sub(satmath.Add(l.log[len(l.log)-1].t, l.window), now)
		}
	}
	return l.limit, max(remaining, 0), reset
}

// mod is the non-negative remainder of t / m.
func mod(t, m time.Duration) time.Duration {
	r := t % m
	if r < 0 {
		r += m
	}
	return r
}
