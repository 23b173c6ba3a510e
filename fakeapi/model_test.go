package fakeapi

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/simbench/simbench/spec"
)

func newTestModel(t testing.TB, cfg ServiceConfig) *Model {
	t.Helper()
	m, err := NewModel(cfg, rand.New(rand.NewPCG(7, 7)))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestModelRetryAfterAndEarlyRetry(t *testing.T) {
	m := newTestModel(t, ServiceConfig{Config: spec.Config{Name: "llm", RPS: 10, Headers: spec.HeadersOpenAI}})
	for i := range 10 {
		if d := m.Arrive(0, Request{Client: "a"}); !d.Admitted() {
			t.Fatalf("request %d at 0 rejected: %+v", i, d)
		}
	}
	d := m.Arrive(0, Request{Client: "a"})
	if d.Kind != KindRateLimited || d.Status != 429 || d.Limit != LimitRPS {
		t.Fatalf("11th request = %+v, want 429 by rps", d)
	}
	if d.Wait != 100*ms || d.RetryAfter != 100*ms || !d.HasRetryAfter {
		t.Fatalf("wait, retry after = %v, %v, want 100ms, 100ms", d.Wait, d.RetryAfter)
	}
	// Halfway: rejected again, and counted as an early retry.
	if d := m.Arrive(50*ms, Request{Client: "a"}); d.Admitted() || !d.EarlyRetry || d.Wait != 50*ms {
		t.Fatalf("retry at 50ms = %+v, want rejected early retry with wait 50ms", d)
	}
	// Another client, a nanosecond before the slot frees: rejected with a
	// 1ns wait, not early.
	if d := m.Arrive(100*ms-1, Request{Client: "b"}); d.Admitted() || d.EarlyRetry || d.Wait != 1 {
		t.Fatalf("client b at 100ms-1ns = %+v, want rejected, wait 1ns, not early", d)
	}
	// On time: admitted.
	if d := m.Arrive(100*ms, Request{Client: "a"}); !d.Admitted() || d.EarlyRetry {
		t.Fatalf("retry on time = %+v, want admitted", d)
	}
	s := m.Stats()
	if s.EarlyRetries != 1 || s.RateLimited != 3 || s.RateLimitedBy["rps"] != 3 || s.Accepted != 11 {
		t.Fatalf("stats = %+v", s)
	}
}

func TestModelRetryAfterRounding(t *testing.T) {
	// 10 per second, bucket of 1: the second request at 0 waits 100 ms.
	tests := []struct {
		give      ServiceConfig
		wantAfter time.Duration
		wantHas   bool
	}{
		{ServiceConfig{Config: spec.Config{Headers: spec.HeadersOpenAI}}, 100 * ms, true},
		{ServiceConfig{Config: spec.Config{Headers: spec.HeadersAnthropic}}, time.Second, true},
		{ServiceConfig{Config: spec.Config{Headers: spec.HeadersStandard}}, time.Second, true},
		{ServiceConfig{Config: spec.Config{Headers: spec.HeadersNone}}, 0, false},
		{ServiceConfig{Config: spec.Config{Headers: spec.HeadersOpenAI, Lie: spec.LieShort, LieFactor: 0.5}}, 50 * ms, true},
		{ServiceConfig{Config: spec.Config{Headers: spec.HeadersAnthropic, Lie: spec.LieShort}}, 0, true},
		{ServiceConfig{Config: spec.Config{Headers: spec.HeadersOpenAI, Lie: spec.LieMissing}}, 0, false},
	}
	for _, tt := range tests {
		cfg := tt.give
		cfg.Name, cfg.RPS, cfg.Burst = "s", 10, 1
		m := newTestModel(t, cfg)
		m.Arrive(0, Request{})
		d := m.Arrive(0, Request{})
		if d.Wait != 100*ms || d.RetryAfter != tt.wantAfter || d.HasRetryAfter != tt.wantHas {
			t.Errorf("%s lie %q: wait %v, retry after %v (%v), want 100ms, %v (%v)",
				cfg.Headers, cfg.Lie, d.Wait, d.RetryAfter, d.HasRetryAfter, tt.wantAfter, tt.wantHas)
		}
	}
}

func TestModelTokensAndTooLarge(t *testing.T) {
	m := newTestModel(t, ServiceConfig{Config: spec.Config{Name: "s", TPM: 1000}})
	if d := m.Arrive(0, Request{Tokens: 600, OutputTokens: 300}); !d.Admitted() || d.Tokens != 900 {
		t.Fatalf("900 tokens = %+v, want admitted", d)
	}
	d := m.Arrive(0, Request{Tokens: 200})
	// 100 tokens left; 100 more refill at 1000/min in 6 s.
	if d.Kind != KindRateLimited || d.Limit != LimitTPM || d.Wait != 6*time.Second {
		t.Fatalf("200 more tokens = %+v, want 429 by tpm after 6s", d)
	}
	if d := m.Arrive(0, Request{Tokens: 1001}); d.Kind != KindTooLarge || d.Status != 413 {
		t.Fatalf("1001 tokens = %+v, want 413", d)
	}
	if d.TokenQuota.Limit != 1000 || d.TokenQuota.Remaining != 100 {
		t.Fatalf("token quota = %+v", d.TokenQuota)
	}
}

func TestModelCountRejected(t *testing.T) {
	// Fixed window of 2/s. Counting rejected requests, a client hammering
	// the window still gets the next window (fixed windows reset), but a
	// token bucket stays empty while it hammers.
	cfg := ServiceConfig{Config: spec.Config{Name: "s", RPS: 2, CountRejected: true}}
	m := newTestModel(t, cfg)
	admittedAt := 0
	for now := time.Duration(0); now < time.Second; now += 100 * ms {
		if m.Arrive(now, Request{}).Admitted() {
			admittedAt++
		}
	}
	// Full at 0: 2 admitted; every rejection spends one more, so the bucket
	// (refilling 0.2 per 100 ms) never gets back to 1 token.
	if admittedAt != 2 {
		t.Fatalf("admitted %d in the first second, want 2", admittedAt)
	}
	cfg.CountRejected = false
	m = newTestModel(t, cfg)
	admittedAt = 0
	for now := time.Duration(0); now < time.Second; now += 100 * ms {
		if m.Arrive(now, Request{}).Admitted() {
			admittedAt++
		}
	}
	// Without counting: 2 at once, then one per 500 ms (at 500 ms).
	if admittedAt != 3 {
		t.Fatalf("admitted %d in the first second without counting rejected, want 3", admittedAt)
	}
}

func TestModelConcurrencyAndWaste(t *testing.T) {
	m := newTestModel(t, ServiceConfig{Config: spec.Config{Name: "s", MaxConcurrent: 2,
		Latency: spec.Dist[time.Duration]{Kind: spec.DistConstant, Value: 2 * time.Second}}})
	a := m.Arrive(0, Request{Tokens: 10})
	b := m.Arrive(0, Request{Tokens: 20})
	c := m.Arrive(0, Request{})
	if !a.Admitted() || !b.Admitted() || c.Limit != LimitConcurrency || c.RetryAfter != time.Second {
		t.Fatalf("decisions = %+v %+v %+v", a, b, c)
	}
	if a.Latency != 2*time.Second {
		t.Fatalf("latency = %v", a.Latency)
	}
	m.Cancel(time.Second, a.ID)
	m.Finish(2*time.Second, b.ID, true)
	s := m.Stats()
	if s.CancelledByClient != 1 || s.Wasted != 1 || s.WastedWorkS != 2 || s.WastedTokens != 20 || s.Completed != 0 || s.PeakConcurrency != 2 || s.InFlight != 0 {
		t.Fatalf("stats = %+v", s)
	}
	if d := m.Arrive(3*time.Second, Request{}); !d.Admitted() {
		t.Fatal("slot not released")
	}
}

func TestModelMisusePanics(t *testing.T) {
	m := newTestModel(t, ServiceConfig{Config: spec.Config{Name: "s"}})
	d := m.Arrive(0, Request{})
	m.Finish(0, d.ID, false)
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "already released") {
			t.Fatalf("second Finish: recover() = %v", r)
		}
	}()
	m.Finish(0, d.ID, false)
}

