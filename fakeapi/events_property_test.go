package fakeapi

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/simbench/simbench/spec"
)

// TestEventValidatorMatchesModelAndServer checks, over generated services
// and timed events full of edge values (negative and zero times, overlaps,
// factors that overflow the limiters, NaN, rates above 1, limits both
// scaled and absolute), that the one validator of events
// (spec.Config.EventProblems, with the service's own Problems) accepts a
// configuration exactly when the model builds from it and the server
// starts with it, and that a model built from an accepted one answers
// requests before, during and after its events with no negative latency,
// wait or published quota, with every limiter within its arithmetic, and
// without panicking.
func TestEventValidatorMatchesModelAndServer(t *testing.T) {
	accepted, withEvents := 0, 0
	rapid.Check(t, func(t *rapid.T) {
		cfg := ServiceConfig{Config: genEventService(t)}
		for range rapid.IntRange(0, 3).Draw(t, "events") {
			cfg.Events = append(cfg.Events, genEvent(t))
		}
		problems := append(cfg.Config.Problems(), cfg.Config.EventProblems(cfg.Events)...)
		m, modelErr := NewModel(cfg, rand.New(rand.NewPCG(1, 2)))
		srv, srvErr := Start(ServerConfig{Services: []ServiceConfig{cfg}, Seed: 1})
		if srv != nil {
			srv.Close()
		}
		valid := len(problems) == 0
		if valid != (modelErr == nil) {
			t.Fatalf("validator problems %v, but NewModel: %v", problems, modelErr)
		}
		if valid != (srvErr == nil) {
			t.Fatalf("validator problems %v, but Start: %v", problems, srvErr)
		}
		if !valid {
			if !strings.Contains(modelErr.Error(), problems[0].String()) {
				t.Fatalf("NewModel: %v, want the validator's %q", modelErr, problems[0])
			}
			return
		}
		accepted++
		if len(cfg.Events) > 0 {
			withEvents++
		}
		now := time.Duration(0)
		for i := range rapid.IntRange(1, 30).Draw(t, "requests") {
			now += time.Duration(rapid.Int64Range(0, int64(3*time.Second)).Draw(t, "gap"))
			d := m.Arrive(now, Request{Key: keyOf(cfg.Keys, i), Tokens: rapid.Int64Range(0, 500).Draw(t, "tokens"), OutputTokens: 10})
			if d.Latency < 0 || d.Wait < 0 {
				t.Fatalf("at %v: latency %v, wait %v; neither may be negative", now, d.Latency, d.Wait)
			}
			for _, q := range d.quotas() {
				if q.Limit < 0 || q.Remaining < 0 || q.Reset < 0 {
					t.Fatalf("at %v: published quota %+v; none of it may be negative", now, *q)
				}
			}
			m.eachTenant(func(tn *tenant) { checkTenant(t, now, tn) })
			switch {
			case d.Kind == KindHang:
				m.Cancel(now+time.Second, d.ID)
			case d.Admitted():
				m.Finish(now+d.Latency, d.ID, false)
			}
		}
	})
	t.Logf("%d configurations valid, %d of them with events", accepted, withEvents)
	if accepted == 0 || withEvents == 0 {
		t.Errorf("%d generated configurations valid, %d of them with events; the generator tests only refusals", accepted, withEvents)
	}
}

// checkTenant fails t unless every limiter tn enforces keeps its limit
// and capacity within the bounds (at most spec.MaxLimit over the window,
// spec.MaxRPS a second), its credit within its bucket, and
// its concurrency cap not negative.
func checkTenant(t *rapid.T, now time.Duration, tn *tenant) {
	if tn.maxConc < 0 {
		t.Fatalf("at %v: concurrency cap %d", now, tn.maxConc)
	}
	for k := tn.has; k != 0; k &= k - 1 {
		l := &tn.lim[k.first()]
		hi := int64(spec.MaxLimit)
		if l.window < time.Minute {
			hi = spec.MaxRPS
		}
		if l.limit < 1 || l.limit > hi || l.capacity < 1 || l.capacity > hi {
			t.Fatalf("at %v: limiter of %v: limit %d, capacity %d; both must be in [1, %d]", now, l.window, l.limit, l.capacity, hi)
		}
		if full := whole(l.capacity); l.alg == spec.TokenBucket && (full.less(l.credit) || l.credit.less(whole(-l.capacity)) || l.credit.rem < 0 || l.credit.rem >= int64(l.window)) {
			t.Fatalf("at %v: token bucket credit %+v outside ±%d units", now, l.credit, l.capacity)
		}
	}
}

