package sweepwork_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/simbench/simbench/internal/redistest"
	"github.com/simbench/simbench/internal/sweepwork"
)

// steps is a made-up adaptive sweep: each step's runs are needed only
// once every run of the step before is held, as a sweep's next caps are
// known only from the caps measured.
var steps = [][]string{
	{"s0-a", "s0-b", "s0-c", "s0-d", "s0-e", "s0-f"},
	{"s1-a", "s1-b", "s1-c", "s1-d"},
	{"s2-a", "s2-b", "s2-c"},
}

// content is what the run named name holds.
func content(name string) []byte { return []byte("run " + name + "\n") }

// fakeSweep plans steps from the runs in dir and counts, by name, the
// runs simulated by every worker.
type fakeSweep struct {
	mu  sync.Mutex
	ran map[string]int
}

func (f *fakeSweep) plan(dir string) func(context.Context) ([]sweepwork.Task, error) {
	return func(context.Context) ([]sweepwork.Task, error) {
		for _, step := range steps {
			var tasks []sweepwork.Task
			for _, name := range step {
				if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
					continue
				}
				tasks = append(tasks, sweepwork.Task{Name: name, Label: name, Run: func(context.Context) ([]byte, error) {
					f.mu.Lock()
					f.ran[name]++
					f.mu.Unlock()
					time.Sleep(5 * time.Millisecond) // lets the workers interleave; no figure depends on it
					return content(name), nil
				}})
			}
			if len(tasks) > 0 {
				return tasks, nil
			}
		}
		return nil, nil
	}
}

