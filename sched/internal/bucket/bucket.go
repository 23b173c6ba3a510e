// Package bucket holds Bucket, the token bucket (GCRA) that paces a
// service's requests and tokens in the scheduler core: pure arithmetic on
// the driver's times, kept apart from the core so its rules are read and
// tested alone.
package bucket

import (
	"math"
	"time"

	"github.com/simbench/simbench/sched/satmath"
)

// Bucket is a token bucket kept as a theoretical arrival time (GCRA): tat is
// the time at which every token reserved so far is repaid, so the bucket is
// full at any time ≥ tat and holds capacity − (tat−t)×rate at an earlier t.
// A reservation moves tat forward at once — it may run ahead of now, which
// is the bucket's debt — and is made for the exact time the attempt will
// start, so calls paced by two buckets debit each at the same moment.
// Rates are per second; times are durations since the driver's epoch.
// Not safe for concurrent use.
type Bucket struct {
	rate     float64 // tokens added per second
	capacity float64 // most tokens held
	tat      time.Duration
	spent    time.Duration // sum of every take's span, for refund marks
	maxAt    time.Duration // latest time any take was made for
	gen      uint64        // bumped by every change, so an undo can tell it is still the latest
}

// New returns a bucket refilled at perMinute × headroom tokens a minute,
// holding at most burst × headroom, full; nil when perMinute is not
// positive (no limit).
func New(perMinute, burst, headroom float64) *Bucket {
	if perMinute <= 0 {
		return nil
	}
	return &Bucket{rate: perMinute * headroom / 60, capacity: burst * headroom, tat: math.MinInt64 / 2, maxAt: math.MinInt64 / 2}
}

// span is the time the bucket takes to refill n tokens, rounded up and
// saturated: a rate too small to refill n tokens within the range of a
// Duration takes forever, never a negative time.
func (b *Bucket) span(n float64) time.Duration {
	return satmath.FromFloat[time.Duration](math.Ceil(n * 1e9 / b.rate))
}

// Earliest returns the first time at or after now at which n tokens can be
// taken, given every reservation made so far.
func (b *Bucket) Earliest(now time.Duration, n float64) time.Duration {
	return max(now, satmath.Sub(b.tat, satmath.FromFloat[time.Duration](math.Floor((b.capacity-n)*1e9/b.rate))))
}

// Take reserves n tokens for time at (which earliest allowed) and returns a
// mark to pass to refund.
func (b *Bucket) Take(at time.Duration, n float64) time.Duration {
	sp := b.span(n)
	b.gen++
	b.tat = satmath.Add(max(b.tat, at), sp)
	b.spent = satmath.Add(b.spent, sp)
	b.maxAt = max(b.maxAt, at)
	return b.spent
}

// Refund gives back n tokens reserved by the take that returned mark, as far
// as that is safe. Lowering tat by the full amount could open a hole under a
// later reservation that found the bucket full; tat never drops below
// maxAt + (the spans taken since mark), an upper bound of the state the
// bucket would be in had the refunded take been smaller. Tokens the bound
// withholds are forfeited: the limit is kept at the cost of some capacity.
// A refund never raises tat: refunding nothing (a call that used exactly its
// estimate) leaves the bucket as it is.
func (b *Bucket) Refund(n float64, mark time.Duration) {
	if n <= 0 {
		return
	}
	floor := satmath.Add(b.maxAt, satmath.Sub(b.spent, mark))
	b.gen++
	b.tat = min(b.tat, max(satmath.Sub(b.tat, b.span(n)), floor))
}

// Available returns the tokens the bucket holds at now (negative: in debt).
func (b *Bucket) Available(now time.Duration) float64 {
	if b.tat <= now {
		return b.capacity
	}
	return b.capacity - float64(satmath.Sub(b.tat, now))*b.rate/1e9
}

// Lower brings the bucket down to what a server reported left: level
// tokens at time at (when the server decided), less the tokens reserved here
// after the take that returned mark (the server had not seen those). It only
// ever lowers the level: a report of more than the bucket holds changes
// nothing, so a server can never raise the client above its configuration.
func (b *Bucket) Lower(at time.Duration, level float64, mark time.Duration) {
	deficit := b.capacity - level
	if deficit <= 0 {
		return
	}
	implied := satmath.Add(satmath.Add(at, b.span(deficit)), satmath.Sub(b.spent, mark))
	if implied > b.tat {
		b.gen++
		b.tat = implied
	}
}

// Undo is what a bucket was before one take, to put it back exactly.
type Undo struct {
	tat, maxAt, spent time.Duration
	gen               uint64 // the bucket's gen before the take; the take made it gen+1
}

// TakeUndoable is take that also returns the bucket's state before it.
func (b *Bucket) TakeUndoable(at time.Duration, n float64) (mark time.Duration, u Undo) {
	u = Undo{tat: b.tat, maxAt: b.maxAt, spent: b.spent, gen: b.gen}
	return b.Take(at, n), u
}

// Latest reports whether the take u was recorded before is the bucket's
// last change.
func (b *Bucket) Latest(u *Undo) bool { return b.gen == u.gen+1 }

// Undo puts the bucket back as it was before the take u was recorded
// before, which must be its last change (latest).
func (b *Bucket) Undo(u *Undo) {
	b.tat, b.maxAt, b.spent, b.gen = u.tat, u.maxAt, u.spent, u.gen
}

// Capacity returns the most tokens the bucket holds.
func (b *Bucket) Capacity() float64 { return b.capacity }

// Carry returns the bucket next, holding what old holds at now (no
// more than next's capacity), or next full when there was no old.
func Carry(old, next *Bucket, now time.Duration) *Bucket {
	if old == nil || next == nil {
		return next
	}
	level := min(old.Available(now), next.capacity)
	next.tat = satmath.Add(now, satmath.FromFloat[time.Duration](math.Ceil((next.capacity-level)*1e9/next.rate)))
	// Refund marks of earlier takes are in the old bucket's spans: keep
	// them increasing, and let no refund take tat below where it is now.
	next.spent = old.spent
	next.maxAt = next.tat
	next.gen = old.gen + 1
	return next
}
