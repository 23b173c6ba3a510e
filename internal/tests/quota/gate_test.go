package quota_test

import (
	"context"
	"fmt"
	. "github.com/simbench/simbench/sched/quota"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/simbench/simbench/sched"
)

// TestGateSharesOneLimitAmongRunners runs three sched.Runners, each
// configured with the full limit as its own ceiling and each with its own
// Redis connection and lease, and checks that attempts started by all of
// them together stay within the shared limit over every window, and that
// every call gets exactly one successful result.
func TestGateSharesOneLimitAmongRunners(t *testing.T) {
	testClient(t) // flush
	const procs, calls = 3, 20
	lim := Limit{Key: "k", Service: "api", Kind: "rpm", PerMinute: 2400, Burst: 5} // 40/s
	ttl := 200 * time.Millisecond
	var mu sync.Mutex
	var starts []time.Time
	exec := func(ctx context.Context, call *sched.Call, attempt int) sched.Outcome {
		mu.Lock()
		starts = append(starts, time.Now())
		mu.Unlock()
		return sched.Succeeded(call.ID)
	}
	var wg sync.WaitGroup
	for p := range procs {
		wg.Go(func() {
			c := shared.client()
			defer c.Close()
			lease := &Lease{Backend: &Redis{Client: c, Holder: fmt.Sprint("p", p)}, Limit: lim, TTL: ttl, Max: 4}
			defer lease.Close(context.Background())
			g := &Gate{Requests: map[string]*Lease{"api": lease}}
			r, err := sched.NewRunner(sched.Config{MaxInFlight: 16,
				Services: map[string]sched.ServiceConfig{"api": {RequestsPerMinute: lim.PerMinute, RequestBurst: lim.Burst}}}, g.Wrap(exec))
			if err != nil {
				t.Error(err)
				return
			}
			defer r.Close()
			var turn sched.Turn
			for i := range calls {
				turn.Calls = append(turn.Calls, sched.Call{ID: fmt.Sprint(p, "-", i), Service: "api"})
			}
			res, err := r.Run(context.Background(), turn)
			if err != nil {
				t.Error(err)
				return
			}
			for _, x := range res {
				if x.Class != sched.ClassSuccess || x.Attempts != 1 {
					t.Errorf("call %s: %v after %d attempts", x.ID, x.Class, x.Attempts)
				}
			}
		})
	}
	wg.Wait()
	if len(starts) != procs*calls {
		t.Fatalf("%d attempts started, want %d", len(starts), procs*calls)
	}
	slices.SortFunc(starts, func(a, b time.Time) int { return a.Compare(b) })
	rate := lim.PerMinute / 60
	for i := range starts {
		for j := i; j < len(starts); j++ {
			// A slice reserved up to ttl before the window may be spent in it.
			w := starts[j].Sub(starts[i]) + ttl
			if got, bound := float64(j-i+1), lim.Burst+rate*w.Seconds()+1; got > bound {
				t.Fatalf("%v attempts started within %v, bound %.2f", got, starts[j].Sub(starts[i]), bound)
			}
		}
	}
}

// TestGateSettlesTokens checks that the gate takes a call's estimated
// tokens before the attempt and settles them against the reported usage:
// the shared bucket ends up charged with exactly the tokens used.
func TestGateSettlesTokens(t *testing.T) {
	tests := []struct{ estimate, used int64 }{
		{100, 60},  // fewer: the rest goes back to the slice
		{100, 150}, // more: the excess is charged
		{100, 100},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.estimate, "→", tt.used), func(t *testing.T) {
			lim := Limit{Key: "k", Service: "api", Kind: "tpm", PerMinute: 60_000, Burst: 10_000}
			r, lease, _ := pinned(t, lim, time.Minute, 120, 120)
			g := &Gate{Tokens: map[string]*Lease{"api": lease}}
			run, err := sched.NewRunner(sched.Config{MaxInFlight: 1, Services: map[string]sched.ServiceConfig{"api": {}}}, g.Wrap(func(context.Context, *sched.Call, int) sched.Outcome {
				return sched.Outcome{Class: sched.ClassSuccess, Tokens: tt.used, HasUsage: true}
			}))
			if err != nil {
				t.Fatal(err)
			}
			_, err = run.Run(context.Background(), sched.Turn{Calls: []sched.Call{{ID: "a", Service: "api", Tokens: tt.estimate}}})
			run.Close()
			if err != nil {
				t.Fatal(err)
			}
			if err := lease.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			if a, _ := r.Available(context.Background(), lim); a != lim.Burst-float64(tt.used) {
				t.Fatalf("bucket holds %v, want %v − %v used", a, lim.Burst, tt.used)
			}
		})
	}
}
