package fakeapi

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/simbench/simbench/spec"
)

const ms = time.Millisecond

// admitted runs arrivals every step in [from, to) through a 10 requests/s
// service under alg and returns the admission times.
func admitted(t *testing.T, alg spec.Algorithm, from, to, step time.Duration) []time.Duration {
	t.Helper()
	m := newTestModel(t, ServiceConfig{Config: spec.Config{Name: "s", RPS: 10, Algorithm: alg}})
	var out []time.Duration
	for now := from; now < to; now += step {
		d := m.Arrive(now, Request{})
		if d.Admitted() {
			out = append(out, now)
			m.Finish(now, d.ID, false)
		}
	}
	return out
}

// perSecond counts times in each window [k s, (k+1) s) for k < n.
func perSecond(times []time.Duration, n int) []int {
	out := make([]int, n)
	for _, t := range times {
		if k := int(t / time.Second); k < n {
			out[k]++
		}
	}
	return out
}

// maxInWindow returns the most times that fall in any window (t-w, t].
func maxInWindow(times []time.Duration, w time.Duration) int {
	best, lo := 0, 0
	for hi, t := range times {
		for times[lo] <= t-w {
			lo++
		}
		best = max(best, hi-lo+1)
	}
	return best
}

func TestLimiterWindows(t *testing.T) {
	// A 10 requests/s limit under three algorithms, offered arrivals every
	// 10 ms (100/s). Token bucket: capacity 10 refilled at one per 100 ms,
	// full at 0; arrival k at 10k ms finds 10 - 0.9k tokens, so arrivals at
	// 0..100 ms are admitted (11), then one every 100 ms from 200 ms (8 more
	// in the first second). Fixed window: the first 10 of each second.
	// Sliding window: 10 at 0..90 ms, then each admission frees a slot
	// exactly 1 s later.
	tests := []struct {
		alg     spec.Algorithm
		want    []int // admissions per second over [0, 3 s)
		wantMax int   // most admissions in any 1 s window (t-1s, t]
	}{
		{spec.TokenBucket, []int{19, 10, 10}, 19},
		{spec.FixedWindow, []int{10, 10, 10}, 10},
		{spec.SlidingWindow, []int{10, 10, 10}, 10},
	}
	for _, tt := range tests {
		t.Run(string(tt.alg), func(t *testing.T) {
			got := admitted(t, tt.alg, 0, 3*time.Second, 10*ms)
			if ps := perSecond(got, 3); !slices.Equal(ps, tt.want) {
				t.Errorf("admitted per second = %v, want %v", ps, tt.want)
			}
			if mx := maxInWindow(got, time.Second); mx != tt.wantMax {
				t.Errorf("max in any 1 s window = %d, want %d", mx, tt.wantMax)
			}
		})
	}
}

func TestLimiterWindowEdge(t *testing.T) {
	// Arrivals every 10 ms from 900 ms to 1090 ms straddle the edge of the
	// first one-second window.
	tests := []struct {
		alg  spec.Algorithm
		want []int // admissions in [0,1 s) and [1 s,2 s)
	}{
		// Fixed window: 10 before the edge and 10 after: 20 within 200 ms,
		// twice the limit in the window (0.5 s, 1.5 s].
		{spec.FixedWindow, []int{10, 10}},
		// Sliding window: 10 before the edge, none after until 1.9 s.
		{spec.SlidingWindow, []int{10, 0}},
		// Token bucket (full at 900 ms): 900..1000 ms admitted (11), then
		// the bucket holds 0.9 at 1090 ms.
		{spec.TokenBucket, []int{10, 1}},
	}
	for _, tt := range tests {
		t.Run(string(tt.alg), func(t *testing.T) {
			got := admitted(t, tt.alg, 900*ms, 1100*ms, 10*ms)
			if ps := perSecond(got, 2); !slices.Equal(ps, tt.want) {
				t.Errorf("admitted per second = %v, want %v (times %v)", ps, tt.want, got)
			}
		})
	}
}

func (l *limiter) clone() limiter {
	c := *l
	c.log = slices.Clone(l.log)
	return c
}