// genEventService draws a service whose own configuration is mostly valid,
// with limits up to the largest the limiters count, so that an event's
// factor can overflow them.
func genEventService(t *rapid.T) spec.Config {
	perSecond, perMinute := int64(spec.MaxRPS), int64(spec.MaxLimit)
	c := spec.Config{
		Name:          "api",
		RPS:           choose(t, "rps", []int64{0, 10, perSecond}, nil),
		RPM:           choose(t, "rpm", []int64{0, 600, perMinute, perMinute}, nil),
		TPM:           choose(t, "tpm", []int64{0, 10_000, perMinute, perMinute}, nil),
		MaxConcurrent: choose(t, "max_concurrent", []int{0, 4, math.MaxInt32, math.MaxInt}, nil),
		Algorithm:     choose(t, "limiter", []spec.Algorithm{spec.TokenBucket, spec.FixedWindow, spec.SlidingWindow}, nil),
		Latency:       spec.Constant(100 * time.Millisecond),
		Faults: spec.Faults{
			HangRate:  choose(t, "hang_rate", []float64{0, 0.3}, nil),
			ResetRate: choose(t, "reset_rate", []float64{0, 0.3}, nil),
		},
		Headers: choose(t, "headers", []spec.HeaderStyle{spec.HeadersNone, spec.HeadersOpenAI, spec.HeadersAnthropic}, nil),
	}
	for i := range rapid.IntRange(0, 2).Draw(t, "keys") {
		c.Keys = append(c.Keys, spec.Key{Key: string(rune('a' + i)),
			RPM: choose(t, "key.rpm", []int64{0, 100, perMinute}, nil), MaxConcurrent: choose(t, "key.max_concurrent", []int{0, 2, math.MaxInt}, nil)})
	}
	return c
}

// genEvent draws one event: each aspect set or not, with good values and
// now and then a bad one.
func genEvent(t *rapid.T) spec.Event {
	perMinute := int64(spec.MaxLimit)
	e := spec.Event{
		At:  choose(t, "at", []time.Duration{0, time.Second, 10 * time.Second, 10 * time.Second}, []time.Duration{-time.Second}),
		For: choose(t, "for", []time.Duration{time.Second, 5 * time.Second, 20 * time.Second}, []time.Duration{0, -time.Second}),
	}
	rate := func(name string) *float64 {
		if !rapid.Bool().Draw(t, name+".set") {
			return nil
		}
		r := choose(t, name, []float64{0, 0.5, 1}, []float64{1.5, -0.1, math.NaN()})
		return &r
	}
	switch rapid.IntRange(0, 3).Draw(t, "limits") {
	case 1, 3:
		e.Limits = &spec.EventLimits{Factor: choose(t, "limit_factor", []float64{0.5, 2, 1000}, []float64{-1, math.NaN(), math.Inf(1), 1e30})}
		if rapid.IntRange(0, 19).Draw(t, "event.empty") == 13 {
			e.Limits.Factor = 0 // sets no limit
		}
	case 2:
		e.Limits = &spec.EventLimits{
			RPS:           choose(t, "event.rps", []int64{0, 3}, []int64{-1}),
			RPM:           choose(t, "event.rpm", []int64{0, 100, perMinute}, []int64{-1, perMinute + 1}),
			TPM:           choose(t, "event.tpm", []int64{0, 1000}, nil),
			MaxConcurrent: choose(t, "event.max_concurrent", []int{0, 1}, []int{-1}),
			Burst:         choose(t, "event.burst", []int64{0}, []int64{5}),
			TokenBurst:    choose(t, "event.token_burst", []int64{0, 100}, nil),
		}
		if rapid.IntRange(0, 19).Draw(t, "event.both") == 13 {
			e.Limits.Factor = 0.5
		}
	}
	e.LatencyFactor = choose(t, "latency_factor", []float64{0, 0, 2}, []float64{-1, math.NaN(), math.Inf(1)})
	e.ErrorRate, e.OverloadRate = rate("error_rate"), rate("overload_rate")
	e.Stall = rapid.IntRange(0, 4).Draw(t, "stall") == 0
	e.Outage = rapid.IntRange(0, 4).Draw(t, "outage") == 0
	return e
}
