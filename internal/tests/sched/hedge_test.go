package sched_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/sched/httptool"
)

// A hedge that answers first wins, and the slow first attempt is cancelled
// at the transport: the server sees that request's context end while it
// still works on it, long before it would have answered.
func TestRunnerHedgeCancelsTheSlowAttemptAtTheTransport(t *testing.T) {
	var requests atomic.Int32
	// The first attempt hangs until it is cancelled; the hedge (told by
	// AttemptOf, sent as a header) answers at once.
	cancelled := make(chan struct{})
	release := make(chan struct{}) // ends the slow handler if the cancel never comes
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.Header.Get("X-Hedge") == "" {
			select {
			case <-r.Context().Done():
				close(cancelled)
			case <-release:
			}
			return
		}
		w.Write([]byte("fast"))
	}))
	defer srv.Close()
	defer close(release)
	tool := &httptool.Tool{
		Client: srv.Client(),
		Build: func(ctx context.Context, call *Call, attempt int) (*http.Request, error) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
			if a, ok := AttemptOf(ctx); ok && a.Hedge && err == nil {
				req.Header.Set("X-Hedge", "1")
			}
			return req, err
		},
		Decode: func(_ int, body []byte) (any, error) { return string(body), nil },
	}
	r, err := NewRunner(Config{
		Services: map[string]ServiceConfig{"api": {MaxInFlight: 4}},
		Hedge:    &HedgePolicy{After: 20 * time.Millisecond, Budget: 1},
	}, tool.Execute)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	res, err := r.Run(context.Background(), Turn{Calls: []Call{{ID: "read", Service: "api", Idempotent: true}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res[0]; got.Err != nil || got.Value != "fast" || !got.HedgeWon || got.Hedges != 1 {
		t.Fatalf("result %+v", got)
	}
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the server never saw the slow request cancelled")
	}
	if n := requests.Load(); n != 2 {
		t.Fatalf("%d requests, want the attempt and its hedge", n)
	}
}
