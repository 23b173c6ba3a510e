package sched_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	. "github.com/simbench/simbench/sched"
)

// deaf is an executor that ignores its context, as a tool that never looks
// at ctx does: each attempt blocks until release is closed. entered and
// left count the attempts that began and that returned.
type deaf struct {
	release       chan struct{}
	entered, left atomic.Int64
}

func (d *deaf) exec(_ context.Context, call *Call, _ int) Outcome {
	d.entered.Add(1)
	<-d.release
	d.left.Add(1)
	return Succeeded(call.ID)
}

// deadlineCases are the three deadlines a turn can have, each 100 ms: the
// call's, the turn's and the caller's context's, with the error its
// results and Run carry.
var deadlineCases = []struct {
	name      string
	cfg       Config
	ctx       time.Duration // the caller's context's timeout (0: none)
	resultErr error
	runErr    error
}{
	{"call-timeout", Config{CallTimeout: 100 * time.Millisecond}, 0, ErrDeadline, nil},
	{"turn-timeout", Config{TurnTimeout: 100 * time.Millisecond}, 0, ErrDeadline, nil},
	{"context-deadline", Config{}, 100 * time.Millisecond, ErrCancelled, context.DeadlineExceeded},
}

// TestRunnerReturnsAtDeadlineWhileExecutorsHang runs a turn of four calls
// whose executor ignores its context, under each deadline, through Run and
// through Stream: the turn ends at its deadline, on the bubble's clock,
// with every result cancelled in flight, while every executor is still
// blocked (none has returned: their channel is closed only at cleanup).
func TestRunnerReturnsAtDeadlineWhileExecutorsHang(t *testing.T) {
	for _, tt := range deadlineCases {
		for _, stream := range []bool{false, true} {
			name := tt.name + "/run"
			if stream {
				name = tt.name + "/stream"
			}
			t.Run(name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					d := &deaf{release: make(chan struct{})}
					r, err := NewRunner(tt.cfg, d.exec)
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() {
						if d.release != nil {
							close(d.release)
						}
						r.Close()
					})
					ctx := context.Background()
					if tt.ctx > 0 {
						var cancel context.CancelFunc
						ctx, cancel = context.WithTimeout(ctx, tt.ctx)
						defer cancel()
					}
					turn := Turn{Calls: calls(4, func(int) Call { return Call{} })}
					done := make(chan []Result, 1)
					go func() {
						if !stream {
							res, err := r.Run(ctx, turn)
							if !errors.Is(err, tt.runErr) || (tt.runErr == nil && err != nil) {
								t.Errorf("Run's error %v, want %v", err, tt.runErr)
							}
							done <- res
							return
						}
						ch, err := r.Stream(ctx, turn)
						if err != nil {
							t.Error(err)
						}
						var res []Result
						for x := range ch {
							res = append(res, x)
						}
						slices.SortFunc(res, func(a, b Result) int { return a.Index - b.Index })
						done <- res
					}()
					// At the deadline on the bubble's clock, once every
					// goroutine of the bubble is blocked, the turn is over.
					time.Sleep(100 * time.Millisecond)
					synctest.Wait()
					var res []Result
					select {
					case res = <-done:
					default:
						t.Errorf("the turn has not ended at its deadline: it waits for an executor that ignores its context")
						close(d.release)
						d.release = nil
						<-done
						return
					}
					if e, l := d.entered.Load(), d.left.Load(); e != 4 || l != 0 {
						t.Errorf("%d attempts began and %d returned, want 4 begun and none returned", e, l)
					}
					if len(res) != 4 {
						t.Fatalf("%d results, want 4", len(res))
					}
					for i, x := range res {
						if x.ID != fmt.Sprint("c", i) || x.State != CancelledInFlight || !errors.Is(x.Err, tt.resultErr) {
							t.Errorf("result %d: %s state %v err %v, want cancelled in flight with %v", i, x.ID, x.State, x.Err, tt.resultErr)
						}
					}
				})
			})
		}
	}
}
