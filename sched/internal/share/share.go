// Package share holds Shares, what each priority class of one service is
// owed under its guaranteed share of admissions: the scheduler core's
// weighted choice of the class admitted next, kept apart from the core so
// that it is read and tested alone.
package share

import "math"

// Shares is what each priority class of one service is owed under its
// guaranteed share of admissions.
//
// Each admission to the service accrues every backlogged class its share,
// and takes 1 from the class admitted. The next class admitted is the one
// owed the most among those owed at least one admission (counting the
// accrual of this one), ties to the higher class; when none is owed, the
// highest backlogged class. What a class is owed never drops below 0 (a
// class admitted ahead of its share does not bank a debt that would starve
// it later) and is forgotten while it has nothing waiting (it does not bank
// credit to burst with later either).
type Shares struct {
	share []float64
	owed  []float64
	next  int // the class Pick chose; -1: nothing waits
}

// New returns the shares of classes whose guaranteed shares are shares,
// highest class first, none owed anything.
func New(shares []float64) *Shares {
	return &Shares{share: shares, owed: make([]float64, len(shares)), next: -1}
}

// Pick chooses the class whose call is admitted next, among the classes
// waiting reports calls waiting for (asked once each, in order), and
// returns it, or -1 when none waits.
func (x *Shares) Pick(waiting func(class int) bool) int {
	x.next = -1
	best, bestOwed := -1, 0.0
	for i := range x.owed {
		if !waiting(i) {
			x.owed[i] = 0
			continue
		}
		if x.next < 0 {
			x.next = i // the highest class with calls waiting
		}
		if o := x.owed[i] + x.share[i]; o >= 1 && o > bestOwed {
			best, bestOwed = i, o
		}
	}
	if best >= 0 {
		x.next = best
	}
	return x.next
}

// Admitted settles what each class is owed when the class Pick chose is
// admitted, and returns that class: every backlogged class (as waiting
// reports) accrues its share, and the admitted one pays 1.
func (x *Shares) Admitted(waiting func(class int) bool) int {
	for i := range x.owed {
		if i == x.next || waiting(i) {
			x.owed[i] += x.share[i]
		}
	}
	x.owed[x.next] = math.Max(0, x.owed[x.next]-1)
	return x.next
}
