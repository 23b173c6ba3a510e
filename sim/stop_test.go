package sim

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/simbench/simbench/scenarios"
)

// Options.StopWhen ends a run where it says, marks the result, and the
// cache keeps a run that may stop apart from the whole one: a whole run
// after a stopped one is simulated to its end, and the stopped one is read
// back as it was.
func TestStopWhenEndsTheRunAndIsCachedApart(t *testing.T) {
	sc, err := scenarios.Builtin("tier3")
	if err != nil {
		t.Fatal(err)
	}
	stop := func(_ string, w Watch) bool { return w.Turns >= 100 }
	opts := Options{Strategies: []string{"unbounded"}, Duration: 30 * time.Second, Parallel: 1}
	whole, err := Run(context.Background(), sc, opts)
	if err != nil {
		t.Fatal(err)
	}
	cache := NewCache(t.TempDir(), "test", func(string) {})
	so := opts
	so.StopWhen, so.StopKey, so.Cache = stop, "turns ≥ 100", cache
	stopped, err := Run(context.Background(), sc, so)
	if err != nil {
		t.Fatal(err)
	}
	s, w := stopped.Strategies[0], whole.Strategies[0]
	// Asked every 1,024 events, the run stops at the first question after
	// its 100th turn, well before 30 s, which ends thousands.
	if s.StoppedAtS <= 0 || s.StoppedAtS >= 30 || s.Turns < 100 || s.Turns >= w.Turns || w.StoppedAtS != 0 {
		t.Fatalf("stopped at %v s with %d turns; the whole run stopped at %v s with %d", s.StoppedAtS, s.Turns, w.StoppedAtS, w.Turns)
	}
	wo := opts
	wo.Cache = cache
	again, err := Run(context.Background(), sc, wo)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again.Strategies[0], w) {
		t.Error("a whole run with the cache differs from one without: the cache served the stopped run")
	}
	so.StopWhen = func(string, Watch) bool { t.Error("a cached run was simulated"); return true }
	read, err := Run(context.Background(), sc, so)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(read.Strategies[0], s) {
		t.Error("the stopped run read from the cache differs from the one simulated")
	}
}
