package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/simbench/simbench/internal/redistest"
	"github.com/simbench/simbench/internal/sweepwork"
)

// workSweep is the tier3 decision sweep at duration d that the work tests
// run, writing to out.
func workSweep(d time.Duration, out string) *SweepCmd {
	return &SweepCmd{Scenario: "tier3", Duration: positiveDuration(d), Seeds: 2, MaxShare: 0.001, Tolerance: 0.05,
		Out: out, Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}, cacheFlags: cacheFlags{NoCache: true}}
}

// wholeSweep runs c's sweep in one piece, the oracle of the work tests,
// and returns its sweep.json.
func wholeSweep(t *testing.T, c *SweepCmd) []byte {
	t.Helper()
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(c.Out, "sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// storeOf opens the store the workers of c's sweep at url share, as this
// build.
func storeOf(t *testing.T, c *SweepCmd, url string) *sweepwork.Store {
	t.Helper()
	sc, err := openScenario(c.Scenario)
	if err != nil {
		t.Fatal(err)
	}
	o, err := c.options()
	if err != nil {
		t.Fatal(err)
	}
	v, err := cacheVersion()
	if err != nil {
		t.Fatal(err)
	}
	s, err := sweepwork.Open(t.Context(), url, sweepID(sc, o), v)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// Four workers of a tier3 sweep on one Redis write the sweep.json of the
// sweep in one piece, byte for byte, and so does --merge from the store;
// a run of the first plan, claimed by a worker that died holding it, is
// taken by another once its lease expires.
func TestSweepWork(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	const d = 2 * time.Second
	whole := wholeSweep(t, workSweep(d, t.TempDir()))

	plan := workSweep(d, t.TempDir())
	plan.Plan = true
	if err := plan.Run(); err != nil {
		t.Fatal(err)
	}
	var p sweepPlan
	if data, err := os.ReadFile(filepath.Join(plan.Out, PlanFile)); err != nil || json.Unmarshal(data, &p) != nil || len(p.Points) == 0 {
		t.Fatalf("the first plan: %v, %d points", err, len(p.Points))
	}
	dead := storeOf(t, workSweep(d, ""), rs.URL())
	if ok, err := dead.Claim(t.Context(), p.Points[0].File(), "dead-worker", 500*time.Millisecond); !ok || err != nil {
		t.Fatalf("claim: %v, %v", ok, err)
	}

	const workers = 4
	cmds := make([]*SweepCmd, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for i := range workers {
		cmds[i] = workSweep(d, t.TempDir())
		cmds[i].Work, cmds[i].Lease = rs.URL(), 5*time.Second
		wg.Go(func() { errs[i] = cmds[i].Run() })
	}
	wg.Wait()
	simulated := 0
	for i, c := range cmds {
		stderr := c.Stderr.(*bytes.Buffer).String()
		if errs[i] != nil {
			t.Fatalf("worker %d: %v\n%s", i, errs[i], stderr)
		}
		got, err := os.ReadFile(filepath.Join(c.Out, "sweep.json"))
		if err != nil || !bytes.Equal(got, whole) {
			t.Errorf("worker %d: its sweep.json (%v) differs from the sweep's in one piece\n%s", i, err, stderr)
		}
		simulated += strings.Count(stderr, "simbench: simulated ")
		if !strings.Contains(stderr, "the sweep is complete") {
			t.Errorf("worker %d did not say the sweep is complete:\n%s", i, stderr)
		}
	}
	names, err := dead.Names(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if simulated != len(names) {
		t.Errorf("the workers simulated %d runs between them, and %d are stored: want each once", simulated, len(names))
	}
	if h, err := dead.Holder(t.Context(), p.Points[0].File()); h != "" || err != nil {
		t.Errorf("the dead worker's run is still held by %q (%v)", h, err)
	}

	merge := workSweep(d, t.TempDir())
	merge.Merge, merge.Dirs = true, []string{rs.URL()}
	if got := wholeSweep(t, merge); !bytes.Equal(got, whole) {
		t.Errorf("--merge %s: its sweep.json differs from the sweep's in one piece", rs.URL())
	}
}

// A worker refuses at once a URL that is not Redis's, a sweep in the store
// that another build began, and flags of the shards beside --work; a
// merge of a store that lacks runs names them and says what to run.
func TestSweepWorkRefuses(t *testing.T) {
	rs := redistest.Start(t)
	const d = 2 * time.Second
	run := func(edit func(c *SweepCmd)) (string, error) {
		c := workSweep(d, t.TempDir())
		c.Work = rs.URL()
		edit(c)
		err := c.Run()
		return c.Stderr.(*bytes.Buffer).String(), err
	}
	tests := []struct {
		name string
		edit func(c *SweepCmd)
		want string
		code int
	}{
		{"not Redis", func(c *SweepCmd) { c.Work = "http://127.0.0.1:6379" }, "want redis://HOST:PORT[/DB]", exitInvalid},
		{"with --plan", func(c *SweepCmd) { c.Plan = true }, "--work is a worker on its own", exitInvalid},
		{"with folders", func(c *SweepCmd) { c.Dirs = []string{t.TempDir()} }, "--work is a worker on its own", exitInvalid},
		{"negative lease", func(c *SweepCmd) { c.Lease = -time.Second }, "--lease -1s", exitInvalid},
		{"short lease", func(c *SweepCmd) { c.Lease = time.Millisecond }, "give at least 30ms", exitInvalid},
		{"URL to --shard", func(c *SweepCmd) { c.Work, c.Shard, c.Dirs = "", memberFlag{0, 2}, []string{rs.URL()} }, "not given to --plan or --shard", exitInvalid},
		{"merge without runs", func(c *SweepCmd) { c.Work, c.Merge, c.Dirs = "", true, []string{rs.URL()} }, "the shards hold no run", -1}, // a plain error: exit 1
	}
	for _, tt := range tests {
		stderr, err := run(tt.edit)
		if err == nil || !strings.Contains(err.Error(), tt.want) || codeOf(err) != tt.code {
			t.Errorf("%s: %v (exit %d), want exit %d and %q\n%s", tt.name, err, codeOf(err), tt.code, tt.want, stderr)
		}
	}
	_, err := run(func(c *SweepCmd) { c.Work, c.Merge, c.Dirs = "", true, []string{rs.URL()} })
	if err == nil || !strings.Contains(err.Error(), "--work "+rs.URL()) {
		t.Errorf("merge without runs: %v, want it to say to run workers", err)
	}

	// The sweep begun by another build: its version key says so.
	s := storeOf(t, workSweep(d, ""), rs.URL())
	key := sweepwork.KeyPrefix + s.ID() + ":version"
	c := redistest.Client(t, rs.URL())
	if err := c.Set(t.Context(), key, "0.9.0", 0).Err(); err != nil {
		t.Fatal(err)
	}
	stderr, err := run(func(*SweepCmd) {})
	if err == nil || codeOf(err) != exitInvalid || !strings.Contains(err.Error(), "belongs to simbench 0.9.0") || strings.Contains(stderr, "simulated") {
		t.Errorf("a sweep of another build: %v (exit %d), want it refused at once, exit %d\n%s", err, codeOf(err), exitInvalid, stderr)
	}
}
