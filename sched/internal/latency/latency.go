// Package latency holds Window, the latencies of a service's recent first
// attempts from which the scheduler core reads its hedge delay.
//
// Some first attempts never answer: the one a winning hedge cancels, one
// cancelled because its call's result was decided elsewhere, one that
// runs past Config.AttemptTimeout. All that is known of their latency is
// that it is above the time they ran; they are the slow ones, so dropping
// them, or counting the time they ran as their latency, would bias the
// percentile low and hedge more than the percentile says (counting it
// hedged 5.6% at 0.95, dropping them 9.7%). They are kept as censored
// samples instead, and the percentile is read from the product-limit
// (Kaplan–Meier) estimate of the latencies' distribution, which counts a
// censored sample among the attempts still running up to its time and
// makes no guess beyond it. A cancel depends on the hedge's latency and
// the call's other events, not on how long the first attempt would have
// run, which is what this estimate needs (independent censoring).
package latency

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// sample is a first attempt's latency; censored says it did not answer
// and its latency is above lat.
type sample struct {
	lat      time.Duration
	censored bool
}

// Window is a ring of the last latencies observed, some censored, and the
// percentile last read from them.
type Window struct {
	lat     []sample // a ring of the last first attempts' latencies
	next, n int
	sorted  []sample      // scratch for the percentile
	p       float64       // the percentile pct is, while !dirty
	pct     time.Duration // the percentile p of lat, while !dirty
	dirty   bool
}

// NewWindow returns a window of the last size latencies, empty.
func NewWindow(size int) *Window { return &Window{lat: make([]sample, size), dirty: true} }

// Observe records a first attempt's latency d: its answer's, or, censored,
// the time it ran before it was cut short without an answer.
func (w *Window) Observe(d time.Duration, censored bool) {
	w.lat[w.next] = sample{d, censored}
	w.next = (w.next + 1) % len(w.lat)
	w.n = min(w.n+1, len(w.lat))
	w.dirty = true
}

// Len returns the latencies the window holds.
func (w *Window) Len() int { return w.n }

// Percentile returns the p quantile of the latencies held (quantile); the
// window must hold at least one.
func (w *Window) Percentile(p float64) time.Duration {
	if w.dirty || p != w.p {
		w.sorted = append(w.sorted[:0], w.lat[:w.n]...)
		slices.SortFunc(w.sorted, func(a, b sample) int {
			if a.lat != b.lat {
				return cmp.Compare(a.lat, b.lat)
			}
			// At a tie an answer comes first: a censored sample ran at
			// least that long.
			switch {
			case a.censored == b.censored:
				return 0
			case b.censored:
				return -1
			}
			return 1
		})
		w.pct, w.p = quantile(w.sorted, p), p
		w.dirty = false
	}
	return w.pct
}

// quantile returns the p quantile of the latencies x, sorted, some of them
// censored.
//
// Each answered latency t gets the share F(t) of latencies at most t:
// F = 1 − S, S the product over the answers up to t of r/(r+1), r the
// samples still running at each (those whose latency is at least its,
// censored ones included). This is the product-limit estimate with r+1 in
// place of r (Herd–Johnson): with nothing censored the j-th smallest of n
// gets j/(n+1), the chance that a next latency is below it, so that a
// delay read at p is exceeded by a share 1−p of the next attempts, where
// the plain estimate (j/n) is exceeded by more (5.9% at 0.95 over 100
// samples). The quantile is interpolated between the two answers whose
// shares span p: the smallest answer when p is below its share, and the
// largest sample, a lower bound, when no answer's share reaches p.
func quantile(x []sample, p float64) time.Duration {
	n := len(x)
	s, f := 1.0, 0.0 // S and F at the last answer, below p
	last := time.Duration(-1)
	for i, v := range x {
		if v.censored {
			continue
		}
		r := float64(n - i)
		fi := 1 - s*r/(r+1)
		if fi >= p {
			if last < 0 {
				return v.lat
			}
			return last + time.Duration(math.Round((p-f)/(fi-f)*float64(v.lat-last)))
		}
		s *= r / (r + 1)
		f, last = fi, v.lat
	}
	return x[n-1].lat
}
