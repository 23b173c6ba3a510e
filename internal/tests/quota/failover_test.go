package quota_test

import (
	"context"
	"errors"
	. "github.com/simbench/simbench/sched/quota"
	"sync"
	"testing"
	"time"
)

// eventLog records Failover's switch events.
type eventLog struct {
	mu sync.Mutex
	ev []Event
}

func (l *eventLog) add(e Event) { l.mu.Lock(); l.ev = append(l.ev, e); l.mu.Unlock() }
func (l *eventLog) all() []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slicesClone(l.ev)
}

func slicesClone[T any](s []T) []T { return append([]T(nil), s...) }

// TestFailoverFallbackAndRecovery kills the redis-server under a Failover
// with FallbackLocal, checks that reservations switch to a local bucket at
// limit ÷ N (N learned from the holders registered on the bucket), that the
// switch is reported once, and that the backend recovers when the server
// returns on the same port. Every reservation is granted by one bucket only.
func TestFailoverFallbackAndRecovery(t *testing.T) {
	srv, err := startServer(0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { srv.stop() }()
	ctx := context.Background()
	lim := Limit{Key: "k", Service: "s", Kind: "rpm", PerMinute: 600, Burst: 30}
	for _, id := range []string{"p2", "p3"} { // two other processes hold the key
		c := srv.client()
		if _, err := (&Redis{Client: c, Holder: id}).Reserve(ctx, lim, 1, 0); err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	c := srv.client()
	defer c.Close()
	var log eventLog
	var mu sync.Mutex
	clock := time.Unix(1_800_000_000, 0) // the fallback's clock, advanced by hand
	f := &Failover{Primary: &Redis{Client: c, Holder: "p1"}, Timeout: 300 * time.Millisecond,
		ProbeEvery: 20 * time.Millisecond, OnSwitch: log.add,
		Now: func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }}
	granted := 0
	reserve := func() Reservation {
		t.Helper()
		r, err := f.Reserve(ctx, lim, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		if r.OK {
			granted++
		}
		return r
	}
	first := reserve()
	if !first.OK || first.Mark.Local() || first.Holders != 3 {
		t.Fatalf("before the kill: %+v, want a Redis grant seeing 3 holders", first)
	}
	srv.stop()
	r := reserve()
	if !r.OK || !r.Mark.Local() {
		t.Fatalf("after the kill: %+v, want a local grant", r)
	}
	if ev := log.all(); len(ev) != 1 || !ev[0].Down || ev[0].Err == nil || ev[0].Divisor != 3 {
		t.Fatalf("events after the kill: %+v, want one Down event with divisor 3", ev)
	}
	if a, _ := f.Available(ctx, lim); a != lim.Burst/3-1 {
		t.Fatalf("fallback bucket holds %v, want burst/3 − 1 = %v", a, lim.Burst/3-1)
	}
	// A refund of the Redis reservation while Redis is down is forfeited.
	if err := f.Refund(ctx, lim, 1, first.Mark); err != nil {
		t.Fatal(err)
	}
	if err := f.Settle(ctx, lim, 1, 1, r.Mark); err != nil {
		t.Fatal(err)
	}

	if srv, err = startServer(srv.port); err != nil {
		t.Fatal(err)
	}
	for f.Down() {
		time.Sleep(10 * time.Millisecond)
		mu.Lock()
		clock = clock.Add(10 * time.Millisecond)
		mu.Unlock()
		reserve()
	}
	ev := log.all()
	if len(ev) != 2 || ev[1].Down {
		t.Fatalf("events after the restart: %+v, want Down then recovered", ev)
	}
	if r := reserve(); !r.OK || r.Mark.Local() {
		t.Fatalf("after recovery: %+v, want a Redis grant", r)
	}
	st := f.Stats()
	if st.Switches != 1 || st.Recoveries != 1 || st.Forfeited != 1 || st.PrimaryErrors < 1 {
		t.Fatalf("stats %+v", st)
	}
	if got := st.PrimaryGrants + st.FallbackGrants; got != int64(granted) {
		t.Fatalf("%d grants counted by source, %d returned: a reservation was lost or doubled", got, granted)
	}
}

// TestFailoverFailClosed checks that FailClosed refuses reservations with
// ErrUnavailable while the server is gone, and grants none.
func TestFailoverFailClosed(t *testing.T) {
	srv, err := startServer(0)
	if err != nil {
		t.Fatal(err)
	}
	c := srv.client()
	defer c.Close()
	var log eventLog
	f := &Failover{Primary: NewRedis(c), Policy: FailClosed, OnSwitch: log.add}
	lim := Limit{Key: "k", Service: "s", Kind: "rpm", PerMinute: 600, Burst: 30}
	if r, err := f.Reserve(context.Background(), lim, 1, 0); err != nil || !r.OK {
		t.Fatalf("before the kill: %+v, %v", r, err)
	}
	srv.stop()
	for range 3 {
		r, err := f.Reserve(context.Background(), lim, 1, 0)
		if !errors.Is(err, ErrUnavailable) || r.OK {
			t.Fatalf("after the kill: %+v, %v; want ErrUnavailable", r, err)
		}
	}
	if st := f.Stats(); st.Refused != 3 || st.FallbackGrants != 0 || st.Switches != 1 {
		t.Fatalf("stats %+v", st)
	}
	if ev := log.all(); len(ev) != 1 || !ev[0].Down {
		t.Fatalf("events %+v", ev)
	}
}

// TestFailoverConcurrentKill has several goroutines reserve through one
// Failover while the server is killed under them: every reservation gets
// exactly one answer, counted once by the bucket that granted it.
func TestFailoverConcurrentKill(t *testing.T) {
	srv, err := startServer(0)
	if err != nil {
		t.Fatal(err)
	}
	c := srv.client()
	defer c.Close()
	f := &Failover{Primary: NewRedis(c), Processes: 2, Timeout: 100 * time.Millisecond}
	lim := Limit{Key: "k", Service: "s", Kind: "rpm", PerMinute: 6e6, Burst: 1e6}
	var warm, calls sync.WaitGroup // warm: every goroutine made 50 reservations
	var mu sync.Mutex
	ok := int64(0)
	for range 4 {
		warm.Add(1)
		calls.Go(func() {
			for i := range 200 {
				if i == 50 {
					warm.Done()
				}
				r, err := f.Reserve(context.Background(), lim, 1, 0)
				if err != nil {
					t.Error(err)
					return
				}
				if r.OK {
					mu.Lock()
					ok++
					mu.Unlock()
				}
			}
		})
	}
	warm.Wait()
	srv.stop()
	calls.Wait()
	st := f.Stats()
	if st.PrimaryGrants+st.FallbackGrants != ok || ok != 800 {
		t.Fatalf("%d granted, stats %+v: want 800 = primary + fallback", ok, st)
	}
	if st.Switches != 1 || st.FallbackGrants == 0 {
		t.Fatalf("stats %+v: want one switch and fallback grants", st)
	}
}
