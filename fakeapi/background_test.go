package fakeapi

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/simbench/simbench/spec"
)

// TestBackgroundSpendsTheKeysBuckets sends one client request every 100 ms
// (at 50, 150, 250 ms, …) to a 10 req/s token bucket holding one request,
// with background traffic on the same key:
//
//   - none: every client request finds the token refilled;
//   - 10/s at 0, 100, 200 ms, …: each background request takes the token
//     just refilled, so every client request is refused and told that
//     nothing is left;
//   - 5/s at 0, 200, 400 ms, …: the background request at 0 takes the
//     token, so the client's at 50 ms is refused and the one at 150 ms
//     admitted; the background request at 200 ms finds no room, waits, and
//     takes the token refilled at 250 ms ahead of the client request then:
//     the two share the key half and half;
//   - 5/s in groups of 3 every 600 ms: each group takes the next three
//     tokens, at the group's time or as they refill (0, 150, 250 ms; 650,
//     750, 850 ms; …), and the client has the three after: 9 of 20
//     admitted, the last group's third request still waiting at the end.
func TestBackgroundSpendsTheKeysBuckets(t *testing.T) {
	for _, tc := range []struct {
		rate                                   float64
		burst, admitted, bgAdmitted, bgDropped int64
	}{{0, 0, 20, 0, 0}, {10, 0, 0, 20, 0}, {5, 0, 10, 10, 0}, {5, 3, 9, 11, 0}} {
		cfg := ServiceConfig{Config: spec.Config{Name: "s", RPS: 10, Burst: 1, Headers: spec.HeadersOpenAI, Background: spec.Background{Rate: tc.rate, Burst: tc.burst}}}
		m, err := NewModel(cfg, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		for i := range 20 {
			now := time.Duration(i)*100*time.Millisecond + 50*time.Millisecond
			d := m.Arrive(now, Request{Client: "c"})
			if d.Admitted() {
				m.Finish(now, d.ID, false)
			} else if d.Kind != KindRateLimited || d.Requests.Remaining != 0 {
				t.Fatalf("rate %v, %v: %v with %d left", tc.rate, now, d.Kind, d.Requests.Remaining)
			}
		}
		st := m.Stats()
		if st.Accepted != tc.admitted || st.BackgroundAdmitted != tc.bgAdmitted || st.BackgroundLimited != tc.bgDropped || st.Arrived != 20 {
			t.Errorf("background %v/s: %d of %d client requests admitted, %d background admitted and %d dropped; want %d, %d, %d",
				tc.rate, st.Accepted, st.Arrived, st.BackgroundAdmitted, st.BackgroundLimited, tc.admitted, tc.bgAdmitted, tc.bgDropped)
		}
	}
}

// TestBackgroundTokens checks background requests charge their tokens: 200
// tokens every 100 ms against a bucket of 1,000 refilled at 1,000 tokens/s
// is twice what the key allows, so the background takes all of it — 1,000
// + 10 × 1,000 tokens by 10 s, 55 requests — with 46 still waiting, and a
// 100-token client request at 10.05 s finds 50 tokens.
func TestBackgroundTokens(t *testing.T) {
	cfg := ServiceConfig{Config: spec.Config{Name: "s", TPM: 60_000, TokenBurst: 1000, Background: spec.Background{Rate: 10, Tokens: 200}}}
	m, err := NewModel(cfg, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	d := m.Arrive(10*time.Second+50*time.Millisecond, Request{Client: "c", Tokens: 100})
	if d.Kind != KindRateLimited || d.Limit != LimitTPM {
		t.Fatalf("client request: %v (%v), want a TPM 429", d.Kind, d.Limit)
	}
	if st := m.Stats(); st.BackgroundAdmitted != 9+46 || st.BackgroundLimited != 0 {
		t.Errorf("background %d admitted, %d dropped; want 55, 0", st.BackgroundAdmitted, st.BackgroundLimited)
	}
}

// TestBackgroundValidate rejects a negative or too high rate.
func TestBackgroundValidate(t *testing.T) {
	for _, b := range []spec.Background{{Rate: -1}, {Rate: spec.MaxBackgroundRate + 1}, {Rate: 1, Tokens: -1}, {Rate: 1, Burst: -1}} {
		if err := (ServiceConfig{Config: spec.Config{Name: "s", Background: b}}).Validate(); err == nil {
			t.Errorf("%+v accepted", b)
		}
	}
}
