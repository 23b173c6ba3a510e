package fakeapi

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/simbench/simbench/spec"
)

func ptr[T any](v T) *T { return &v }

// admittedPerSecond drives a model with one request every 10 ms over [0,
// end) and counts the admissions in each whole second.
func admittedPerSecond(m *Model, end time.Duration) []int {
	counts := make([]int, end/time.Second)
	for now := time.Duration(0); now < end; now += 10 * ms {
		d := m.Arrive(now, Request{Client: "a"})
		if d.Admitted() {
			counts[now/time.Second]++
			m.Finish(now, d.ID, false)
		}
	}
	return counts
}

// TestEventLimitsChangeAndRevert: a 10/s service offered 100 requests a
// second admits 10 a second once its burst is spent; an event halving its
// limits from 10 s to 15 s admits 5 a second exactly then, and 10 a second
// again from 15 s. Each algorithm meets the change at its instant.
func TestEventLimitsChangeAndRevert(t *testing.T) {
	tests := []struct {
		alg    spec.Algorithm
		limits spec.EventLimits
	}{
		{spec.TokenBucket, spec.EventLimits{Factor: 0.5}},
		{spec.FixedWindow, spec.EventLimits{Factor: 0.5}},
		{spec.SlidingWindow, spec.EventLimits{Factor: 0.5}},
		{spec.TokenBucket, spec.EventLimits{RPS: 5}},
		{spec.SlidingWindow, spec.EventLimits{RPS: 5}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%+v", tt.alg, tt.limits), func(t *testing.T) {
			limits := tt.limits
			m := newTestModel(t, ServiceConfig{Config: spec.Config{Name: "api", RPS: 10, Algorithm: tt.alg},
				Events: []spec.Event{{At: 10 * time.Second, For: 5 * time.Second, Limits: &limits}}})
			got := admittedPerSecond(m, 20*time.Second)
			for sec := 2; sec < 20; sec++ {
				want := 10
				if sec >= 10 && sec < 15 {
					want = 5
				}
				if got[sec] != want {
					t.Errorf("second %d admitted %d, want %d (all: %v)", sec, got[sec], want, got)
				}
			}
		})
	}
}

// TestEventLimitsPublished: during the event the rate-limit headers publish
// the new limits; a token bucket's level is clamped to the new capacity.
func TestEventLimitsPublished(t *testing.T) {
	m := newTestModel(t, ServiceConfig{Config: spec.Config{Name: "api", RPM: 600, TPM: 10_000},
		Events: []spec.Event{{At: time.Minute, For: time.Minute, Limits: &spec.EventLimits{Factor: 0.25}}}})
	d := m.Arrive(0, Request{Tokens: 100})
	if d.Requests.Limit != 600 || d.TokenQuota.Limit != 10_000 {
		t.Fatalf("before: %+v %+v", d.Requests, d.TokenQuota)
	}
	// The bucket refilled to full (600) by 1m; the cut clamps it to 150,
	// and this request takes one.
	d = m.Arrive(time.Minute, Request{Tokens: 100})
	if d.Requests.Limit != 150 || d.Requests.Remaining != 149 || d.TokenQuota.Limit != 2500 || d.TokenQuota.Remaining != 2400 {
		t.Fatalf("during: %+v %+v", d.Requests, d.TokenQuota)
	}
	d = m.Arrive(2*time.Minute, Request{Tokens: 100})
	if d.Requests.Limit != 600 || d.TokenQuota.Limit != 10_000 {
		t.Fatalf("after: %+v %+v", d.Requests, d.TokenQuota)
	}
	// The bucket refilled to its capacity of 150 by 2m; the restore keeps
	// that level (the capacity grows to 600) and this request takes one.
	if d.Requests.Remaining != 149 {
		t.Errorf("after the restore the level is %d, want 149 (150 kept across it, less this request)", d.Requests.Remaining)
	}
}

