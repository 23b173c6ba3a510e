// Package satmath is overflow-checked arithmetic on times, durations and
// token counts: every operation saturates at the bounds of int64 instead of
// wrapping, so a huge delay stays huge ("never") and can never turn into a
// negative one ("at once"). The scheduler, the fake services and the
// simulator share it: it lives in the sched module, which the harness
// requires, so that there is one copy.
//
// Functions are generic over integer types whose underlying type is int64,
// so the same call serves time.Duration (nanoseconds) and token counts.
// Conversions from float64 map NaN to 0 and ±Inf (and anything beyond the
// range) to the nearest bound.
package satmath

import (
	"math"
	"time"
)

// Int64 is the set of types satmath works on: int64 and the types defined on
// it, such as time.Duration.
type Int64 interface{ ~int64 }

// Max and Min return the largest and smallest value of T.
func Max[T Int64]() T { return T(math.MaxInt64) }

// Min returns the smallest value of T.
func Min[T Int64]() T { return T(math.MinInt64) }

// Add returns a + b, saturated to [MinInt64, MaxInt64].
func Add[T Int64](a, b T) T {
	s := a + b
	// The sum overflowed when a and b share a sign that s does not; it
	// saturates on a's side of zero.
	if (s^a)&(s^b) < 0 {
		s = bound(a)
	}
	return s
}

// Sub returns a − b, saturated to [MinInt64, MaxInt64].
func Sub[T Int64](a, b T) T {
	s := a - b
	// The difference overflowed when a and b differ in sign and s does not
	// have a's; it saturates on a's side of zero.
	if (a^b)&(a^s) < 0 {
		s = bound(a)
	}
	return s
}

// bound returns the bound of T on x's side of zero: MinInt64 when x < 0,
// else MaxInt64. (x>>63 is −1 for a negative x, else 0, and MaxInt64 ^ −1
// is MinInt64.) Branch-free and small, so Add and Sub stay cheap to inline.
func bound[T Int64](x T) T { return T(math.MaxInt64) ^ (x >> 63) }

// Mul returns a × b, saturated to [MinInt64, MaxInt64].
func Mul[T Int64](a, b T) T {
	if a == 0 || b == 0 {
		return 0
	}
	p := a * b
	// The product overflowed when dividing back does not give a, and in the
	// one case where the division itself overflows (MinInt64 × −1).
	if p/b != a || (a == -1 && b == Min[T]()) || (b == -1 && a == Min[T]()) {
		if (a < 0) != (b < 0) {
			return Min[T]()
		}
		return Max[T]()
	}
	return p
}

// two63 is 2^63, the first float64 above every int64.
const two63 = 0x1p63

// FromFloat converts f to T, truncating toward zero like a Go conversion,
// but saturating outside the range of int64 and mapping NaN to 0.
func FromFloat[T Int64](f float64) T {
	switch {
	case f != f: // NaN
		return 0
	case f >= two63:
		return Max[T]()
	case f < -two63:
		return Min[T]()
	}
	return T(f)
}

// Scale returns d × f as a T (for example a duration times a factor),
// saturated, with NaN giving 0.
func Scale[T Int64](d T, f float64) T { return FromFloat[T](float64(d) * f) }

// Seconds converts a number of seconds to a time.Duration, saturated, with
// NaN giving 0.
func Seconds(s float64) time.Duration { return FromFloat[time.Duration](s * float64(time.Second)) }

// Int converts f to an int, saturating at the bounds of int and mapping NaN
// to 0; counts drawn from distributions use it.
func Int(f float64) int {
	switch {
	case f != f:
		return 0
	case f >= float64(math.MaxInt):
		return math.MaxInt
	case f <= float64(math.MinInt):
		return math.MinInt
	}
	return int(f)
}