// TestRetryDelayIsNextAdmission checks, under random load, that every
// rejection's wait is exactly the wait until the limiter would admit: a
// request at now+wait is admitted, one a nanosecond earlier is not.
func TestRetryDelayIsNextAdmission(t *testing.T) {
	for _, alg := range []spec.Algorithm{spec.TokenBucket, spec.FixedWindow, spec.SlidingWindow} {
		t.Run(string(alg), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			l := newLimiter(alg, 1000, time.Minute, 0)
			now, checked := time.Duration(0), 0
			for range 20000 {
				now += time.Duration(rng.Int64N(int64(20 * ms)))
				n := 1 + rng.Int64N(50)
				l.advance(now)
				w := l.wait(now, n)
				if w == 0 {
					l.take(now, n)
					continue
				}
				if w < 0 {
					t.Fatalf("wait(%d) = never with limit 1000", n)
				}
				checked++
				at := l.clone()
				at.advance(now + w)
				if got := at.wait(now+w, n); got != 0 {
					t.Fatalf("at now+wait (%v) wait = %v, want 0", w, got)
				}
				before := l.clone()
				before.advance(now + w - 1)
				if got := before.wait(now+w-1, n); got != 1 {
					t.Fatalf("1ns before now+wait (%v) wait = %v, want 1ns", w, got)
				}
			}
			if checked < 1000 {
				t.Fatalf("only %d rejections checked", checked)
			}
		})
	}
}

func TestLimiterNeverAdmitsMoreThanCapacity(t *testing.T) {
	for _, alg := range []spec.Algorithm{spec.TokenBucket, spec.FixedWindow, spec.SlidingWindow} {
		l := newLimiter(alg, 100, time.Minute, 0)
		l.advance(0)
		if got := l.wait(0, 101); got != never {
			t.Errorf("%s: wait(101) with limit 100 = %v, want never", alg, got)
		}
	}
}

func TestLimiterState(t *testing.T) {
	tests := []struct {
		alg           spec.Algorithm
		wantRemaining int64
		wantReset     time.Duration
	}{
		// 3 taken at 0 from a 10/s bucket: 7 left at 100 ms (plus 1 refilled),
		// full again 200 ms later.
		{spec.TokenBucket, 8, 200 * ms},
		// Fixed: 7 left, the window resets at 1 s.
		{spec.FixedWindow, 7, 900 * ms},
		// Sliding: 7 left, all three expire at 1 s.
		{spec.SlidingWindow, 7, 900 * ms},
	}
	for _, tt := range tests {
		l := newLimiter(tt.alg, 10, time.Second, 0)
		l.advance(0)
		l.take(0, 3)
		l.advance(100 * ms)
		limit, rem, reset := l.state(100 * ms)
		if limit != 10 || rem != tt.wantRemaining || reset != tt.wantReset {
			t.Errorf("%s: state = (%d, %d, %v), want (10, %d, %v)", tt.alg, limit, rem, reset, tt.wantRemaining, tt.wantReset)
		}
	}
}

// TestLimiterStatePublishesWhatIsLeft checks that a token bucket whose
// burst is smaller than its limit publishes the units it would admit now:
// its burst when full, one fewer after one, 0 once it cannot admit one.
func TestLimiterStatePublishesWhatIsLeft(t *testing.T) {
	l := newLimiter(spec.TokenBucket, 6000, time.Minute, 100)
	if lim, rem, _ := l.state(0); lim != 6000 || rem != 100 {
		t.Fatalf("full: limit %d remaining %d, want 100 left of 6000", lim, rem)
	}
	l.take(0, 1)
	if _, rem, _ := l.state(0); rem != 99 {
		t.Fatalf("after one: remaining %d, want 99", rem)
	}
	l.take(0, 99)
	l.advance(5 * time.Millisecond) // half a unit back at 100 per second
	if w := l.wait(5*time.Millisecond, 1); w == 0 {
		t.Fatal("an empty bucket admits")
	}
	if _, rem, _ := l.state(5 * time.Millisecond); rem != 0 {
		t.Fatalf("under one unit: remaining %d, want 0", rem)
	}
}
