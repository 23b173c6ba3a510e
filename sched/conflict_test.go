package sched

import (
	"errors"
	"testing"
	"time"
)

// TestConflictRetriedWithBackoff checks that a 409 conflict is retried
// after the strategy's backoff, not after the Retry-After the response
// carried, and that a write which is not idempotent is retried too: the
// server refused it, so nothing was applied.
func TestConflictRetriedWithBackoff(t *testing.T) {
	// Each attempt takes 100 ms; the first two conflict and say "retry
	// after 1 h", which must be ignored. Exponential from 1 s: the retries
	// start 1 s and 2 s after the conflicts end.
	tests := []struct {
		name string
		call Call
	}{
		{"read", Call{ID: "r"}},
		{"write, not idempotent", Call{ID: "w", Write: true, Resource: "doc"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{Retry: RetryPolicy{Backoff: BackoffExponential, Base: time.Second, Cap: time.Minute, MaxAttempts: 5}}
			d := newDriver(t, cfg, func(_ *Call, n int, _ time.Duration) (time.Duration, Outcome) {
				if n <= 2 {
					return 100 * time.Millisecond, Outcome{Class: ClassConflict, Status: 409, RetryAfter: time.Hour, HasRetryAfter: true, Err: errors.New("409")}
				}
				return 100 * time.Millisecond, Succeeded("ok")
			})
			d.submit(tt.call)
			d.run(10 * time.Hour)
			var at []time.Duration
			for _, s := range d.starts {
				at = append(at, s.at)
			}
			want := []time.Duration{0, 1100 * time.Millisecond, 3200 * time.Millisecond}
			if len(at) != len(want) || at[0] != want[0] || at[1] != want[1] || at[2] != want[2] {
				t.Fatalf("attempts started at %v, want %v", at, want)
			}
			if r := d.results[tt.call.ID]; r.Err != nil || r.Attempts != 3 || r.Class != ClassSuccess {
				t.Fatalf("result %+v, want success after 3 attempts", r)
			}
		})
	}
}

// TestConflictBackoffNone checks that without backoff a conflict is
// retried the moment it ends, and that the retries stop at MaxAttempts.
func TestConflictBackoffNone(t *testing.T) {
	d := newDriver(t, Config{Retry: RetryPolicy{Backoff: BackoffNone, MaxAttempts: 4}}, func(*Call, int, time.Duration) (time.Duration, Outcome) {
		return 50 * time.Millisecond, Outcome{Class: ClassConflict, Status: 409}
	})
	d.submit(Call{ID: "a"})
	d.run(time.Hour)
	for i, s := range d.starts {
		if want := time.Duration(i) * 50 * time.Millisecond; s.at != want {
			t.Fatalf("attempt %d at %v, want %v", i+1, s.at, want)
		}
	}
	if r := d.results["a"]; r.Attempts != 4 || r.Class != ClassConflict || !errors.Is(r.Err, ErrRetriesExhausted) {
		t.Fatalf("result %+v, want 4 attempts, class conflict, retries exhausted", r)
	}
}

func TestConflictClass(t *testing.T) {
	if !ClassConflict.Retryable() || ClassConflict.String() != "conflict" {
		t.Fatalf("ClassConflict: retryable %v, name %q", ClassConflict.Retryable(), ClassConflict)
	}
	p := RetryPolicy{Backoff: BackoffConstant, Base: 3 * time.Second}
	o := Outcome{Class: ClassConflict, RetryAfter: time.Hour, HasRetryAfter: true}
	if got := p.RetryDelay(&o, 1, 0, 0.5); got != 3*time.Second {
		t.Fatalf("RetryDelay after a conflict with Retry-After 1h = %v, want the backoff's 3s", got)
	}
}
