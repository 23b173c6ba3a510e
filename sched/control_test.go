package sched

import (
	"errors"
	"math"
	"testing"
	"time"
)

// A lowered request rate holds from the next admission: the calls booked
// before the change keep their times, and the bucket carries over what it
// held, debt included.
func TestSetLimitsHoldsFromTheNextAdmission(t *testing.T) {
	cfg := Config{Services: map[string]ServiceConfig{"api": {MaxInFlight: 1, RequestsPerMinute: 600, RequestBurst: 1}}} // 10/s
	d := newDriver(t, cfg, func(*Call, int, time.Duration) (time.Duration, Outcome) {
		return 10 * time.Millisecond, Succeeded(nil)
	})
	d.submit(calls(5, func(int) Call { return Call{Service: "api"} })...)
	// c0 starts at 0; c1, admitted at 10 ms, is booked for 100 ms; c2,
	// admitted at 110 ms, for 200 ms.
	d.run(150 * time.Millisecond)
	d.now = 150 * time.Millisecond
	if err := d.core.SetLimits(d.now, "api", Limits{MaxInFlight: 1, RequestsPerMinute: 60, RequestBurst: 1}); err != nil {
		t.Fatal(err)
	}
	d.drain()
	d.run(time.Hour)
	// At 150 ms the old bucket was booked to 300 ms, half a request in
	// debt: the new one (1/s) holds −0.5 then, so c3 starts at
	// 150 ms + 1.5 s and c4 a second later.
	want := []time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond, 1650 * time.Millisecond, 2650 * time.Millisecond}
	for i, s := range d.starts {
		if s.at != want[i] {
			t.Errorf("start %d at %v, want %v", i, s.at, want[i])
		}
	}
}

func TestSetLimitsRaisesTheCap(t *testing.T) {
	cfg := Config{Services: map[string]ServiceConfig{"api": {MaxInFlight: 1}}}
	d := newDriver(t, cfg, func(*Call, int, time.Duration) (time.Duration, Outcome) {
		return time.Second, Succeeded(nil)
	})
	d.submit(calls(4, func(int) Call { return Call{Service: "api"} })...)
	if st := d.core.Stats(0); st.Services[0].InFlight != 1 || st.Services[0].Queued != 3 || st.Waiting != 3 || st.Services[0].Limit != 1 {
		t.Errorf("stats before: %+v", st)
	}
	if err := d.core.SetLimits(0, "api", Limits{MaxInFlight: 4}); err != nil {
		t.Fatal(err)
	}
	d.drain()
	st := d.core.Stats(0)
	if s := st.Services[0]; s.InFlight != 4 || s.Queued != 0 || s.Limit != 4 || !math.IsNaN(s.Requests) {
		t.Errorf("stats after raising the cap: %+v", st)
	}
	d.run(time.Hour)
	if d.peak != 4 {
		t.Errorf("peak %d in flight, want 4", d.peak)
	}
}

func TestSetLimitsRefusesMistakes(t *testing.T) {
	c, _ := New(Config{Services: map[string]ServiceConfig{"api": {}}})
	if err := c.SetLimits(0, "apj", Limits{MaxInFlight: 1}); err == nil {
		t.Error("an unknown service was accepted")
	}
	if err := c.SetLimits(0, "api", Limits{RequestsPerMinute: -1}); err == nil {
		t.Error("a negative rate was accepted")
	}
}

// A queued call that a lowered token capacity can never hold fails with
// ErrNeverFits instead of waiting forever.
func TestSetLimitsBelowAQueuedCall(t *testing.T) {
	cfg := Config{Services: map[string]ServiceConfig{"llm": {MaxInFlight: 1, TokensPerMinute: 60_000}}}
	d := newDriver(t, cfg, nil)
	d.submit(Call{ID: "a", Service: "llm", Tokens: 5000}, Call{ID: "b", Service: "llm", Tokens: 5000})
	if err := d.core.SetLimits(d.now, "llm", Limits{MaxInFlight: 1, TokensPerMinute: 1000}); err != nil {
		t.Fatal(err)
	}
	d.drain()
	d.run(time.Hour)
	if r := d.results["b"]; !errors.Is(r.Err, ErrNeverFits) {
		t.Errorf("b: %+v, want ErrNeverFits", r)
	}
	if st := d.core.Stats(d.now); st.Services[0].Tokens != 1000 || st.Services[0].Limits.TokensPerMinute != 1000 {
		t.Errorf("stats: %+v", st)
	}
}
