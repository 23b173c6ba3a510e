package sched

import (
	"testing"
	"time"
)

func TestBackoffDelay(t *testing.T) {
	const ms = time.Millisecond
	tests := []struct {
		policy Backoff
		retry  int
		prev   time.Duration
		draw   float64
		want   time.Duration
	}{
		{BackoffNone, 3, 0, 0.5, 0},
		{BackoffConstant, 1, 0, 0.9, 100 * ms},
		{BackoffConstant, 9, 0, 0.9, 100 * ms},
		{BackoffExponential, 1, 0, 0, 100 * ms},
		{BackoffExponential, 3, 0, 0, 400 * ms},
		{BackoffExponential, 10, 0, 0, time.Second}, // capped
		// full jitter: draw × min(cap, base×2^(n-1))
		{BackoffFullJitter, 3, 0, 0, 0},
		{BackoffFullJitter, 3, 0, 0.5, 200 * ms},
		{BackoffFullJitter, 3, 0, 1, 400 * ms},
		{BackoffFullJitter, 20, 0, 1, time.Second},
		// equal jitter: half the exponential delay plus draw × half
		{BackoffEqualJitter, 2, 0, 0, 100 * ms},
		{BackoffEqualJitter, 2, 0, 0.5, 150 * ms},
		{BackoffEqualJitter, 2, 0, 1, 200 * ms},
		// decorrelated: base + draw × (3×prev − base), capped
		{BackoffDecorrelatedJitter, 1, 0, 0, 100 * ms},
		{BackoffDecorrelatedJitter, 2, 200 * ms, 0.5, 350 * ms},
		{BackoffDecorrelatedJitter, 2, 200 * ms, 1, 600 * ms},
		{BackoffDecorrelatedJitter, 5, 900 * ms, 1, time.Second},
	}
	for _, tt := range tests {
		p := RetryPolicy{Backoff: tt.policy, Base: 100 * ms, Cap: time.Second}
		if got := p.Delay(tt.retry, tt.prev, tt.draw); got != tt.want {
			t.Errorf("%v retry %d prev %v draw %v: got %v, want %v", tt.policy, tt.retry, tt.prev, tt.draw, got, tt.want)
		}
	}
}

func TestRetryDelayServerFloor(t *testing.T) {
	p := RetryPolicy{Backoff: BackoffFullJitter, Base: 100 * time.Millisecond, Cap: time.Second, RetryAfterJitter: 500 * time.Millisecond}
	o := Outcome{Class: ClassRateLimited, RetryAfter: 3 * time.Second, HasRetryAfter: true}
	for _, tt := range []struct {
		draw float64
		want time.Duration
	}{{0, 3 * time.Second}, {0.5, 3250 * time.Millisecond}, {1, 3500 * time.Millisecond}} {
		if got := p.RetryDelay(&o, 4, 0, tt.draw); got != tt.want {
			t.Errorf("draw %v: got %v, want %v", tt.draw, got, tt.want)
		}
	}
	p.IgnoreRetryAfter = true
	if got := p.RetryDelay(&o, 1, 0, 1); got != 100*time.Millisecond {
		t.Errorf("ignoring the server: got %v, want the policy's 100ms", got)
	}
	neg := Outcome{RetryAfter: -time.Second, HasRetryAfter: true}
	p.IgnoreRetryAfter, p.RetryAfterJitter = false, 0
	if got := p.RetryDelay(&neg, 1, 0, 1); got != 0 {
		t.Errorf("negative server delay: got %v, want 0", got)
	}
}

func TestParseBackoff(t *testing.T) {
	for b := BackoffNone; b <= BackoffDecorrelatedJitter; b++ {
		got, err := ParseBackoff(b.String())
		if err != nil || got != b {
			t.Errorf("ParseBackoff(%q) = %v, %v", b, got, err)
		}
	}
	if _, err := ParseBackoff("fibonacci"); err == nil {
		t.Error("ParseBackoff accepted an unknown name")
	}
}