// TestEventLimitsBackToBack: one limit event ending where the next starts
// hands over at that instant, without the configured limits in between.
func TestEventLimitsBackToBack(t *testing.T) {
	m := newTestModel(t, ServiceConfig{Config: spec.Config{Name: "api", RPS: 20}, Events: []spec.Event{
		{At: 10 * time.Second, For: 5 * time.Second, Limits: &spec.EventLimits{Factor: 0.25}},
		{At: 5 * time.Second, For: 5 * time.Second, Limits: &spec.EventLimits{Factor: 0.5}},
	}})
	got := admittedPerSecond(m, 20*time.Second)
	for sec := 2; sec < 20; sec++ {
		want := 20
		switch {
		case sec >= 5 && sec < 10:
			want = 10
		case sec >= 10 && sec < 15:
			want = 5
		}
		if got[sec] != want {
			t.Errorf("second %d admitted %d, want %d (all: %v)", sec, got[sec], want, got)
		}
	}
}

// TestEventConcurrency: an absolute max_concurrent during an event refuses
// the requests past it, and requests in flight keep their slots.
func TestEventConcurrency(t *testing.T) {
	m := newTestModel(t, ServiceConfig{Config: spec.Config{Name: "api", MaxConcurrent: 4},
		Events: []spec.Event{{At: time.Second, For: time.Second, Limits: &spec.EventLimits{MaxConcurrent: 1}}}})
	var ids []ID
	for range 3 {
		d := m.Arrive(0, Request{})
		if !d.Admitted() {
			t.Fatalf("before the event: %+v", d)
		}
		ids = append(ids, d.ID)
	}
	if d := m.Arrive(time.Second, Request{}); d.Kind != KindRateLimited || d.Limit != LimitConcurrency {
		t.Fatalf("during, 3 in flight: %+v, want a concurrency 429", d)
	}
	for _, id := range ids {
		m.Finish(time.Second, id, false)
	}
	d := m.Arrive(time.Second, Request{})
	if !d.Admitted() {
		t.Fatalf("during, none in flight: %+v", d)
	}
	if d2 := m.Arrive(time.Second, Request{}); d2.Kind != KindRateLimited {
		t.Fatalf("during, 1 in flight: %+v, want a 429", d2)
	}
	for range 3 {
		if d := m.Arrive(2*time.Second, Request{}); !d.Admitted() {
			t.Fatalf("after the event: %+v", d)
		}
	}
}

// TestEventStallFinishAt: work progresses only outside a stall.
func TestEventStallFinishAt(t *testing.T) {
	s := 50 * time.Second
	tl := newTimeline([]spec.Event{{At: s, For: time.Second, Stall: true}, {At: 60 * time.Second, For: time.Second, Stall: true}})
	tests := []struct {
		name     string
		now, lat time.Duration
		want     time.Duration
	}{
		{"done before the stall", s - 10*ms, ms, s - 9*ms},
		{"done at the stall's start waits it out", s - ms, ms, s + time.Second},
		{"crosses the start", s - ms, 3 * ms, s + time.Second + 2*ms},
		{"arrives at the start", s, ms, s + time.Second + ms},
		{"arrives during, no work", s + 500*ms, 0, s + time.Second},
		{"arrives at the end", s + time.Second, ms, s + time.Second + ms},
		{"crosses both stalls", s - ms, 10*time.Second + ms, 62 * time.Second},
		{"after both", 70 * time.Second, ms, 70*time.Second + ms},
	}
	for _, tt := range tests {
		if got := tl.finishAt(tt.now, tt.lat); got != tt.want {
			t.Errorf("%s: finishAt(%v, %v) = %v, want %v", tt.name, tt.now, tt.lat, got, tt.want)
		}
	}
}

// TestEventStallHoldsAnswers: admitted requests include the frozen time in
// their latency and rejections are held until the stall ends.
func TestEventStallHoldsAnswers(t *testing.T) {
	m := newTestModel(t, ServiceConfig{Config: spec.Config{Name: "api", RPS: 1, Latency: spec.Dist[time.Duration]{Value: 100 * ms}},
		Events: []spec.Event{{At: time.Second, For: 2 * time.Second, Stall: true}}})
	if d := m.Arrive(950*ms, Request{}); !d.Admitted() || d.Latency != 2100*ms {
		t.Fatalf("in service at the stall: %+v, want admitted with latency 2.1s", d)
	}
	if d := m.Arrive(1500*ms, Request{}); d.Kind != KindRateLimited || d.Latency != 1500*ms {
		t.Fatalf("rejected during the stall: %+v, want a 429 held 1.5s", d)
	}
	if d := m.Arrive(3*time.Second, Request{}); !d.Admitted() || d.Latency != 100*ms {
		t.Fatalf("after the stall: %+v", d)
	}
	if d := m.Arrive(3*time.Second, Request{}); d.Kind != KindRateLimited || d.Latency != 0 {
		t.Fatalf("rejected after the stall: %+v, want answered at once", d)
	}
}

