package quota_test

import (
	"context"
	. "github.com/simbench/simbench/sched/quota"
	"testing"
	"time"
)

// pinned returns a Redis backend and a lease over it sharing a virtual clock.
func pinned(t *testing.T, lim Limit, ttl time.Duration, lo, hi float64) (*Redis, *Lease, *time.Time) {
	clock := time.Unix(1_800_000_000, 0)
	now := func() time.Time { return clock }
	r := &Redis{Client: testClient(t), Now: now}
	return r, &Lease{Backend: r, Limit: lim, TTL: ttl, Min: lo, Max: hi, Now: now}, &clock
}

// TestLeaseReturnsUnused checks that a lease reserves one slice, serves
// takes from it without round trips, and gives the unused units back on
// Close and on expiry.
func TestLeaseReturnsUnused(t *testing.T) {
	ctx := context.Background()
	lim := Limit{Key: "k", Service: "s", Kind: "rpm", PerMinute: 60, Burst: 20}
	r, l, clock := pinned(t, lim, time.Second, 10, 10)
	for range 3 {
		if ok, _, err := l.Take(ctx, 1, 0); err != nil || !ok {
			t.Fatal(ok, err)
		}
	}
	if r.RoundTrips() != 1 {
		t.Fatalf("%d round trips for 3 takes from one slice, want 1", r.RoundTrips())
	}
	if a, _ := r.Available(ctx, lim); a != 10 {
		t.Fatalf("bucket holds %v with a slice of 10 out, want 10", a)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if a, _ := r.Available(ctx, lim); a != 17 {
		t.Fatalf("bucket holds %v after returning 7 of 10, want 17", a)
	}
	// Expiry: a take after the TTL returns the old slice's rest first.
	if ok, _, _ := l.Take(ctx, 1, 0); !ok {
		t.Fatal("take refused")
	}
	*clock = clock.Add(2 * time.Second) // the bucket refills 2 units
	if ok, _, _ := l.Take(ctx, 1, 0); !ok {
		t.Fatal("take refused")
	}
	if st := l.Stats(); st.Returned != 7+9 || st.Refills != 3 {
		t.Fatalf("stats %+v, want 16 units returned over 3 refills", st)
	}
}

// TestLeaseAdaptsToRate drives a lease at 200 units/s of virtual time and
// checks that the slice grows to about rate × TTL.
func TestLeaseAdaptsToRate(t *testing.T) {
	ctx := context.Background()
	lim := Limit{Key: "k", Service: "s", Kind: "rpm", PerMinute: 60_000, Burst: 1000}
	_, l, clock := pinned(t, lim, 500*time.Millisecond, 1, 1000)
	for range 2000 {
		if ok, _, err := l.Take(ctx, 1, 0); err != nil || !ok {
			t.Fatal(ok, err)
		}
		*clock = clock.Add(5 * time.Millisecond)
	}
	if st := l.Stats(); st.Size < 90 || st.Size > 110 || st.Local < 1900 {
		t.Fatalf("stats %+v: want slices of about 200/s × 0.5 s = 100 and nearly all takes local", st)
	}
}

// TestLeasesShareTheLimit runs four processes' leases on one bucket in
// virtual time, with demand well above the limit, and checks that the units
// they hand out never exceed burst + rate × elapsed at any step, and that
// at least 95% of the limit is used.
func TestLeasesShareTheLimit(t *testing.T) {
	ctx := context.Background()
	lim := Limit{Key: "k", Service: "s", Kind: "rpm", PerMinute: 6000, Burst: 20} // 100/s
	clock := time.Unix(1_800_000_000, 0)
	start := clock
	now := func() time.Time { return clock }
	c := testClient(t)
	var leases []*Lease
	for range 4 {
		leases = append(leases, &Lease{Backend: &Redis{Client: c, Now: now}, Limit: lim, TTL: 200 * time.Millisecond, Max: 10, Now: now})
	}
	granted := 0.0
	for step := range 2000 {
		clock = clock.Add(time.Millisecond)
		l := leases[step%len(leases)]
		ok, _, err := l.Take(ctx, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			granted++
		}
		if bound := lim.Burst + clock.Sub(start).Seconds()*lim.PerMinute/60; granted > bound {
			t.Fatalf("step %d: %v units handed out, bound %v", step, granted, bound)
		}
	}
	for _, l := range leases {
		if err := l.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if want := 0.95 * 2 * lim.PerMinute / 60; granted < want {
		t.Fatalf("%v units handed out in 2 s, want at least %v (95%% of the limit)", granted, want)
	}
	t.Logf("%v units handed out in 2 s at a limit of 100/s + burst 20", granted)
}
