package quota

import "math"

// state is one bucket as a theoretical arrival time, like sched's bucket,
// in microseconds since the Unix epoch: tat is when every unit reserved so
// far is repaid, spent the sum of every take's span (refund marks), maxAt
// the latest time a take was made for. The zero state is a full bucket.
// The functions below are mirrored line for line by the Redis script.
type state struct{ tat, spent, maxAt float64 }

func ratePerSec(l Limit) float64 { return l.PerMinute / 60 }

// span is the time (µs, rounded up) the bucket takes to refill n units.
func span(l Limit, n float64) float64 { return math.Ceil(n * 1e6 / ratePerSec(l)) }

// earliest is the first time at or after now when n units can be taken.
func (s *state) earliest(l Limit, now, n float64) float64 {
	return math.Max(now, s.tat-math.Floor((l.Burst-n)*1e6/ratePerSec(l)))
}

// take reserves n units for time at and returns the refund mark.
func (s *state) take(l Limit, at, n float64) float64 {
	sp := span(l, n)
	s.tat = math.Max(s.tat, at) + sp
	s.spent += sp
	s.maxAt = math.Max(s.maxAt, at)
	return s.spent
}

// refund gives back n units of the take that returned mark, never lowering
// tat below maxAt plus the spans taken since mark.
func (s *state) refund(l Limit, n, mark float64) {
	s.tat = math.Max(s.tat-span(l, n), s.maxAt+(s.spent-mark))
}

// available is the units held at now (negative: in debt).
func (s *state) available(l Limit, now float64) float64 {
	if s.tat <= now {
		return l.Burst
	}
	return l.Burst - (s.tat-now)*ratePerSec(l)/1e6
}

// reserve is Backend.Reserve on one state: maxWait in µs, negative for none.
func (s *state) reserve(l Limit, now, n, maxWait float64) (ok bool, wait, mark float64) {
	at := s.earliest(l, now, n)
	wait = at - now
	if maxWait >= 0 && wait > maxWait {
		return false, wait, 0
	}
	return true, wait, s.take(l, at, n)
}

// settle takes the excess of actual over reserved now, or refunds the shortfall.
func (s *state) settle(l Limit, now, reserved, actual, mark float64) {
	switch d := actual - reserved; {
	case d > 0:
		s.take(l, now, d)
	case d < 0:
		s.refund(l, -d, mark)
	}
}
