package httptool

import (
	"net/http"
	"testing"
	"time"

	"github.com/simbench/simbench/sched"
)

func TestStatusClass(t *testing.T) {
	tests := []struct {
		give int
		want sched.Class
	}{
		{200, sched.ClassSuccess},
		{204, sched.ClassSuccess},
		{429, sched.ClassRateLimited},
		{503, sched.ClassOverloaded}, // overloaded, as 529: adaptive limits cut on it
		{529, sched.ClassOverloaded},
		{409, sched.ClassConflict},
		{413, sched.ClassTooLarge},
		{400, sched.ClassPermanent}, // too large only when the body says the context is
		{401, sched.ClassPermanent},
		{408, sched.ClassTransient},
		{500, sched.ClassTransient},
		{502, sched.ClassTransient},
		{0, sched.ClassTransient}, // no answer: the connection closed first
		{302, sched.ClassPermanent},
	}
	for _, tt := range tests {
		if got := StatusClass(tt.give); got != tt.want {
			t.Errorf("StatusClass(%d) = %v, want %v", tt.give, got, tt.want)
		}
	}
}

// Read takes the retry delay of answers other than 2xx only, the quota of
// every answer, and nothing of a missing one.
func TestRead(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	h := http.Header{}
	h.Set("Retry-After", "7")
	h.Set("X-Ratelimit-Remaining-Requests", "3")
	h.Set("X-Ratelimit-Limit-Requests", "60")
	h.Set("X-Ratelimit-Reset-Requests", "1.5s")
	quota := sched.ServerQuota{Requests: sched.QuotaLeft{Known: true, Remaining: 3, Limit: 60, Reset: 1500 * time.Millisecond}}
	tests := []struct {
		status int
		want   sched.Outcome
	}{
		{200, sched.Outcome{Class: sched.ClassSuccess, Status: 200, Quota: quota}},
		{429, sched.Outcome{Class: sched.ClassRateLimited, Status: 429, RetryAfter: 7 * time.Second, HasRetryAfter: true, Quota: quota}},
		{0, sched.Outcome{Class: sched.ClassTransient}},
	}
	for _, tt := range tests {
		if got := Read(tt.status, h, now); got != tt.want {
			t.Errorf("Read(%d) = %+v, want %+v", tt.status, got, tt.want)
		}
	}
}
