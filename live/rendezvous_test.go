package live

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/simbench/simbench/internal/redistest"
)

// meetAll runs every member's meet at strategy st's rendezvous at once and
// returns their starts and errors in member order.
func meetAll(members ...*memberSetup) ([]time.Time, []error) {
	starts, errs := make([]time.Time, len(members)), make([]error, len(members))
	var wg sync.WaitGroup
	for i, m := range members {
		wg.Go(func() { starts[i], errs[i] = m.meet(context.Background(), "s") })
	}
	wg.Wait()
	return starts, errs
}

// A member that gives up waiting leaves no arrival behind: the same fleet
// started again with the same run id meets whole, instead of the first to come back meeting the one that gave up
// and starting alone while the other waits for a round of its own.
func TestRendezvousAfterGiveUp(t *testing.T) {
	rs := redistest.Start(t)
	rdb := redistest.Client(t, rs.URL())
	const runID = "give-up-test"
	gaveUp := &memberSetup{index: 0, n: 2, runID: runID, rdb: rdb, wait: 50 * time.Millisecond}
	if _, err := gaveUp.meet(context.Background(), "s"); !errors.Is(err, errRendezvous) || !strings.Contains(err.Error(), "missing 1") {
		t.Fatalf("a member alone: %v, want it to give up naming member 1 as missing", err)
	}
	// The wait bounds how long the test takes when the rendezvous is wrong;
	// right, both meet as soon as the second arrives.
	starts, errs := meetAll(
		&memberSetup{index: 0, n: 2, runID: runID, rdb: rdb, wait: 10 * time.Second},
		&memberSetup{index: 1, n: 2, runID: runID, rdb: rdb, wait: 10 * time.Second},
	)
	if errs[0] != nil || errs[1] != nil {
		t.Errorf("the fleet again: starts %v, errors %v; want both members to meet", starts, errs)
	}
}

// Two members given the same index do not meet as a fleet: the second is
// refused, naming the index, while the first holds its place and meets the
// real other member.
func TestRendezvousRefusesDuplicateIndex(t *testing.T) {
	rs := redistest.Start(t)
	rdb := redistest.Client(t, rs.URL())
	const runID = "duplicate-test"
	first := &memberSetup{index: 0, n: 2, runID: runID, rdb: rdb, wait: time.Minute}
	type met struct {
		start time.Time
		err   error
	}
	firstMet := make(chan met, 1)
	go func() {
		s, err := first.meet(context.Background(), "s")
		firstMet <- met{s, err}
	}()
	waitKeys(t, rdb, "simbench/fleet/"+runID+"/s/*")
	dup := &memberSetup{index: 0, n: 2, runID: runID, rdb: rdb, wait: time.Minute}
	_, err := dup.meet(context.Background(), "s")
	if err == nil || !strings.Contains(err.Error(), "--member 0/2") || !strings.Contains(err.Error(), "already waiting") {
		t.Fatalf("a second member 0 of 2: %v, want it refused naming --member 0/2", err)
	}
	select {
	case m := <-firstMet:
		t.Fatalf("the first member 0 left the rendezvous with the duplicate's refusal: %v, %v", m.start, m.err)
	default:
	}
	other := &memberSetup{index: 1, n: 2, runID: runID, rdb: rdb, wait: time.Minute}
	start, err := other.meet(context.Background(), "s")
	m := <-firstMet
	if err != nil || m.err != nil {
		t.Errorf("member 1 met at %v (%v), member 0 at %v (%v): want them to meet", start, err, m.start, m.err)
	}
}

// waitKeys waits until some key matching pattern exists on rdb's server.
func waitKeys(t *testing.T, rdb *redis.Client, pattern string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for ctx.Err() == nil {
		if keys, _ := rdb.Keys(ctx, pattern).Result(); len(keys) > 0 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no key %s appeared", pattern)
}

// A member that met at an earlier rendezvous and has died (its liveness
// key gone) is not waited for at the next: the others start without it.
// One still alive, or one that never met, is waited for.
func TestRendezvousSkipsDeadMember(t *testing.T) {
	rs := redistest.Start(t)
	rdb := redistest.Client(t, rs.URL())
	const runID = "dead-test"
	// Both meet at the first strategy, keeping alive while they run.
	a := &memberSetup{index: 0, n: 2, runID: runID, rdb: rdb, wait: 10 * time.Second, ttl: time.Second}
	b := &memberSetup{index: 1, n: 2, runID: runID, rdb: rdb, wait: 10 * time.Second, ttl: time.Second}
	stopA, stopB := a.keepAlive(), b.keepAlive()
	defer stopA()
	if _, errs := meetAll(a, b); errs[0] != nil || errs[1] != nil {
		t.Fatalf("the first rendezvous: %v", errs)
	}
	// Member 1 alive: member 0 waits for it, and gives up.
	a.wait = 100 * time.Millisecond
	if _, err := a.meet(context.Background(), "second"); !errors.Is(err, errRendezvous) {
		t.Fatalf("member 1 alive and away: %v, want member 0 to wait for it", err)
	}
	// Member 1 dies (its key gone, as when it stops refreshing): member 0
	// starts alone.
	stopB()
	a.wait = 10 * time.Second
	if _, err := a.meet(context.Background(), "second"); err != nil {
		t.Fatalf("member 1 dead: %v, want member 0 to start without it", err)
	}
	// Another run whose member 1 never met is waited for.
	c := &memberSetup{index: 0, n: 2, runID: "never-met-test", rdb: rdb, wait: 100 * time.Millisecond}
	if _, err := c.meet(context.Background(), "s"); !errors.Is(err, errRendezvous) {
		t.Fatalf("member 1 never met: %v, want member 0 to wait for it", err)
	}
}
