package sweepwork

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"time"

	"github.com/simbench/simbench/internal/atomicfile"
)

// Task is a run the sweep needs next.
type Task struct {
	// Name is the run's name, its file's: the same for every worker.
	Name string
	// Label says which run it is, for people ("bounded-8, seed 43").
	Label string
	// Run simulates the run and returns its file's bytes.
	Run func(ctx context.Context) ([]byte, error)
}

// Worker simulates a sweep's runs together with the other workers of the
// same Store, one run at a time. The zero value is not usable: set Store,
// Owner, Dir and Plan.
type Worker struct {
	// Store holds the sweep.
	Store *Store
	// Owner names the worker in its leases: unique among the workers.
	Owner string
	// Dir is the worker's own copy of the runs stored (Store.Mirror), one
	// file per run: Plan reads it, and Task.Run may write its run there.
	Dir string
	// Plan returns the runs the sweep needs next, given the runs in Dir
	// (none: the sweep is complete). Given the same runs, every worker's
	// Plan returns the same tasks.
	Plan func(ctx context.Context) ([]Task, error)
	// Lease is how long a claimed run stays claimed without a renewal
	// (0: DefaultLease); the worker renews its lease every third of it.
	Lease time.Duration
	// Poll is how long a worker whose every needed run is claimed by
	// others waits before it looks again (0: a tenth of Lease, at most
	// a second).
	Poll time.Duration
	// Log, when set, is told of each run simulated and each wait.
	Log func(msg string)
}

// Stats is what a worker did.
type Stats struct {
	// Simulated is the runs this worker simulated and stored.
	Simulated int
	// Stored is the runs the store held when the plan was found empty.
	Stored int
	// Plans is how many times the worker planned.
	Plans int
}

// Run plans, claims and simulates runs until the plan is empty, and then
// returns with every run the sweep needs in Dir. A task's error is
// returned, its lease released first; when ctx ends, Run returns
// ctx.Err() and releases the lease it holds.
func (w *Worker) Run(ctx context.Context) (Stats, error) {
	var st Stats
	lease := w.Lease
	if lease <= 0 {
		lease = DefaultLease
	}
	poll := w.Poll
	if poll <= 0 {
		poll = min(lease/10, time.Second)
	}
	for {
		_, stored, err := w.Store.Mirror(ctx, w.Dir)
		if err != nil {
			return st, err
		}
		tasks, err := w.Plan(ctx)
		st.Plans++
		if err != nil {
			return st, err
		}
		if len(tasks) == 0 {
			st.Stored = stored
			return st, nil
		}
		waited := false
		for {
			progressed, err := w.pass(ctx, tasks, lease, &st, stored)
			if err != nil || progressed {
				if err != nil {
					return st, err
				}
				break
			}
			if !waited {
				w.log(fmt.Sprintf("waiting: every run needed next (%d) is claimed by another worker", len(tasks)))
				waited = true
			}
			select {
			case <-ctx.Done():
				return st, ctx.Err()
			case <-time.After(poll):
			}
		}
	}
}

// pass tries each task once, from a place of the worker's own so that
// workers start on different runs, and simulates those it claims. It
// says whether any task was done, by this worker or by another.
func (w *Worker) pass(ctx context.Context, tasks []Task, lease time.Duration, st *Stats, stored int) (progressed bool, err error) {
	h := fnv.New32a()
	h.Write([]byte(w.Owner))
	start := int(h.Sum32() % uint32(len(tasks)))
	for i := range tasks {
		t := tasks[(start+i)%len(tasks)]
		if _, err := os.Stat(filepath.Join(w.Dir, t.Name)); err == nil {
			progressed = true // simulated here in this pass
			continue
		}
		ok, err := w.Store.Claim(ctx, t.Name, w.Owner, lease)
		if err != nil {
			return progressed, err
		}
		if !ok {
			continue
		}
		// Stored by another worker since this one planned?
		if has, err := w.Store.Has(ctx, t.Name); err != nil || has {
			w.release(t.Name)
			if err != nil {
				return progressed, err
			}
			progressed = true
			continue
		}
		data, err := w.simulate(ctx, t, lease)
		if err == nil {
			err = w.Store.Put(ctx, t.Name, data)
		}
		if _, serr := os.Stat(filepath.Join(w.Dir, t.Name)); err == nil && serr != nil {
			err = atomicfile.WriteFile(filepath.Join(w.Dir, t.Name), data, 0o644)
		}
		w.release(t.Name)
		if err != nil {
			return progressed, err
		}
		st.Simulated++
		progressed = true
		w.log(fmt.Sprintf("simulated %s: %d by this worker; at its last plan %d runs were stored and %d needed next", t.Label, st.Simulated, stored, len(tasks)))
	}
	return progressed, nil
}

// simulate runs t while renewing the worker's lease on it.
func (w *Worker) simulate(ctx context.Context, t Task, lease time.Duration) ([]byte, error) {
	rctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(lease / 3)
		defer tick.Stop()
		for {
			select {
			case <-rctx.Done():
				return
			case <-tick.C:
			}
			ok, err := w.Store.Renew(rctx, t.Name, w.Owner, lease)
			switch {
			case errors.Is(err, context.Canceled):
				return
			case err != nil:
				w.log(fmt.Sprintf("could not renew the lease on %s: %v", t.Label, err))
			case !ok:
				// Another worker may simulate it too: the run is
				// deterministic, and the first stored stands.
				w.log(fmt.Sprintf("the lease on %s expired before it was renewed; simulating it still", t.Label))
			}
		}
	}()
	data, err := t.Run(ctx)
	stop()
	<-done
	return data, err
}

// release gives up the lease on run name, also after ctx ended.
func (w *Worker) release(name string) {
	ctx, cancel := context.WithTimeout(context.Background(), dialTimeout)
	defer cancel()
	_ = w.Store.Release(ctx, name, w.Owner) // left alone, it expires
}

func (w *Worker) log(msg string) {
	if w.Log != nil {
		w.Log(msg)
	}
}
