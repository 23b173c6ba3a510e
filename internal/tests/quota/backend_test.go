package quota_test

import (
	"context"
	. "github.com/simbench/simbench/sched/quota"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestRedisMatchesMemory drives Memory and Redis through the same random
// sequence of reservations (with and without debt), settlements and refunds
// at the same pinned times, and requires identical answers and buckets.
func TestRedisMatchesMemory(t *testing.T) {
	ctx := context.Background()
	clock := time.Unix(1_800_000_000, 0)
	now := func() time.Time { return clock }
	mem := NewMemory(now)
	red := &Redis{Client: testClient(t), Now: now}
	lims := []Limit{
		{Key: "k", Service: "s", Kind: "rpm", PerMinute: 60, Burst: 5},
		{Key: "k", Service: "s", Kind: "tpm", PerMinute: 90_000, Burst: 30_000},
	}
	type held struct {
		lim      Limit
		n        float64
		mem, red Mark
	}
	var open []held
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		clock = clock.Add(time.Duration(rng.IntN(400_000)) * time.Microsecond)
		lim := lims[rng.IntN(len(lims))]
		n := 1.0
		if lim.Kind == "tpm" {
			n = float64(1 + rng.IntN(8000))
		}
		switch op := rng.IntN(10); {
		case op < 6 || len(open) == 0:
			maxWait := []time.Duration{0, 500 * time.Millisecond, Forever}[rng.IntN(3)]
			a, _ := mem.Reserve(ctx, lim, n, maxWait)
			b, err := red.Reserve(ctx, lim, n, maxWait)
			if err != nil {
				t.Fatal(err)
			}
			if a.OK != b.OK || a.Wait != b.Wait || a.Mark != b.Mark || !a.Now.Equal(b.Now) {
				t.Fatalf("op %d reserve %v of %s wait≤%v: memory %+v, redis %+v", i, n, lim.Kind, maxWait, a, b)
			}
			if a.OK {
				open = append(open, held{lim, n, a.Mark, b.Mark})
			}
		case op < 8:
			j := rng.IntN(len(open))
			h := open[j]
			open = slices.Delete(open, j, j+1)
			actual := h.n * rng.Float64() * 2
			_ = mem.Settle(ctx, h.lim, h.n, actual, h.mem)
			if err := red.Settle(ctx, h.lim, h.n, actual, h.red); err != nil {
				t.Fatal(err)
			}
		default:
			j := rng.IntN(len(open))
			h := open[j]
			open = slices.Delete(open, j, j+1)
			_ = mem.Refund(ctx, h.lim, h.n, h.mem)
			if err := red.Refund(ctx, h.lim, h.n, h.red); err != nil {
				t.Fatal(err)
			}
		}
		for _, l := range lims {
			a, _ := mem.Available(ctx, l)
			b, err := red.Available(ctx, l)
			if err != nil {
				t.Fatal(err)
			}
			if a != b {
				t.Fatalf("op %d: %s available: memory %v, redis %v", i, l.Kind, a, b)
			}
		}
	}
}

// TestMemoryDebtAndRefund pins the bucket semantics both backends share:
// a full burst, then debt with the wait it implies, then a refund.
func TestMemoryDebtAndRefund(t *testing.T) {
	ctx := context.Background()
	clock := time.Unix(1_000_000, 0)
	m := NewMemory(func() time.Time { return clock })
	lim := Limit{Key: "k", Service: "s", Kind: "rpm", PerMinute: 60, Burst: 2}
	tests := []struct {
		maxWait  time.Duration
		wantOK   bool
		wantWait time.Duration
	}{
		{0, true, 0},                     // burst unit 1
		{0, true, 0},                     // burst unit 2
		{0, false, time.Second},          // empty: the next unit is 1 s away
		{Forever, true, time.Second},     // into debt
		{Forever, true, 2 * time.Second}, // deeper
	}
	var last Mark
	for i, tt := range tests {
		r, _ := m.Reserve(ctx, lim, 1, tt.maxWait)
		if r.OK != tt.wantOK || r.Wait != tt.wantWait {
			t.Fatalf("reserve %d: got ok=%v wait=%v, want ok=%v wait=%v", i, r.OK, r.Wait, tt.wantOK, tt.wantWait)
		}
		if r.OK {
			last = r.Mark
		}
	}
	if a, _ := m.Available(ctx, lim); a != -2 { // 4 taken of a burst of 2
		t.Fatalf("available after debt = %v, want -2", a)
	}
	_ = m.Refund(ctx, lim, 1, last)
	if a, _ := m.Available(ctx, lim); a != -1 {
		t.Fatalf("available after refunding the last reservation = %v, want -1", a)
	}
}

// TestSharedLimitNeverExceeded runs processes (goroutines, each with its own
// connection pool) that reserve as fast as they can from one bucket without
// waiting, and checks on the server's clock that no window of any length
// saw more grants than burst + rate × window.
func TestSharedLimitNeverExceeded(t *testing.T) {
	testClient(t) // flush
	const procs = 6
	lim := Limit{Key: "k", Service: "s", Kind: "rpm", PerMinute: 1200, Burst: 4} // 20/s
	deadline := time.Now().Add(1500 * time.Millisecond)
	var mu sync.Mutex
	var grants []time.Time
	var wg sync.WaitGroup
	for p := range procs {
		wg.Go(func() {
			c := shared.client()
			defer c.Close()
			r := &Redis{Client: c, Holder: string(rune('a' + p))}
			for time.Now().Before(deadline) {
				res, err := r.Reserve(context.Background(), lim, 1, 0)
				if err != nil {
					t.Error(err)
					return
				}
				if res.OK {
					mu.Lock()
					grants = append(grants, res.Now)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	slices.SortFunc(grants, func(a, b time.Time) int { return a.Compare(b) })
	rate := lim.PerMinute / 60
	for i := range grants {
		for j := i; j < len(grants); j++ {
			w := grants[j].Sub(grants[i]).Seconds()
			// +1: a unit refilled exactly at the window's end
			if got, bound := float64(j-i+1), lim.Burst+rate*w+1; got > bound {
				t.Fatalf("%v grants in %.6fs window, bound %.2f", got, w, bound)
			}
		}
	}
	if len(grants) < int(lim.Burst) {
		t.Fatalf("only %d grants", len(grants))
	}
	t.Logf("%d grants by %d processes", len(grants), procs)
}
