package fakeapi

import (
	"math"
	"math/bits"
	"time"

	"github.com/simbench/simbench/sched/satmath"
)

// credit is a token bucket's level in units × nanoseconds, kept exactly as
// whole units and a remainder, units × window + rem with 0 ≤ rem < window,
// so that no limit an int64 holds overflows it: a full bucket of 10^12
// tokens a minute is 6 × 10^22 unit-nanoseconds, past an int64's 9.2 × 10^18,
// but 10^12 units and a remainder. The 128-bit products it needs come from
// math/bits. Every operation gives the integer the plain int64 arithmetic
// would give wherever that does not overflow.
type credit struct {
	units int64 // whole units, rounded down (negative: debt)
	rem   int64 // the remainder in unit-nanoseconds, in [0, window)
}

// less reports whether c holds less than d.
func (c credit) less(d credit) bool {
	return c.units < d.units || (c.units == d.units && c.rem < d.rem)
}

// whole is n units.
func whole(n int64) credit { return credit{units: n} }

// plus returns c with dt × rate unit-nanoseconds added (dt ≥ 0, rate > 0,
// window > 0), saturating at the most units an int64 holds.
func (c credit) plus(dt time.Duration, rate int64, window time.Duration) credit {
	hi, lo := bits.Mul64(uint64(dt), uint64(rate))
	w := uint64(window)
	if hi >= w {
		return credit{units: math.MaxInt64}
	}
	q, r := bits.Div64(hi, lo, w)
	if q > math.MaxInt64 {
		return credit{units: math.MaxInt64}
	}
	c.units = satmath.Add(c.units, int64(q))
	if c.rem += int64(r); c.rem >= int64(window) {
		c.rem -= int64(window)
		c.units = satmath.Add(c.units, 1)
	}
	return c
}

// until returns how long a refill at rate units per window takes to bring
// c up to n units (0 when c holds them already), rounded up to the
// nanosecond and saturated at the longest Duration.
func (c credit) until(n, rate int64, window time.Duration) time.Duration {
	if !c.less(whole(n)) {
		return 0
	}
	// (n − units) × window − rem unit-nanoseconds are missing.
	d := uint64(n) - uint64(c.units) // n > units, so this is exact
	hi, lo := bits.Mul64(d, uint64(window))
	lo, borrow := bits.Sub64(lo, uint64(c.rem), 0)
	hi -= borrow
	if hi >= uint64(rate) {
		return math.MaxInt64
	}
	q, r := bits.Div64(hi, lo, uint64(rate))
	if r > 0 {
		q++
	}
	if q > math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(q)
}
