package check

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/simbench/simbench/scenarios"
)

// TestDriveSendsTheOfferedRate: 2× a declared 600/min is 20 per second,
// one each 50 ms from the start, so 500 ms of load sends exactly 10
// requests (at 0, 50, …, 450 ms), each with its key and a tag of its own,
// and keeps the answers' status and Retry-After.
func TestDriveSendsTheOfferedRate(t *testing.T) {
	var mu sync.Mutex
	tags := map[string]bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		tags[r.Header.Get("Idempotency-Key")] = true
		mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer sk-a" || r.URL.Path != "/v1/chat/completions" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.Header().Set("Retry-After", "2")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	sent, ran := Drive(context.Background(), Load{URL: srv.URL + "/v1/chat/completions", Body: []byte(`{}`),
		Keys: []scenarios.GatewayKey{{Key: "sk-a", RPM: 600}}, Offer: 2, Duration: 500 * time.Millisecond})
	if len(sent) != 10 || len(tags) != 10 {
		t.Fatalf("sent %d requests with %d tags; want 10 and 10", len(sent), len(tags))
	}
	for _, s := range sent {
		if s.Key != "sk-a" || s.Status != http.StatusTooManyRequests || !s.UsableRetryAfter() || !tags[s.Tag] || s.At%(50*time.Millisecond) != 0 {
			t.Errorf("sent %+v; want key sk-a answered 429 with Retry-After 2, at a multiple of 50ms", s)
		}
	}
	if ran < 450*time.Millisecond {
		t.Errorf("ran %v; the last request goes at 450ms", ran)
	}
}
