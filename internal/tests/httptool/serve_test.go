package httptool_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/simbench/simbench/fakeapi"
	"github.com/simbench/simbench/sched"
	. "github.com/simbench/simbench/sched/httptool"
	"github.com/simbench/simbench/spec"
)

// recorder keeps the marking headers of every request it passes on.
type recorder struct {
	next http.RoundTripper
	mu   sync.Mutex
	seen map[string][]string // call id → retry counts, in order
	keys map[string]map[string]bool
}

func (rt *recorder) RoundTrip(r *http.Request) (*http.Response, error) {
	id := r.Header.Get("X-Call")
	rt.mu.Lock()
	rt.seen[id] = append(rt.seen[id], r.Header.Get(RetryCountHeader))
	if rt.keys[id] == nil {
		rt.keys[id] = map[string]bool{}
	}
	rt.keys[id][r.Header.Get(IdempotencyKeyHeader)] = true
	rt.mu.Unlock()
	return rt.next.RoundTrip(r)
}

// A sched client that ignores Retry-After, against a real server on
// loopback: every retry carries its call's Idempotency-Key and a retry
// count, so the server counts each one as early.
func TestServeCountsEarlyRetriesByIdempotencyKey(t *testing.T) {
	srv, err := fakeapi.Start(fakeapi.ServerConfig{Services: []fakeapi.ServiceConfig{
		// One request a minute: every later request is told to wait
		// tens of seconds, far longer than this test runs.
		{Config: spec.Config{Name: "api", RPM: 1, Headers: spec.HeadersOpenAI}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	rec := &recorder{next: tr, seen: map[string][]string{}, keys: map[string]map[string]bool{}}
	tool := &Tool{Client: &http.Client{Transport: rec}, Build: func(ctx context.Context, call *sched.Call, attempt int) (*http.Request, error) {
		req, err := PostJSON(srv.URL("api")+"/v1/chat/completions", nil)(ctx, call, attempt)
		if err == nil {
			req.Header.Set("X-Call", call.ID)
		}
		return req, err
	}}
	r, err := sched.NewRunner(sched.Config{
		MaxInFlight: 1,
		Services:    map[string]sched.ServiceConfig{"api": {}},
		Retry:       sched.RetryPolicy{Backoff: sched.BackoffConstant, Base: 5 * time.Millisecond, MaxAttempts: 3, IgnoreRetryAfter: true},
	}, tool.Execute)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	payload := map[string]any{"model": "gpt-4o-mini", "messages": []map[string]string{{"role": "user", "content": "hi"}}}
	var turn sched.Turn
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		turn.Calls = append(turn.Calls, sched.Call{ID: id, Service: "api", Payload: payload})
	}
	res, err := r.Run(context.Background(), turn)
	if err != nil {
		t.Fatal(err)
	}
	// a gets the one request of the minute; b..e are refused three times each.
	retries := 0
	for _, x := range res[1:] {
		if x.Attempts != 3 || x.Class != sched.ClassRateLimited {
			t.Errorf("%s: %d attempts, %v", x.ID, x.Attempts, x.Class)
		}
		retries += x.Attempts - 1
	}
	for id, counts := range rec.seen {
		if len(rec.keys[id]) != 1 || rec.keys[id][""] {
			t.Errorf("call %s sent keys %v, want one", id, rec.keys[id])
		}
		for i, c := range counts {
			if want := []string{"0", "1", "2"}[i]; c != want {
				t.Errorf("call %s attempt %d sent retry count %q, want %q", id, i+1, c, want)
			}
		}
	}
	all := map[string]bool{}
	for _, ks := range rec.keys {
		for k := range ks {
			all[k] = true
		}
	}
	if len(all) != 5 {
		t.Errorf("%d distinct keys for 5 calls", len(all))
	}
	st := srv.Stats().Services["api"]
	if st.EarlyRetries != int64(retries) || st.EarlyRetriesBy["idempotency_key"] != int64(retries) {
		t.Errorf("server counted %d early retries (%v), want %d by idempotency key", st.EarlyRetries, st.EarlyRetriesBy, retries)
	}
}

// A retried write carries one Idempotency-Key: a server that does not
// deduplicate counts it as applied twice, one that does applies it once.
func TestServeRetriedWriteAppliedOnceOrTwice(t *testing.T) {
	tests := []struct {
		name        string
		dedupe      bool
		twice, once int64
	}{
		{"server applies every write", false, 1, 0},
		{"server deduplicates by key", true, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, err := fakeapi.Start(fakeapi.ServerConfig{Services: []fakeapi.ServiceConfig{{Config: spec.Config{
				Name: "crm", Latency: spec.Constant(time.Second), DedupeWrites: tt.dedupe,
			}}}})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			tr := &http.Transport{}
			defer tr.CloseIdleConnections()
			tool := &Tool{Client: &http.Client{Transport: tr}, Build: PostJSON(srv.URL("crm")+"/contacts/42", http.Header{fakeapi.WriteHeader: {"contact-42"}})}
			// The first attempt gives up long before the server's second of
			// work ends (the client cannot know whether the write applied);
			// the retry waits for the answer.
			exec := func(ctx context.Context, call *sched.Call, n int) sched.Outcome {
				if n == 1 {
					short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
					defer cancel()
					return tool.Execute(short, call, n)
				}
				return tool.Execute(ctx, call, n)
			}
			r, err := sched.NewRunner(sched.Config{Services: map[string]sched.ServiceConfig{"crm": {}}, Retry: sched.RetryPolicy{MaxAttempts: 2}}, exec)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			res, err := r.Run(context.Background(), sched.Turn{Calls: []sched.Call{{ID: "w", Service: "crm", Write: true, Idempotent: true, Payload: map[string]string{"name": "Ada"}}}})
			if err != nil {
				t.Fatal(err)
			}
			if res[0].Err != nil || res[0].Attempts != 2 {
				t.Fatalf("result %+v, want success on attempt 2", res[0])
			}
			st := srv.Stats().Services["crm"]
			if st.WritesAppliedTwice != tt.twice || st.WritesDeduplicated != tt.once {
				t.Errorf("applied twice %d, deduplicated %d; want %d, %d", st.WritesAppliedTwice, st.WritesDeduplicated, tt.twice, tt.once)
			}
		})
	}
}
