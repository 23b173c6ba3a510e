package bucket

import (
	"math"
	"time"
)

// Retries is one service's retry budget, refilled lazily: a bucket of
// retries that each successful attempt adds ratio to and that refills at
// minPerSecond, holding at most max.
type Retries struct {
	ratio, minPerSecond float64
	max                 float64
	tokens              float64
	last                time.Duration // when tokens was last brought up to date
}

// NewRetries returns a full retry budget at now.
func NewRetries(ratio, minPerSecond, max float64, now time.Duration) *Retries {
	return &Retries{ratio: ratio, minPerSecond: minPerSecond, max: max, tokens: max, last: now}
}

// refill adds the floor's tokens for the time since the last update.
func (b *Retries) refill(now time.Duration) {
	if now > b.last {
		if b.minPerSecond > 0 {
			b.tokens = math.Min(b.max, b.tokens+b.minPerSecond*(now-b.last).Seconds())
		}
		b.last = now
	}
}

// Success credits one successful attempt.
func (b *Retries) Success(now time.Duration) {
	b.refill(now)
	b.tokens = math.Min(b.max, b.tokens+b.ratio)
}

// Spend takes one token for a retry at now and reports whether there was one.
func (b *Retries) Spend(now time.Duration) bool {
	b.refill(now)
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// Left returns the retries the budget allows at now, possibly fractional.
func (b *Retries) Left(now time.Duration) float64 {
	b.refill(now)
	return b.tokens
}

// Max returns the most retries the budget holds.
func (b *Retries) Max() float64 { return b.max }

// Ratio returns the retries each successful attempt adds.
func (b *Retries) Ratio() float64 { return b.ratio }

// MinPerSecond returns the retries the budget refills a second.
func (b *Retries) MinPerSecond() float64 { return b.minPerSecond }