func TestModelWriteRaces(t *testing.T) {
	m := newTestModel(t, ServiceConfig{Config: spec.Config{Name: "s", Latency: spec.Dist[time.Duration]{Value: time.Second}}})
	a := m.Arrive(0, Request{Method: "PUT", Path: "/doc/1", Write: true})
	b := m.Arrive(0, Request{Method: "GET", Path: "/doc/1"})
	c := m.Arrive(0, Request{Method: "POST", Path: "/x", Resource: "/doc/1", Write: true})
	d := m.Arrive(0, Request{Method: "PUT", Path: "/doc/2", Write: true})
	if a.WriteRace || b.WriteRace || !c.WriteRace || d.WriteRace {
		t.Fatalf("races = %v %v %v %v, want only the third", a.WriteRace, b.WriteRace, c.WriteRace, d.WriteRace)
	}
	m.Finish(time.Second, a.ID, false)
	m.Finish(time.Second, c.ID, false)
	if e := m.Arrive(time.Second, Request{Path: "/doc/1", Write: true}); e.WriteRace {
		t.Fatal("write after both finished counted as a race")
	}
	if got := m.Stats().WriteRaces; got != 1 {
		t.Fatalf("write races = %d, want 1", got)
	}
}

func TestModelTenants(t *testing.T) {
	m := newTestModel(t, ServiceConfig{Config: spec.Config{Name: "s", RPM: 2, Keys: []spec.Key{{Key: "k1"}, {Key: "k2", RPM: 1}}}})
	if d := m.Arrive(0, Request{Key: "nope"}); d.Status != 401 {
		t.Fatalf("unknown key = %+v, want 401", d)
	}
	if d := m.Arrive(0, Request{}); d.Status != 401 {
		t.Fatalf("no key = %+v, want 401", d)
	}
	got := map[string]int{}
	for range 3 {
		for _, k := range []string{"k1", "k2"} {
			if m.Arrive(0, Request{Key: k}).Admitted() {
				got[k]++
			}
		}
	}
	if got["k1"] != 2 || got["k2"] != 1 {
		t.Fatalf("admitted per key = %v, want k1:2 k2:1", got)
	}
	if s := m.Stats(); s.Errors["unauthorized"] != 2 {
		t.Fatalf("unauthorized = %d", s.Errors["unauthorized"])
	}
}