// TestEventOutageStatus: an outage refuses everything in its window with
// the provider's overloaded status, and nothing outside it.
func TestEventOutageStatus(t *testing.T) {
	tests := []struct {
		api  spec.APIStyle
		want int
	}{{spec.APIOpenAI, 503}, {spec.APIGeneric, 503}, {spec.APIAnthropic, 529}}
	for _, tt := range tests {
		m := newTestModel(t, ServiceConfig{Config: spec.Config{Name: "api", API: tt.api},
			Events: []spec.Event{{At: time.Second, For: time.Second, Outage: true}}})
		for _, at := range []time.Duration{0, time.Second, 1500 * ms, 2 * time.Second} {
			d := m.Arrive(at, Request{})
			out := at >= time.Second && at < 2*time.Second
			switch {
			case out && (d.Kind != KindOverloaded || d.Status != tt.want || d.Wait != 2*time.Second-at):
				t.Errorf("%s at %v: %+v, want %d overloaded", tt.api, at, d, tt.want)
			case !out && !d.Admitted():
				t.Errorf("%s at %v: %+v, want admitted", tt.api, at, d)
			}
			if d.Admitted() {
				m.Finish(at, d.ID, false)
			}
		}
	}
}

// TestEventRatesAndLatency: error and overload rates of 1 and a latency
// factor apply to the event's window only.
func TestEventRatesAndLatency(t *testing.T) {
	m := newTestModel(t, ServiceConfig{Config: spec.Config{Name: "api", Latency: spec.Dist[time.Duration]{Value: 100 * ms}}, Events: []spec.Event{
		{At: time.Second, For: time.Second, ErrorRate: ptr(1.0), LatencyFactor: 3},
		{At: 3 * time.Second, For: time.Second, OverloadRate: ptr(1.0)},
	}})
	tests := []struct {
		at      time.Duration
		kind    Kind
		latency time.Duration
	}{
		{0, KindOK, 100 * ms},
		{time.Second, KindServerError, 300 * ms},
		{2 * time.Second, KindOK, 100 * ms},
		{3 * time.Second, KindOverloaded, 0},
		{4 * time.Second, KindOK, 100 * ms},
	}
	for _, tt := range tests {
		d := m.Arrive(tt.at, Request{})
		if d.Kind != tt.kind || d.Latency != tt.latency {
			t.Errorf("at %v: kind %v latency %v, want %v %v", tt.at, d.Kind, d.Latency, tt.kind, tt.latency)
		}
		if d.Admitted() {
			m.Finish(tt.at+d.Latency, d.ID, false)
		}
	}
}

// TestEventValidation reports every problem with a service's events at once.
func TestEventValidation(t *testing.T) {
	cfg := ServiceConfig{Config: spec.Config{Name: "api", RPS: 10}, Events: []spec.Event{
		{At: -time.Second, For: 2 * time.Second, Stall: true},                        // negative at
		{At: time.Second, For: -time.Second},                                         // negative for, changes nothing
		{At: 0, For: 10 * time.Second, Outage: true},                                 // overlaps the stall
		{At: 0, For: time.Second, Limits: &spec.EventLimits{Factor: 0.5, RPS: 2}},    // both
		{At: 0, For: time.Second, ErrorRate: ptr(1.5), LatencyFactor: -1},            // bad rate, bad factor
		{At: 500 * ms, For: time.Second, Limits: &spec.EventLimits{RPS: 3}},          // overlaps limits of [3]
		{At: 20 * time.Second, For: time.Second, Limits: &spec.EventLimits{}},        // sets no limit
		{At: 30 * time.Second, For: time.Second, Limits: &spec.EventLimits{RPS: -1}}, // negative
		{At: 40 * time.Second, For: time.Second, Stall: true, Outage: true},          // both
	}}
	err := cfg.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		`events[0].at: is -1s; it must not be negative`, `events[1].for: is -1s; it must be above 0`, `events[1]: changes nothing`,
		`events[2]: overlaps the event from -1s to 1s, which also changes stall and outage`,
		`events[3].limit_factor: scales every limit, so it cannot be set with absolute limits`,
		`events[4].error_rate: is 1.5; it must be a fraction in [0, 1]`, `events[4].latency_factor: is -1; it must be above 0`,
		`events[5]: overlaps the event from 0s to 1s, which also changes limits`,
		`events[6]: changes the limits but sets none`, `events[8].outage: is set with stall = true in the same event`,
		`events[7].rps: is -1; it must not be negative`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%v", want, err)
		}
	}
}

