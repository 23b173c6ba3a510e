package sched

import (
	"math"
	"time"
)

// bucket is a token bucket with reservations: a reservation debits at once,
// even into debt, and says when the debt is repaid. Rates are per second;
// times are durations since the driver's epoch. Not safe for concurrent use.
type bucket struct {
	rate     float64 // tokens added per second
	capacity float64 // most tokens held
	tokens   float64 // may be negative (debt)
	last     time.Duration
}

func newBucket(perMinute, burst, headroom float64) *bucket {
	if perMinute <= 0 {
		return nil
	}
	b := &bucket{rate: perMinute * headroom / 60, capacity: burst * headroom}
	b.tokens = b.capacity
	return b
}

// advance refills the bucket up to now.
func (b *bucket) advance(now time.Duration) {
	if now <= b.last {
		return
	}
	b.tokens += float64(now-b.last) * b.rate / 1e9
	if b.tokens > b.capacity {
		b.tokens = b.capacity
	}
	b.last = now
}

// readyAt returns when a reservation of n made at now would be repaid,
// without making it.
func (b *bucket) readyAt(now time.Duration, n float64) time.Duration {
	b.advance(now)
	left := b.tokens - n
	if left >= 0 {
		return now
	}
	return now + time.Duration(math.Ceil(-left*1e9/b.rate))
}

// reserve debits n at now and returns when the debt it leaves is repaid.
func (b *bucket) reserve(now time.Duration, n float64) time.Duration {
	at := b.readyAt(now, n)
	b.tokens -= n
	return at
}

// adjust debits n more (or refunds, when n is negative) without waiting.
func (b *bucket) adjust(now time.Duration, n float64) {
	b.advance(now)
	b.tokens -= n
	if b.tokens > b.capacity {
		b.tokens = b.capacity
	}
}
