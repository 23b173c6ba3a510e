package sched

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// A lowered request rate holds from the change: a call booked before it
// is booked again under the new rate, and the bucket carries over what it
// held, debt included.
func TestSetLimitsHoldsFromTheChange(t *testing.T) {
	cfg := Config{Services: map[string]ServiceConfig{"api": {MaxInFlight: 1, RequestsPerMinute: 600, RequestBurst: 1}}} // 10/s
	d := newDriver(t, cfg, func(*Call, int, time.Duration) (time.Duration, Outcome) {
		return 10 * time.Millisecond, Succeeded(nil)
	})
	d.submit(calls(5, func(int) Call { return Call{Service: "api"} })...)
	// c0 starts at 0; c1, admitted at 10 ms, is booked for 100 ms; c2,
	// admitted at 110 ms, for 200 ms.
	d.run(150 * time.Millisecond)
	if len(d.starts) != 2 {
		t.Fatalf("%d starts by 150 ms, want c0 and c1", len(d.starts))
	}
	d.now = 150 * time.Millisecond
	if err := d.core.SetLimits(d.now, "api", Limits{MaxInFlight: 1, RequestsPerMinute: 60, RequestBurst: 1}); err != nil {
		t.Fatal(err)
	}
	d.drain()
	d.run(time.Hour)
	// At 150 ms, c2's booking taken back, the old bucket was booked to
	// 200 ms: it held half a request, and so does the new one (1/s), so c2
	// starts 0.5 s later, at 650 ms; c3, admitted when c2 ends, at 1.65 s,
	// and c4 a second later.
	want := []time.Duration{0, 100 * time.Millisecond, 650 * time.Millisecond, 1650 * time.Millisecond, 2650 * time.Millisecond}
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

// TestLimitsBelowTheFloorRefused: SetLimits refuses a rate other than 0
// below MinRatePerMinute, and a limit that is not a finite number at least
// 0, naming the service (the limits in force stay); it takes the floor
// itself. New refuses and takes the same limits.
func TestLimitsBelowTheFloorRefused(t *testing.T) {
	set := Limits{MaxInFlight: 2, RequestsPerMinute: 60}
	tests := []struct {
		give Limits
		want string // in SetLimits' and New's error; "" for none
	}{
		{Limits{RequestsPerMinute: 1e-300}, "RequestsPerMinute 1e-300 is below the floor of 0.000694"},
		{Limits{TokensPerMinute: math.SmallestNonzeroFloat64}, "TokensPerMinute 5e-324 is below the floor"},
		{Limits{RequestsPerMinute: MinRatePerMinute * 0.999}, "is below the floor"},
		{Limits{RequestsPerMinute: math.NaN()}, "RequestsPerMinute NaN is not a finite number"},
		{Limits{TokenBurst: math.Inf(1)}, "TokenBurst +Inf is not a finite number"},
		{Limits{RequestBurst: -1}, "RequestBurst -1 is not a finite number"},
		{Limits{MaxInFlight: -1}, "MaxInFlight -1 is negative"},
		{Limits{RequestsPerMinute: MinRatePerMinute, TokensPerMinute: MinRatePerMinute}, ""},
		{Limits{}, ""},
	}
	for _, tt := range tests {
		c, err := New(Config{Services: map[string]ServiceConfig{"api": {MaxInFlight: set.MaxInFlight, RequestsPerMinute: set.RequestsPerMinute}}})
		if err != nil {
			t.Fatal(err)
		}
		err = c.SetLimits(0, "api", tt.give)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%+v: SetLimits: %v, want it taken", tt.give, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), `service "api"`)):
			t.Errorf("%+v: SetLimits: %v, want an error naming the service with %q", tt.give, err, tt.want)
		case tt.want != "":
			if got := c.Stats(0).Services[0].Limits; got != set {
				t.Errorf("%+v refused, the limits in force became %+v, want %+v", tt.give, got, set)
			}
		}
		_, err = New(Config{Services: map[string]ServiceConfig{"api": {MaxInFlight: tt.give.MaxInFlight,
			RequestsPerMinute: tt.give.RequestsPerMinute, RequestBurst: tt.give.RequestBurst,
			TokensPerMinute: tt.give.TokensPerMinute, TokenBurst: tt.give.TokenBurst}}})
		if (err == nil) != (tt.want == "") || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%+v: New: %v, want %q", tt.give, err, tt.want)
		}
	}
}