// Four workers simulate every run of the sweep once between them, each
// ending with all of them in its folder; the run of a worker that died
// holding its lease (claimed, never renewed) is taken by another once the
// lease expires.
func TestWorkersShareTheSweep(t *testing.T) {
	rs := redistest.Start(t)
	ctx := t.Context()
	dead, err := sweepwork.Open(ctx, rs.URL(), "fake", "v1")
	if err != nil {
		t.Fatal(err)
	}
	defer dead.Close()
	if ok, err := dead.Claim(ctx, "s1-c", "dead-worker", 300*time.Millisecond); !ok || err != nil {
		t.Fatalf("claim: %v, %v", ok, err)
	}
	f := &fakeSweep{ran: map[string]int{}}
	const workers = 4
	stats := make([]sweepwork.Stats, workers)
	dirs := make([]string, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for i := range workers {
		dirs[i] = t.TempDir()
		s, err := sweepwork.Open(ctx, rs.URL(), "fake", "v1")
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		w := &sweepwork.Worker{Store: s, Owner: fmt.Sprintf("w%d", i), Dir: dirs[i], Plan: f.plan(dirs[i]), Lease: 5 * time.Second, Poll: 10 * time.Millisecond}
		wg.Go(func() { stats[i], errs[i] = w.Run(ctx) })
	}
	wg.Wait()
	var all []string
	for _, step := range steps {
		all = append(all, step...)
	}
	simulated := 0
	for i := range workers {
		if errs[i] != nil {
			t.Fatalf("worker %d: %v", i, errs[i])
		}
		if stats[i].Stored != len(all) {
			t.Errorf("worker %d: %d runs stored at the end, want %d", i, stats[i].Stored, len(all))
		}
		simulated += stats[i].Simulated
		for _, name := range all {
			got, err := os.ReadFile(filepath.Join(dirs[i], name))
			if err != nil || string(got) != string(content(name)) {
				t.Errorf("worker %d: %s holds %q (%v), want %q", i, name, got, err, content(name))
			}
		}
	}
	if simulated != len(all) {
		t.Errorf("the workers say they simulated %d runs, want %d", simulated, len(all))
	}
	for _, name := range all {
		if f.ran[name] != 1 {
			t.Errorf("%s simulated %d times, want once", name, f.ran[name])
		}
	}
	if h, err := dead.Holder(ctx, "s1-c"); h != "" || err != nil {
		t.Errorf("the dead worker's lease is held by %q (%v) at the end", h, err)
	}
}

// A sweep belongs to the version that opened it first; another version
// is refused, naming both.
func TestVersionRefused(t *testing.T) {
	rs := redistest.Start(t)
	ctx := t.Context()
	a, err := sweepwork.Open(ctx, rs.URL(), "sw", "v1")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	_, err = sweepwork.Open(ctx, rs.URL(), "sw", "v2")
	var ve *sweepwork.VersionError
	if !errors.As(err, &ve) || ve.Stored != "v1" || ve.Mine != "v2" || !strings.Contains(err.Error(), "simbench v1 and this build is v2") {
		t.Fatalf("Open by v2 = %v, want a VersionError naming v1 and v2", err)
	}
	b, err := sweepwork.Open(ctx, rs.URL(), "sw", "v1")
	if err != nil {
		t.Fatalf("Open by v1 again: %v", err)
	}
	b.Close()
	c, err := sweepwork.Open(ctx, rs.URL(), "another", "v2")
	if err != nil {
		t.Fatalf("another sweep by v2: %v", err)
	}
	c.Close()
}

// A lease is renewed and released by its owner only, and expires.
func TestLease(t *testing.T) {
	rs := redistest.Start(t)
	ctx := t.Context()
	s, err := sweepwork.Open(ctx, rs.URL(), "sw", "v1")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	check := func(what string, got bool, err error, want bool) {
		t.Helper()
		if err != nil || got != want {
			t.Fatalf("%s = %v, %v; want %v", what, got, err, want)
		}
	}
	ok, err := s.Claim(ctx, "r", "a", time.Minute)
	check("a claims r", ok, err, true)
	ok, err = s.Claim(ctx, "r", "b", time.Minute)
	check("b claims r held by a", ok, err, false)
	ok, err = s.Renew(ctx, "r", "b", time.Minute)
	check("b renews a's lease", ok, err, false)
	ok, err = s.Renew(ctx, "r", "a", 50*time.Millisecond)
	check("a renews its lease", ok, err, true)
	if err := s.Release(ctx, "r", "b"); err != nil {
		t.Fatal(err)
	}
	if h, _ := s.Holder(ctx, "r"); h != "a" {
		t.Fatalf("after b released a's lease the holder is %q, want a", h)
	}
	for { // a's lease of 50 ms expires
		h, err := s.Holder(ctx, "r")
		if err != nil {
			t.Fatal(err)
		}
		if h == "" {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	ok, err = s.Claim(ctx, "r", "b", time.Minute)
	check("b claims r after a's lease expired", ok, err, true)
	if err := s.Release(ctx, "r", "b"); err != nil {
		t.Fatal(err)
	}
	if h, _ := s.Holder(ctx, "r"); h != "" {
		t.Fatalf("after b released its lease the holder is %q", h)
	}
}

// Put keeps the first file of a name; Mirror copies what a folder lacks.
func TestPutAndMirror(t *testing.T) {
	rs := redistest.Start(t)
	ctx := t.Context()
	s, err := sweepwork.Open(ctx, rs.URL(), "sw", "v1")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, p := range []struct{ name, data string }{{"x", "first"}, {"y", "why"}, {"x", "second"}} {
		if err := s.Put(ctx, p.name, []byte(p.data)); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "y"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	copied, stored, err := s.Mirror(ctx, dir)
	if err != nil || copied != 1 || stored != 2 {
		t.Fatalf("Mirror = %d copied, %d stored, %v; want 1 and 2", copied, stored, err)
	}
	names, _ := s.Names(ctx)
	slices.Sort(names)
	x, _ := os.ReadFile(filepath.Join(dir, "x"))
	y, _ := os.ReadFile(filepath.Join(dir, "y"))
	if !slices.Equal(names, []string{"x", "y"}) || string(x) != "first" || string(y) != "mine" {
		t.Fatalf("names %v, x %q, y %q; want [x y], the first x and the folder's own y", names, x, y)
	}
}

// A URL that is not Redis's is refused, saying what to write.
func TestParseURL(t *testing.T) {
	tests := []struct {
		give string
		want string // in the error; "" for none
	}{
		{give: "redis://127.0.0.1:6379/0"},
		{give: "rediss://cache.example.com:6380"},
		{give: "http://127.0.0.1:6379", want: "want redis://HOST:PORT[/DB]"},
		{give: "127.0.0.1:6379", want: "want redis://HOST:PORT[/DB]"},
		{give: "redis://127.0.0.1:6379/zero", want: `"redis://127.0.0.1:6379/zero"`},
	}
	for _, tt := range tests {
		_, err := sweepwork.ParseURL(tt.give)
		if (err == nil) != (tt.want == "") || err != nil && !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseURL(%q) = %v, want an error with %q", tt.give, err, tt.want)
		}
	}
}
