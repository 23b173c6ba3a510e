package quota_test

import (
	"context"
	"encoding/json"
	"fmt"
	. "github.com/simbench/simbench/sched/quota"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/sched/httptool"
)

// workerEnv, when set in a re-executed test binary, holds a member's job
// as JSON: the binary runs it instead of the tests (see TestMain).
const workerEnv = "SIMBENCH_QUOTA_WORKER"

// job is one fleet member's run: a Runner sharing the limit PerMinute
// (burst Burst) of service "api" through the redis-server at Redis,
// sending calls to URL from Sessions loops for For.
type job struct {
	Name      string
	Redis     string
	URL       string
	PerMinute float64
	Burst     float64
	Sessions  int
	For       time.Duration
	Timeout   time.Duration // per Redis round trip (Failover.Timeout)
	Probe     time.Duration // Failover.ProbeEvery

	onSwitch func(Event) // in-process members only: told of each switch as it happens
}

// tally is what a member saw: each call's one result, counted by class.
type tally struct {
	Calls   int64 // calls submitted
	Results int64 // results received (must equal Calls)
	OK      int64
	Limited int64 // 429s seen by the client (attempts)
	Other   int64 // calls that ended other than in success
	Dups    int64 // call ids that got more than one result
	Events  []Event
	Grants  int64 // grants the member's quota handed out
}

// member runs j until its time is up and returns its tally. The Runner's
// own bucket is the full limit (a per-process ceiling); the shared quota,
// on a Failover that falls back to a local share when Redis is gone,
// keeps the fleet within it.
func member(j job) (tally, error) {
	var t tally
	rdb := NewClient(&redis.Options{Addr: strings.TrimPrefix(j.Redis, "redis://"), DialTimeout: 100 * time.Millisecond})
	defer rdb.Close()
	var mu sync.Mutex
	fo := &Failover{Primary: &Redis{Client: rdb, Holder: j.Name, HolderTTL: 2 * time.Second}, Policy: FallbackLocal, ProbeEvery: j.Probe, Timeout: j.Timeout,
		OnSwitch: func(e Event) {
			mu.Lock()
			t.Events = append(t.Events, e)
			mu.Unlock()
			if j.onSwitch != nil {
				j.onSwitch(e)
			}
		}}
	cfg := sched.Config{MaxInFlight: 8, Services: map[string]sched.ServiceConfig{"api": {RequestsPerMinute: j.PerMinute, RequestBurst: j.Burst}}}
	q := NewShared(fo, "fleet", cfg)
	q.TTL = 250 * time.Millisecond
	transport := &http.Transport{MaxIdleConnsPerHost: 64}
	defer transport.CloseIdleConnections()
	var limited atomic.Int64
	tool := &httptool.Tool{Client: &http.Client{Transport: transport}, Build: func(ctx context.Context, _ *sched.Call, _ int) (*http.Request, error) {
		return http.NewRequestWithContext(ctx, http.MethodGet, j.URL+"/tools/x", nil)
	}}
	exec := func(ctx context.Context, c *sched.Call, n int) sched.Outcome {
		o := tool.Execute(ctx, c, n)
		if o.Class == sched.ClassRateLimited {
			limited.Add(1)
		}
		return o
	}
	r, err := sched.NewRunner(cfg, exec, sched.WithQuota(q))
	if err != nil {
		return t, err
	}
	end := time.Now().Add(j.For)
	seen := map[string]int{}
	var wg sync.WaitGroup
	for s := range j.Sessions {
		wg.Go(func() {
			for n := 0; time.Now().Before(end); n++ {
				turn := sched.Turn{Calls: make([]sched.Call, 4)}
				for i := range turn.Calls {
					turn.Calls[i] = sched.Call{ID: fmt.Sprintf("%s/%d/%d/%d", j.Name, s, n, i), Service: "api"}
				}
				res, _ := r.Run(context.Background(), turn)
				mu.Lock()
				t.Calls += int64(len(turn.Calls))
				for _, x := range res {
					t.Results++
					if seen[x.ID]++; seen[x.ID] > 1 {
						t.Dups++
					}
					if x.Class == sched.ClassSuccess {
						t.OK++
					} else {
						t.Other++
					}
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	r.Close()
	t.Limited = limited.Load()
	t.Grants = q.Stats().Grants
	return t, nil
}

// worker runs the job in the environment and prints its tally as JSON.
func worker() int {
	var j job
	if err := json.Unmarshal([]byte(os.Getenv(workerEnv)), &j); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	t, err := member(j)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := json.NewEncoder(os.Stdout).Encode(t); err != nil {
		return 1
	}
	return 0
}
