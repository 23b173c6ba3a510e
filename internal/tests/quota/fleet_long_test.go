//go:build long

package quota_test

import (
	"encoding/json"
	"fmt"
	. "github.com/simbench/simbench/sched/quota"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// startWorker re-executes the test binary as a fleet member.
func startWorker(t *testing.T, j job) (*exec.Cmd, *strings.Builder) {
	t.Helper()
	b, err := json.Marshal(j)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), workerEnv+"="+string(b))
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &out
}

// api is a fake service that answers every request after 2 ms, with no
// limit of its own: the fleet's quota is the only thing that paces it, and
// its own counts are the judge. (sched's tests do not import fakeapi.)
type api struct {
	srv                 *httptest.Server
	accepted, completed atomic.Int64
}

// apiStats is a snapshot of api's counts.
type apiStats struct{ Accepted, Completed int64 }

func (a *api) URL(string) string { return a.srv.URL }

func (a *api) Stats() apiStats {
	return apiStats{Accepted: a.accepted.Load(), Completed: a.completed.Load()}
}

func apiServer(t *testing.T) *api {
	t.Helper()
	a := &api{}
	a.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.accepted.Add(1)
		select {
		case <-time.After(2 * time.Millisecond):
			a.completed.Add(1)
			w.WriteHeader(http.StatusOK)
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(a.srv.Close)
	return a
}

// TestLongFleetSharesOneLimit runs 8 Runners in this process and 2 more in
// re-executed copies of the test binary, each with the full limit as its
// own ceiling and demand well above the limit, sharing R requests/min
// through one redis-server. From the fake server's own accounting: from
// the start, the server admits at most R × elapsed + burst; over a
// steady-state window the fleet's goodput is at least 95% of R. Both fleet
// tests judge goodput over real seconds, so they run with the long checks
// (make test-long), not in the default suite.
func TestLongFleetSharesOneLimit(t *testing.T) {
	testClient(t) // flush
	srv := apiServer(t)
	const perMinute, burst, inProc, outProc = 6000.0, 20.0, 8, 2
	run := 5 * time.Second
	mk := func(name string) job {
		// A generous round-trip timeout: on a loaded machine a slow answer
		// would switch a member to its local share, which the bound below
		// does not allow for (TestFleetSurvivesRedisRestart covers that).
		return job{Name: name, Redis: shared.addr(), URL: srv.URL("api"), PerMinute: perMinute, Burst: burst, Sessions: 4, For: run, Timeout: 2 * time.Second}
	}
	t0 := time.Now()
	type worker struct {
		cmd *exec.Cmd
		out *strings.Builder
	}
	var workers []worker
	for i := range outProc {
		c, o := startWorker(t, mk(fmt.Sprint("proc-", i)))
		workers = append(workers, worker{c, o})
	}
	tallies := make([]tally, inProc)
	var wg sync.WaitGroup
	for i := range inProc {
		wg.Go(func() {
			var err error
			if tallies[i], err = member(mk(fmt.Sprint("runner-", i))); err != nil {
				t.Error(err)
			}
		})
	}
	// The steady-state window: after every member has started, before any
	// has stopped.
	time.Sleep(1500 * time.Millisecond)
	s1 := srv.Stats()
	w1 := time.Now()
	time.Sleep(2500 * time.Millisecond)
	w2 := time.Now()
	s2 := srv.Stats()
	wg.Wait()
	for _, w := range workers {
		if err := w.cmd.Wait(); err != nil {
			t.Fatalf("worker: %v", err)
		}
		var tl tally
		if err := json.Unmarshal([]byte(w.out.String()), &tl); err != nil {
			t.Fatalf("worker output %q: %v", w.out.String(), err)
		}
		tallies = append(tallies, tl)
	}
	end := srv.Stats()
	elapsed := time.Since(t0).Seconds()

	var calls, results, ok, switches int64
	for i, tl := range tallies {
		calls, results, ok = calls+tl.Calls, results+tl.Results, ok+tl.OK
		switches += int64(len(tl.Events))
		if tl.Results != tl.Calls || tl.Dups != 0 {
			t.Errorf("member %d: %d results for %d calls, %d duplicated", i, tl.Results, tl.Calls, tl.Dups)
		}
		if tl.OK == 0 {
			t.Errorf("member %d completed no call", i)
		}
	}
	if bound := perMinute/60*elapsed + burst; float64(end.Accepted) > bound {
		t.Errorf("server admitted %d in %.2f s, above R × elapsed + burst = %.0f", end.Accepted, elapsed, bound)
	}
	got := float64(s2.Completed-s1.Completed) / w2.Sub(w1).Seconds()
	if want := 0.95 * perMinute / 60; got < want {
		t.Errorf("fleet goodput %.1f/s over the steady window, want ≥ %.1f/s (95%% of the limit)", got, want)
	}
	t.Logf("%d members: %d calls, %d ok, %d failover switches; server admitted %d in %.2f s (limit %.0f/s, burst %.0f); steady goodput %.1f/s",
		len(tallies), calls, ok, switches, end.Accepted, elapsed, perMinute/60, burst, got)
}

// TestLongFleetSurvivesRedisRestart kills the fleet's redis-server in the
// middle of a run and starts it again, empty, on the same port: the run
// finishes, every call gets exactly one result, each member reports the
// switch to its local share and the recovery (Failover events), and the
// fleet's goodput after Redis returns is within 10% of before.
func TestLongFleetSurvivesRedisRestart(t *testing.T) {
	rs, err := startServer(0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { rs.stop() }()
	srv := apiServer(t)
	const perMinute, burst, members = 6000.0, 20.0, 4
	tallies := make([]tally, members)
	var recovered atomic.Int64
	var wg sync.WaitGroup
	for i := range members {
		wg.Go(func() {
			var err error
			j := job{Name: fmt.Sprint("m", i), Redis: rs.addr(), URL: srv.URL("api"), PerMinute: perMinute, Burst: burst,
				Sessions: 4, For: 11 * time.Second, Timeout: 200 * time.Millisecond, Probe: 200 * time.Millisecond,
				onSwitch: func(e Event) {
					if !e.Down {
						recovered.Add(1)
					}
				}}
			if tallies[i], err = member(j); err != nil {
				t.Error(err)
			}
		})
	}
	rate := func(from, to time.Duration) float64 {
		time.Sleep(from)
		a, t1 := srv.Stats().Completed, time.Now()
		time.Sleep(to - from)
		t2 := time.Now()
		b := srv.Stats().Completed
		return float64(b-a) / t2.Sub(t1).Seconds()
	}
	before := rate(time.Second, 3*time.Second)
	rs.stop()
	time.Sleep(2 * time.Second)
	if err := rs.proc.Restart(); err != nil {
		t.Fatal(err)
	}
	// go-redis redials a refused server about once a second: wait until
	// every member is back on Redis, then measure.
	for deadline := time.Now().Add(4 * time.Second); recovered.Load() < members && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	after := rate(300*time.Millisecond, 2300*time.Millisecond)
	wg.Wait()

	for i, tl := range tallies {
		if tl.Results != tl.Calls || tl.Dups != 0 {
			t.Errorf("member %d: %d results for %d calls, %d duplicated", i, tl.Results, tl.Calls, tl.Dups)
		}
		var down, up int
		for _, e := range tl.Events {
			if e.Down {
				down++
			} else {
				up++
			}
		}
		if down == 0 || up == 0 {
			t.Errorf("member %d reported %d switches to the fallback and %d recoveries, want both", i, down, up)
		}
	}
	if relDiff := (after - before) / before; relDiff < -0.10 || relDiff > 0.10 {
		t.Errorf("goodput %.1f/s after Redis returned, %.1f/s before: more than 10%% apart", after, before)
	}
	t.Logf("goodput before %.1f/s, after %.1f/s; events of member 0: %v", before, after, tallies[0].Events)
}