// TestServerAppliesEvents: the server's services follow their events in the
// models' time: an outage is answered with each provider's status, and a
// stall holds answers, admitted or not, until it ends.
func TestServerAppliesEvents(t *testing.T) {
	var clk manualClock
	outage := []spec.Event{{At: time.Second, For: time.Second, Outage: true}}
	s, c := startServer(t, ServerConfig{Clock: clk.now, Services: []ServiceConfig{
		{Config: spec.Config{Name: "gpt", Headers: spec.HeadersOpenAI}, Events: outage},
		{Config: spec.Config{Name: "claude", Headers: spec.HeadersAnthropic}, Events: outage},
		{Config: spec.Config{Name: "tools", Headers: spec.HeadersStandard}, Events: outage},
		{Config: spec.Config{Name: "frozen", RPS: 1, Headers: spec.HeadersStandard}, Events: []spec.Event{{At: 5 * time.Second, For: 20 * ms, Stall: true}}},
	}})
	const claudeBody = `{"model":"claude-test","max_tokens":20,"messages":[{"role":"user","content":"hello"}]}`
	send := func(name string) response {
		switch name {
		case "gpt":
			return do(t, c, "POST", s.URL(name)+"/v1/chat/completions", chatBody)
		case "claude":
			return do(t, c, "POST", s.URL(name)+"/v1/messages", claudeBody)
		}
		return do(t, c, "POST", s.URL(name)+"/tools/search", `{}`)
	}
	wantDuring := map[string]int{"gpt": 503, "claude": 529, "tools": 503}
	for _, at := range []time.Duration{0, time.Second, 1500 * ms, 2 * time.Second} {
		clk.ns.Store(int64(at))
		for _, name := range []string{"gpt", "claude", "tools"} {
			want := 200
			if at >= time.Second && at < 2*time.Second {
				want = wantDuring[name]
			}
			if r := send(name); r.status != want {
				t.Errorf("%s at %v: status %d, want %d (%v)", name, at, r.status, want, r.body)
			}
		}
	}
	if r := send("claude"); r.status != 200 {
		t.Fatalf("claude after the outage: %d", r.status)
	}
	clk.ns.Store(int64(time.Second))
	if r := send("claude"); r.body["error"].(map[string]any)["type"] != "overloaded_error" {
		t.Errorf("claude outage body %v, want an overloaded_error", r.body)
	}
	if r := send("gpt"); r.body["error"].(map[string]any)["code"] != "overloaded" {
		t.Errorf("gpt outage body %v, want the code overloaded", r.body)
	}
	for name, want := range map[string]int64{"gpt": 3, "claude": 3, "tools": 2} {
		if got := s.Stats().Services[name].Errors["overloaded"]; got != want {
			t.Errorf("%s counted %d overloaded answers, want %d", name, got, want)
		}
	}

	// In the stall: the first request is admitted and answered after it,
	// the second (over rps 1) is refused, also after it.
	clk.ns.Store(int64(5 * time.Second))
	if r := send("frozen"); r.status != 200 {
		t.Errorf("admitted during the stall: %d", r.status)
	}
	if r := send("frozen"); r.status != 429 {
		t.Errorf("refused during the stall: %d", r.status)
	}
	st := s.Stats().Services["frozen"]
	if st.Completed != 1 || st.RateLimited != 1 {
		t.Errorf("frozen stats %+v, want 1 completed, 1 rate limited", st)
	}
}