func TestModelFaultsAreDeterministic(t *testing.T) {
	cfg := ServiceConfig{Config: spec.Config{Name: "s", Faults: spec.Faults{ErrorRate: 0.1, HangRate: 0.1, ResetRate: 0.1,
		Overload: spec.Overload{Every: 10 * time.Second, Length: 2 * time.Second}},
		Latency: spec.Dist[time.Duration]{Kind: spec.DistExponential, Mean: 100 * ms}}}
	run := func() Stats {
		m := newTestModel(t, cfg)
		for now := time.Duration(0); now < 100*time.Second; now += 10 * ms {
			d := m.Arrive(now, Request{})
			switch {
			case d.Kind == KindHang:
				m.Cancel(now+time.Second, d.ID)
			case d.Admitted():
				m.Finish(now+d.Latency, d.ID, false)
			}
		}
		return m.Stats()
	}
	a, b := run(), run()
	for _, k := range []string{"server_error", "hang", "reset", "overloaded"} {
		if a.Errors[k] == 0 || a.Errors[k] != b.Errors[k] {
			t.Errorf("errors[%s] = %d then %d, want equal and non-zero", k, a.Errors[k], b.Errors[k])
		}
	}
	if a.Accepted+a.Errors["overloaded"] != a.Arrived {
		t.Errorf("accepted %d + overloaded %d != arrived %d", a.Accepted, a.Errors["overloaded"], a.Arrived)
	}
	// About 10% of admissions each, over ~8000 admissions.
	for _, k := range []string{"server_error", "hang", "reset"} {
		if f := float64(a.Errors[k]) / float64(a.Accepted); f < 0.08 || f > 0.12 {
			t.Errorf("%s fraction %.3f, want about 0.1", k, f)
		}
	}
}

func TestModelTimeline(t *testing.T) {
	m := newTestModel(t, ServiceConfig{Config: spec.Config{Name: "s", RPS: 1, Burst: 1}})
	for now := time.Duration(0); now < 3*time.Second; now += 500 * ms {
		m.Arrive(now, Request{})
	}
	tl := m.Stats().Timeline
	want := []Second{{0, 1, 1}, {1, 1, 1}, {2, 1, 1}}
	if len(tl) != 3 || tl[0] != want[0] || tl[1] != want[1] || tl[2] != want[2] {
		t.Fatalf("timeline = %v, want %v", tl, want)
	}
}

func TestValidateListsEveryProblem(t *testing.T) {
	err := ServiceConfig{Config: spec.Config{RPS: -1, Algorithm: "leaky", Headers: "aws",
		Latency: spec.Dist[time.Duration]{Kind: spec.DistLognormal, P50: time.Second, P95: 500 * ms},
		Faults:  spec.Faults{ErrorRate: 2}}}.Validate()
	if err == nil {
		t.Fatal("Validate() = nil")
	}
	for _, want := range []string{"has no name", "rps: is -1", `limiter: unknown value "leaky"`, `headers: unknown value "aws"`, "latency.p95: p95 (500ms) is below p50 (1s)", "faults.error_rate: is 2"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v\nmissing %q", err, want)
		}
	}
	if err := (ServiceConfig{Config: spec.Config{Name: "ok", RPM: 60}}).Validate(); err != nil {
		t.Fatalf("valid config: %v", err)
	}
}

func TestRetryDeadlinesDoNotGrowWithoutBound(t *testing.T) {
	// 10 requests/s; 100,000 clients each get one 429 and never return.
	m, err := NewModel(ServiceConfig{Config: spec.Config{Name: "s", RPS: 10, Headers: spec.HeadersOpenAI}}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100_000 {
		now := time.Duration(i) * time.Millisecond
		d := m.Arrive(now, Request{Client: strconv.Itoa(i)})
		if d.Admitted() {
			m.Finish(now, d.ID, false)
		}
	}
	if n := len(m.retryAt); n > 2*minPrune {
		t.Errorf("%d retry deadlines kept for clients whose deadlines passed long ago", n)
	}
	// A client that comes back early is still counted: exhaust the bucket
	// at 200 s, then return at once.
	now := 200 * time.Second
	for {
		d := m.Arrive(now, Request{Client: "again"})
		if d.Kind == KindRateLimited {
			break
		}
		m.Finish(now, d.ID, false)
	}
	before := m.Stats().EarlyRetries
	if e := m.Arrive(now, Request{Client: "again"}); !e.EarlyRetry || m.Stats().EarlyRetries != before+1 {
		t.Errorf("an early retry after pruning was not counted: %+v", e)
	}
}
