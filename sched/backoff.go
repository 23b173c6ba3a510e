package sched

import (
	"math"
	"time"

	"github.com/simbench/simbench/sched/internal/vocab"
	"github.com/simbench/simbench/sched/satmath"
)

// Backoff names a policy for the delay before a retry when the server gives none.
type Backoff uint8

const (
	// BackoffNone retries at once.
	BackoffNone Backoff = iota
	// BackoffConstant waits Base every time.
	BackoffConstant
	// BackoffExponential waits min(Cap, Base×2^(n-1)) before retry n.
	BackoffExponential
	// BackoffFullJitter waits draw × min(Cap, Base×2^(n-1)).
	BackoffFullJitter
	// BackoffEqualJitter waits half of the exponential delay plus draw × the other half.
	BackoffEqualJitter
	// BackoffDecorrelatedJitter waits min(Cap, Base + draw×(3×previous − Base)).
	BackoffDecorrelatedJitter
)

var backoffs = vocab.Vocab[Backoff]{What: "backoff",
	Names: []string{"none", "constant", "exponential", "full-jitter", "equal-jitter", "decorrelated-jitter"}}

// String returns the policy's name as written in scenario files.
func (b Backoff) String() string { return backoffs.Name(b) }

// ParseBackoff returns the policy named s (as String prints it).
func ParseBackoff(s string) (Backoff, error) { return backoffs.Parse(s) }

// Backoffs returns every policy, in order: the values ParseBackoff accepts.
func Backoffs() []Backoff { return backoffs.Choices() }

// MarshalText returns the policy's name (encoding.TextMarshaler), so that
// JSON and other text encodings write it as scenario files do.
func (b Backoff) MarshalText() ([]byte, error) { return backoffs.Marshal(b) }

// UnmarshalText sets b to the policy text names (encoding.TextUnmarshaler).
func (b *Backoff) UnmarshalText(text []byte) error { return backoffs.Unmarshal(b, text) }

// Jittered reports whether the policy draws randomness.
func (b Backoff) Jittered() bool {
	return b == BackoffFullJitter || b == BackoffEqualJitter || b == BackoffDecorrelatedJitter
}

// Delay returns the wait before retry number retry (1 for the first retry),
// given the previous delay (for decorrelated jitter) and a draw in [0, 1].
// It is a pure function: the caller supplies the randomness.
func (p *RetryPolicy) Delay(retry int, prev time.Duration, draw float64) time.Duration {
	if retry < 1 {
		retry = 1
	}
	// Delays are computed in float64 and saturate at the longest Duration:
	// float64(MaxInt64) is 2^63, one past it, so a plain conversion of a
	// delay at the bound would wrap to a negative one.
	capped := func(d float64) time.Duration {
		if p.Cap > 0 && d > float64(p.Cap) {
			return p.Cap
		}
		return satmath.FromFloat[time.Duration](d)
	}
	exp := func() float64 {
		return float64(p.Base) * math.Pow(2, float64(retry-1))
	}
	switch p.Backoff {
	case BackoffConstant:
		return capped(float64(p.Base))
	case BackoffExponential:
		return capped(exp())
	case BackoffFullJitter:
		return satmath.Scale(capped(exp()), draw)
	case BackoffEqualJitter:
		e := float64(capped(exp()))
		return satmath.FromFloat[time.Duration](e/2 + draw*e/2)
	case BackoffDecorrelatedJitter:
		if prev < p.Base {
			prev = p.Base
		}
		hi := 3 * float64(prev)
		return capped(float64(p.Base) + draw*(hi-float64(p.Base)))
	default:
		return 0
	}
}

// RetryDelay returns the wait before retry number retry after an outcome,
// honouring the server's delay as a floor: with a server delay d the result is
// d + draw×RetryAfterJitter, never less than d; without one, or after a
// ClassConflict (whose delay is always the backoff's), it is Delay.
// The sum saturates at the longest Duration.
func (p *RetryPolicy) RetryDelay(o *Outcome, retry int, prev time.Duration, draw float64) time.Duration {
	if o.HasRetryAfter && !p.IgnoreRetryAfter && o.Class != ClassConflict {
		d := o.RetryAfter
		if d < 0 {
			d = 0
		}
		return satmath.Add(d, satmath.Scale(p.RetryAfterJitter, draw))
	}
	return p.Delay(retry, prev, draw)
}
