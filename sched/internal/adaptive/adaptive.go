// Package adaptive holds Limiter, the adaptive concurrency limit of one
// service in the scheduler core (sched.AdaptiveConfig says what it does):
// pure arithmetic on the completions the core reports, kept apart from
// the core so that it is read and tested alone.
package adaptive

import (
	"math"
	"time"
)

// Params are a limit's settings, sched's defaults applied: the
// algorithm (Gradient, else AIMD), the factor a refusal multiplies the
// limit by, and the gradient's smoothing, tolerance, long window (in
// completions) and queue allowance (in attempts).
type Params struct {
	// Gradient selects the gradient algorithm (false: AIMD).
	Gradient bool
	// Backoff is the factor in (0, 1) a 429 or overload answer multiplies
	// the limit by; Smoothing the gradient's weight of each new target, in
	// (0, 1]; Tolerance the ratio of short- to long-term latency the
	// gradient accepts before it shrinks (at least 1); QueueSize the
	// gradient's growth allowance per completion, in attempts.
	Backoff, Smoothing, Tolerance, QueueSize float64
	// LongWindow is the long-term latency average's length, in completions.
	LongWindow int
}

// Limiter is one service's adaptive limit.
type Limiter struct {
	gradient  bool
	limit     float64 // current limit; the cap in force is its floor
	lo, hi    float64
	backoff   float64
	smoothing float64
	tolerance float64
	window    float64
	queue     float64
	successes int           // AIMD: successes since the last increase
	cutAt     time.Duration // attempts started before this don't cut again
	longRTT   float64       // gradient: smoothed long-term RTT, in ns
	samples   int           // gradient: RTT samples seen
	threshold float64       // gradient: the limit a rate-limit answer cut it to (0: none yet); growth above it is additive
	// LastReport is the cap last announced, for the caller to announce
	// changes only.
	LastReport int
}

// New returns the limit for p, starting at initial within [lo, hi].
func New(p Params, initial, lo, hi int) *Limiter {
	l := &Limiter{
		gradient:  p.Gradient,
		backoff:   p.Backoff,
		smoothing: p.Smoothing,
		tolerance: p.Tolerance,
		window:    float64(p.LongWindow),
		queue:     p.QueueSize,
		cutAt:     -1,
	}
	l.SetBounds(lo, hi)
	l.limit = math.Min(math.Max(float64(initial), l.lo), l.hi)
	l.LastReport = l.Cap()
	return l
}

// SetBounds bounds the limit by [lo, hi], bringing the limit inside.
func (l *Limiter) SetBounds(lo, hi int) {
	l.lo, l.hi = float64(lo), float64(hi)
	l.limit = math.Min(math.Max(l.limit, l.lo), l.hi)
}

// Cap returns the attempts in flight the limit allows now, at least 1.
func (l *Limiter) Cap() int { return max(1, int(l.limit)) }

// Refused cuts the limit for an attempt that started at started and was
// refused (a 429 or an overload answer) at now. Only an attempt sent after
// the last cut can cut again, so a burst of refusals from one round trip
// counts once.
func (l *Limiter) Refused(now, started time.Duration) {
	if started < l.cutAt {
		return
	}
	l.limit = math.Max(l.lo, math.Floor(l.limit*l.backoff))
	l.threshold = l.limit
	l.cutAt = now
	l.successes = 0
}

// Succeeded moves the limit for an attempt that started at started and
// succeeded at now; inFlight counts the service's attempts in flight
// including this one.
func (l *Limiter) Succeeded(now, started time.Duration, inFlight int) {
	if l.gradient {
		l.gradientSample(float64(now-started), inFlight)
	} else {
		l.aimdSuccess(inFlight)
	}
}

// aimdSuccess adds one to the limit once per limit successful completions
// while the service is using at least half of it.
func (l *Limiter) aimdSuccess(inFlight int) {
	if 2*inFlight < l.Cap() {
		return
	}
	l.successes++
	if l.successes >= l.Cap() {
		l.successes = 0
		l.limit = math.Min(l.hi, l.limit+1)
	}
}

// gradientSample moves the gradient limit for one round-trip time rtt, in ns.
func (l *Limiter) gradientSample(rtt float64, inFlight int) {
	rtt = math.Max(rtt, 1)
	l.samples++
	alpha := math.Max(1/float64(l.samples), 2/(l.window+1))
	l.longRTT += alpha * (rtt - l.longRTT)
	if l.longRTT > 2*rtt {
		l.longRTT *= 0.95
	}
	if 2*inFlight < l.Cap() {
		return
	}
	gradient := math.Max(0.5, math.Min(1, l.tolerance*l.longRTT/rtt))
	target := l.limit*gradient + l.queue
	next := (1-l.smoothing)*l.limit + l.smoothing*target
	if l.threshold > 0 && next > l.threshold && next > l.limit {
		// Above the level of the last rate-limit cut: one per round trip.
		next = math.Min(next, math.Max(l.threshold, l.limit+1/l.limit))
	}
	l.limit = math.Max(l.lo, math.Min(l.hi, next))
}
