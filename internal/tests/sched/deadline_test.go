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
// results carry (the context's beside ErrCancelled) and Run returns.
var deadlineCases = []struct {
	name      string
	cfg       Config
	ctx       time.Duration // the caller's context's timeout (0: none)
	resultErr error
	runErr    error
}{
	{"call-timeout", Config{CallTimeout: 100 * time.Millisecond}, 0, ErrDeadline, nil},
	{"turn-timeout", Config{TurnTimeout: 100 * time.Millisecond}, 0, ErrDeadline, nil},
	{"context-deadline", Config{}, 100 * time.Millisecond, context.DeadlineExceeded, context.DeadlineExceeded},
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

// TestRunnerReturnsAtDecisionWhileExecutorsHang covers the other ways a
// call is decided while its attempt runs: an attempt timeout without a
// retry left, a hedge that answers first, and a sibling's failure in an
// all-or-nothing turn. Run returns at the decision while the executors it
// abandoned are still blocked.
func TestRunnerReturnsAtDecisionWhileExecutorsHang(t *testing.T) {
	tests := []struct {
		name  string
		cfg   Config
		turn  Turn
		at    time.Duration // when the turn is decided
		check func(res []Result) error
	}{
		{"attempt-timeout", Config{AttemptTimeout: 100 * time.Millisecond, Retry: RetryPolicy{MaxAttempts: 1}},
			Turn{Calls: []Call{{ID: "deaf"}}}, 100 * time.Millisecond,
			func(res []Result) error {
				var re *RetriesExhaustedError
				if !errors.As(res[0].Err, &re) || res[0].Attempts != 1 {
					return fmt.Errorf("result %+v, want its one attempt timed out", res[0])
				}
				return nil
			}},
		{"hedge", Config{Services: map[string]ServiceConfig{"api": {}}, Hedge: &HedgePolicy{After: 100 * time.Millisecond, Budget: 1}},
			Turn{Calls: []Call{{ID: "deaf", Service: "api", Idempotent: true}}}, 100 * time.Millisecond,
			func(res []Result) error {
				if res[0].Err != nil || res[0].Value != "hedge" {
					return fmt.Errorf("result %+v, want the hedge's answer", res[0])
				}
				return nil
			}},
		{"all-or-nothing", Config{},
			Turn{Join: JoinAllOrNothing, Calls: []Call{{ID: "deaf"}, {ID: "fails"}}}, 10 * time.Millisecond,
			func(res []Result) error {
				if res[0].State != CancelledInFlight || !errors.Is(res[0].Err, ErrCancelled) || res[1].Class != ClassPermanent {
					return fmt.Errorf("results %+v, want deaf cancelled in flight when fails failed", res)
				}
				return nil
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				d := &deaf{release: make(chan struct{})}
				exec := func(ctx context.Context, call *Call, n int) Outcome {
					if a, _ := AttemptOf(ctx); a.Hedge {
						return Succeeded("hedge")
					}
					if call.ID == "fails" {
						time.Sleep(10 * time.Millisecond)
						return Failed(ClassPermanent, errors.New("tool error"))
					}
					return d.exec(ctx, call, n)
				}
				r, err := NewRunner(tt.cfg, exec)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() {
					if d.release != nil {
						close(d.release)
					}
					r.Close()
				})
				done := make(chan []Result, 1)
				go func() {
					res, err := r.Run(context.Background(), tt.turn)
					if err != nil {
						t.Error(err)
					}
					done <- res
				}()
				time.Sleep(tt.at)
				synctest.Wait()
				select {
				case res := <-done:
					if err := tt.check(res); err != nil {
						t.Error(err)
					}
				default:
					t.Errorf("the turn has not ended at its decision: it waits for an executor that ignores its context")
					close(d.release)
					d.release = nil
					<-done
					return
				}
				if e, l := d.entered.Load(), d.left.Load(); e != 1 || l != 0 {
					t.Errorf("%d attempts began and %d returned, want 1 begun and none returned", e, l)
				}
			})
		})
	}
}
