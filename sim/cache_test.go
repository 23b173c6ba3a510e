package sim

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
)

// cachedRun runs tier3 for 20 virtual seconds over two seeds with opts
// and returns its results.json bytes and its HDR logs' bytes.
func cachedRun(t *testing.T, opts Options) (res, hdr []byte) {
	t.Helper()
	sc, err := scenarios.Builtin("tier3")
	if err != nil {
		t.Fatal(err)
	}
	opts.Duration, opts.Seeds = 20*time.Second, 2
	var hdrs HDRSet
	opts.HDR = hdrs.Add
	r, err := RunSeeds(context.Background(), sc, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res, err = results.Encode(r); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := hdrs.WriteFiles(dir); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.hlog"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		hdr = append(append(hdr, f[len(dir):]...), b...)
	}
	return res, hdr
}

// warnings collects a cache's warnings.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) add(msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, msg)
}

func TestCachedRunsAreTheRunsSimulated(t *testing.T) {
	want, wantHDR := cachedRun(t, Options{Parallel: 1})
	var w warnings
	cache := NewCache(t.TempDir(), "test", w.add)
	cold, coldHDR := cachedRun(t, Options{Cache: cache, Parallel: 3})
	if got := len(cache.Simulated()); got != 6 || cache.Reused() != 0 {
		t.Fatalf("cold cache: %d runs simulated and %d reused, want 6 (3 strategies × 2 seeds) and 0", got, cache.Reused())
	}
	warm, warmHDR := cachedRun(t, Options{Cache: cache, Parallel: 2})
	for key, n := range cache.Simulated() {
		if n != 1 {
			t.Errorf("run %s simulated %d times", key, n)
		}
	}
	if cache.Reused() != 6 {
		t.Errorf("warm cache: %d runs reused, want 6", cache.Reused())
	}
	for _, got := range []struct {
		name      string
		res, hdrs []byte
	}{{"cold cache", cold, coldHDR}, {"warm cache", warm, warmHDR}} {
		if !bytes.Equal(got.res, want) {
			t.Errorf("%s: results.json differs from the run without a cache", got.name)
		}
		if !bytes.Equal(got.hdrs, wantHDR) {
			t.Errorf("%s: the HDR logs differ from the run without a cache", got.name)
		}
	}
	if len(w.msgs) > 0 {
		t.Errorf("warnings: %q", w.msgs)
	}
}

func TestCacheIgnoresBadEntries(t *testing.T) {
	dir := t.TempDir()
	want, _ := cachedRun(t, Options{Cache: NewCache(dir, "test", nil)})
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) != 6 {
		t.Fatalf("%d entries (%v), want 6", len(files), err)
	}
	// One entry cut short, one holding another run's entry (a foreign
	// key), one that is not JSON at all.
	data, err := os.ReadFile(files[1])
	if err != nil {
		t.Fatal(err)
	}
	for path, b := range map[string][]byte{files[0]: data[:len(data)/2], files[2]: data, files[3]: []byte("\x00\x01 not json")} {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var w warnings
	cache := NewCache(dir, "test", w.add)
	got, _ := cachedRun(t, Options{Cache: cache})
	if !bytes.Equal(got, want) {
		t.Error("results.json with bad entries in the cache differs from the run before")
	}
	if n := len(cache.Simulated()); n != 3 || cache.Reused() != 3 {
		t.Errorf("%d runs simulated and %d reused, want the 3 bad entries simulated again and 3 reused", n, cache.Reused())
	}
	if len(w.msgs) != 3 {
		t.Fatalf("%d warnings, want 3: %q", len(w.msgs), w.msgs)
	}
	all := strings.Join(w.msgs, "\n")
	for _, want := range []string{"ignoring the cached run " + files[0], "ignoring the cached run " + files[2] + ": it holds another run", "ignoring the cached run " + files[3]} {
		if !strings.Contains(all, want) {
			t.Errorf("no warning %q in:\n%s", want, all)
		}
	}
	// Another version reads none of them.
	other := NewCache(dir, "other", nil)
	cachedRun(t, Options{Cache: other})
	if other.Reused() != 0 {
		t.Errorf("another version reused %d runs", other.Reused())
	}
}

// A run read whole from the cache still answers a ctx that has ended with
// ctx.Err(), as a simulated run does: Ctrl-C during a decision whose runs
// are all cached must stop the decision, not let it finish unasked.
func TestCachedRunHonoursEndedContext(t *testing.T) {
	sc, err := scenarios.Builtin("burst-8")
	if err != nil {
		t.Fatal(err)
	}
	cache := NewCache(t.TempDir(), "test", nil)
	opts := Options{Strategies: []string{"paced"}, Duration: 10 * time.Second, Cache: cache}
	if _, err := Run(context.Background(), sc, opts); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := Run(ctx, sc, opts)
	if err != context.Canceled {
		t.Fatalf("Run with an ended ctx over a cached run: err = %v, want context.Canceled", err)
	}
	if res == nil || res.Strategies[0].Calls == 0 || cache.Reused() != 1 {
		t.Fatalf("want the cached run returned with the error (reused %d)", cache.Reused())
	}
}