// TestCallBookedAtTheFloorStarts books a call under the lowest rate, one
// request a day, then raises the limit: the call, booked a day ahead, is
// booked again under the new rate and starts about a second later, and
// the next call follows it at the new rate.
func TestCallBookedAtTheFloorStarts(t *testing.T) {
	cfg := Config{Services: map[string]ServiceConfig{"api": {RequestsPerMinute: 60, RequestBurst: 1, Headroom: 1}}}
	d := newDriver(t, cfg, func(*Call, int, time.Duration) (time.Duration, Outcome) { return 0, Succeeded(nil) })
	if err := d.core.SetLimits(0, "api", Limits{RequestsPerMinute: MinRatePerMinute, RequestBurst: 1}); err != nil {
		t.Fatal(err)
	}
	d.submit(calls(2, func(int) Call { return Call{Service: "api"} })...)
	d.run(time.Second)
	d.now = time.Second
	if err := d.core.SetLimits(d.now, "api", Limits{RequestsPerMinute: 60, RequestBurst: 1}); err != nil {
		t.Fatal(err)
	}
	d.drain()
	d.submit(Call{ID: "late", Service: "api"})
	d.run(math.MaxInt64 - 1)
	if len(d.starts) != 3 {
		t.Fatalf("%d starts, want 3: %+v", len(d.starts), d.starts)
	}
	// c0 empties the bucket at 0, and one request a day refills it by 24 h
	// (c1 was booked then). At 1 s c1's booking is taken back and the new
	// bucket (1/s) carries the old one's level, 1 s/24 h of a request: it
	// holds one (1 − 1 s/24 h) s later, when c1 starts; late follows 1 s
	// after.
	const day = 24 * time.Hour
	if s := d.starts[0]; s.id != "c0" || s.at != 0 {
		t.Errorf("first start %s at %v, want c0 at 0", s.id, s.at)
	}
	c1 := time.Second + time.Duration(math.Round((1-float64(time.Second)/float64(day))*float64(time.Second)))
	if s := d.starts[1]; s.id != "c1" || s.at < c1-time.Microsecond || s.at > c1+time.Microsecond {
		t.Errorf("second start %s at %v, want c1 at %v", s.id, s.at, c1)
	}
	if s := d.starts[2]; s.id != "late" || s.at < c1+time.Second-time.Microsecond || s.at > c1+time.Second+time.Microsecond {
		t.Errorf("third start %s at %v, want late at %v", s.id, s.at, c1+time.Second)
	}
}

// TestSetLimitsRebooksInAdmissionOrder: calls booked ahead under one rate
// are booked again in the order they were admitted when SetLimits lowers
// or raises it, at the new pace from the level the bucket holds.
func TestSetLimitsRebooksInAdmissionOrder(t *testing.T) {
	cfg := Config{Services: map[string]ServiceConfig{"api": {RequestsPerMinute: 60, RequestBurst: 1, Headroom: 1}}}
	d := newDriver(t, cfg, func(*Call, int, time.Duration) (time.Duration, Outcome) { return 0, Succeeded(nil) })
	d.submit(calls(4, func(int) Call { return Call{Service: "api"} })...)
	d.run(0) // c0 starts at 0; c1, c2, c3 are booked at 1 s, 2 s, 3 s
	// At 0 the bucket is empty: at 120 a minute (2/s) it holds one request
	// after 0.5 s, then one every 0.5 s.
	if err := d.core.SetLimits(0, "api", Limits{RequestsPerMinute: 120, RequestBurst: 1}); err != nil {
		t.Fatal(err)
	}
	d.drain()
	d.run(math.MaxInt64 - 1)
	want := []struct {
		id string
		at time.Duration
	}{{"c0", 0}, {"c1", 500 * time.Millisecond}, {"c2", time.Second}, {"c3", 1500 * time.Millisecond}}
	if len(d.starts) != len(want) {
		t.Fatalf("%d starts, want %d: %+v", len(d.starts), len(want), d.starts)
	}
	for i, w := range want {
		if s := d.starts[i]; s.id != w.id || s.at != w.at {
			t.Errorf("start %d: %s at %v, want %s at %v", i, s.id, s.at, w.id, w.at)
		}
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

// TestStatsMarshalJSON: a Runner's Stats, with a service that has no
// buckets (NaN levels), encodes as JSON with null levels, and decodes back
// to the same Stats.
func TestStatsMarshalJSON(t *testing.T) {
	r, err := NewRunner(Config{Services: map[string]ServiceConfig{
		"bare": {MaxInFlight: 2},
		"llm":  {RequestsPerMinute: 600, TokensPerMinute: 60_000},
	}}, func(context.Context, *Call, int) Outcome { return Succeeded(nil) })
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	st := r.Stats()
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatalf("json.Marshal(Stats): %v", err)
	}
	var raw struct{ Services []map[string]any }
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	if len(raw.Services) != 2 {
		t.Fatalf("%s: want 2 services", b)
	}
	for _, s := range raw.Services {
		bare := s["Name"] == "bare"
		for _, k := range []string{"Requests", "Tokens"} {
			v, ok := s[k]
			if !ok || (v == nil) != bare {
				t.Errorf("%s: service %v %s is %v, want null only for bare", b, s["Name"], k, v)
			}
		}
		if _, ok := s["Limits"].(map[string]any); !ok {
			t.Errorf("%s: service %v lost its Limits", b, s["Name"])
		}
	}
	var back Stats
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.At != st.At || len(back.Services) != 2 {
		t.Fatalf("decoded %+v, want %+v", back, st)
	}
	for i, s := range st.Services {
		g := back.Services[i]
		same := func(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }
		if g.Name != s.Name || g.Limits != s.Limits || g.Limit != s.Limit || !same(g.Requests, s.Requests) || !same(g.Tokens, s.Tokens) {
			t.Errorf("service %d decoded as %+v, want %+v", i, g, s)
		}
	}
}
