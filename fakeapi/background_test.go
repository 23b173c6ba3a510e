package fakeapi

import (
	"math/rand/v2"
	"testing"
	"time"
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
//     token, so the client's at 50 ms is refused; from then on each client
//     request takes the token refilled 100 ms after the last one, 50 ms
//     before the next background request comes and is dropped.
func TestBackgroundSpendsTheKeysBuckets(t *testing.T) {
	for _, tc := range []struct {
		rate                            float64
		admitted, bgAdmitted, bgDropped int64
	}{{0, 20, 0, 0}, {10, 0, 20, 0}, {5, 19, 1, 9}} {
		cfg := ServiceConfig{Name: "s", RPS: 10, Burst: 1, Headers: HeadersOpenAI, Background: BackgroundConfig{Rate: tc.rate}}
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
// tokens every 100 ms against a bucket of 1,000 refilled at 1,000 tokens/s.
// The level before the k-th is 1,000 − 100k while that is at least 200
// (k = 0…8 admitted); then, 100 refilled per request, every other one fits
// (k = 10, 12, …, 100 admitted, the odd ones dropped). The one at 10 s
// empties the bucket, so a 100-token client request at 10.05 s finds 50.
func TestBackgroundTokens(t *testing.T) {
	cfg := ServiceConfig{Name: "s", TPM: 60_000, TokenBurst: 1000, Background: BackgroundConfig{Rate: 10, Tokens: 200}}
	m, err := NewModel(cfg, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	d := m.Arrive(10*time.Second+50*time.Millisecond, Request{Client: "c", Tokens: 100})
	if d.Kind != KindRateLimited || d.Limit != LimitTPM {
		t.Fatalf("client request: %v (%v), want a TPM 429", d.Kind, d.Limit)
	}
	if st := m.Stats(); st.BackgroundAdmitted != 9+46 || st.BackgroundLimited != 46 {
		t.Errorf("background %d admitted, %d dropped; want 55, 46", st.BackgroundAdmitted, st.BackgroundLimited)
	}
}

// TestBackgroundValidate rejects a negative or too high rate.
func TestBackgroundValidate(t *testing.T) {
	for _, b := range []BackgroundConfig{{Rate: -1}, {Rate: MaxBackgroundRate + 1}, {Rate: 1, Tokens: -1}} {
		if err := (ServiceConfig{Name: "s", Background: b}).Validate(); err == nil {
			t.Errorf("%+v accepted", b)
		}
	}
}
