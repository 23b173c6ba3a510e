package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/simbench/simbench/internal/hostile"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
)

// cacheEntry simulates burst-8's paced strategy for 10 virtual seconds
// into a cache in a new folder and returns the scenario, the options that
// run it and the path of its one entry.
func cacheEntry(t *testing.T) (*scenarios.Scenario, Options, string) {
	t.Helper()
	sc, err := scenarios.Builtin("burst-8")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	opts := Options{Strategies: []string{"paced"}, Duration: 10 * time.Second, Parallel: 1}
	opts.Cache = NewCache(dir, "test", nil)
	if _, err := Run(context.Background(), sc, opts); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != 1 {
		t.Fatalf("%d cache entries, want 1", len(files))
	}
	return sc, opts, files[0]
}

// editEntry rewrites the cache entry at path with edit applied and, when
// resum, its checksum made anew (an edit made on purpose, not by
// accident).
func editEntry(t *testing.T, path string, good []byte, resum bool, edit func(e *RunEntry)) {
	t.Helper()
	var e RunEntry
	if err := json.Unmarshal(good, &e); err != nil {
		t.Fatal(err)
	}
	edit(&e)
	if resum {
		var err error
		if e.SHA256, err = e.checksum(); err != nil {
			t.Fatal(err)
		}
	}
	data, err := e.Encode()
	if err != nil {
		t.Fatal(err)
	}
	hostile.WriteFile(t, path, data)
}

// The damages only a cache entry can have: figures edited by hand (the
// checksum catches them), or edited with the checksum made anew (the
// results' checks and the histograms catch them).
var hostileEntries = []hostile.Damage{
	hostile.D("turns-edited", func(t *testing.T, path string, good []byte) {
		editEntry(t, path, good, false, func(e *RunEntry) { e.Result.Turns = 999_999 })
	}, "checksum"),
	hostile.D("p95-edited", func(t *testing.T, path string, good []byte) {
		editEntry(t, path, good, false, func(e *RunEntry) { e.Result.TurnLatencyMs.P95 = 1.0 })
	}, "checksum"),
	hostile.D("429s-edited", func(t *testing.T, path string, good []byte) {
		editEntry(t, path, good, false, func(e *RunEntry) { e.Result.RateLimited = 0 })
	}, "checksum"),
	hostile.D("turns-resummed", func(t *testing.T, path string, good []byte) {
		editEntry(t, path, good, true, func(e *RunEntry) { e.Result.Turns = 999_999 })
	}, "turns, its turn histogram"),
	hostile.D("negative-resummed", func(t *testing.T, path string, good []byte) {
		editEntry(t, path, good, true, func(e *RunEntry) { e.Result.Attempts, e.Result.Failed = -5, -1 })
	}, "a count is ≥ 0"),
	hostile.D("1e308-resummed", func(t *testing.T, path string, good []byte) {
		editEntry(t, path, good, true, func(e *RunEntry) { e.Result.TurnLatencyMs.P99, e.Result.TurnLatencyMs.Max = 1e308, 1e308 })
	}, "want at most"),
	hostile.D("nan", func(t *testing.T, path string, good []byte) {
		hostile.EditJSON(t, path, good, "result.turn_latency_ms.p95", "NaN")
	}, "not a simbench run file"),
	hostile.D("negative-edited", func(t *testing.T, path string, good []byte) { hostile.EditJSON(t, path, good, "result.turns", "-3") }, "checksum"),
	hostile.D("huge-histogram-resummed", func(t *testing.T, path string, good []byte) {
		editEntry(t, path, good, true, func(e *RunEntry) { e.TurnHDR = hostile.HugeHistogram(t) })
	}, "another layout"),
}

// Every damaged or replaced cache entry is refused, within the guard's
// time and memory, with a message naming the file: read alone
// (ReadRunEntry), as a shard's folder (OpenUnion, which refuses the
// folder), and by a cache, which warns and simulates the run again to
// the figures it had.
func TestHostileCacheEntries(t *testing.T) {
	for _, h := range append(append([]hostile.Damage{}, hostile.Files...), hostileEntries...) {
		t.Run(h.Name, func(t *testing.T) {
			sc, opts, path := cacheEntry(t)
			good, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var want RunEntry
			if err := json.Unmarshal(good, &want); err != nil {
				t.Fatal(err)
			}
			h.Spoil(t, path, good)
			for what, read := range map[string]func() error{
				"ReadRunEntry": func() error { _, _, err := ReadRunEntry(path); return err },
				"OpenUnion":    func() error { _, err := OpenUnion([]string{filepath.Dir(path)}, "test"); return err },
			} {
				err := hostile.Guarded(t, read)
				if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), h.Want) {
					t.Errorf("%s: err = %v, want one naming %s and saying %q", what, err, path, h.Want)
				}
			}
			var w warnings
			opts.Cache = NewCache(filepath.Dir(path), "test", w.add)
			var got *results.Results
			hostile.Guarded(t, func() error { got, err = Run(context.Background(), sc, opts); return err })
			if err != nil {
				t.Fatal(err)
			}
			// A directory in the entry's place is also not replaced: a
			// second warning says so.
			if len(w.msgs) == 0 || !strings.Contains(w.msgs[0], "ignoring the cached run "+path) || !strings.Contains(w.msgs[0], "simulating it again") {
				t.Errorf("warnings %q, want one naming %s", w.msgs, path)
			}
			if opts.Cache.Reused() != 0 || got.Strategies[0].Turns != want.Result.Turns || got.Strategies[0].RateLimited != want.Result.RateLimited {
				t.Errorf("reused %d entries; %d turns and %d 429s, want the entry simulated again to %d and %d",
					opts.Cache.Reused(), got.Strategies[0].Turns, got.Strategies[0].RateLimited, want.Result.Turns, want.Result.RateLimited)
			}
		})
	}
}

// A good entry passes every check the hostile ones fail, and so does one
// whose checksum is made anew without an edit: the checksum is of what the
// entry decodes to.
func TestCacheEntryChecksum(t *testing.T) {
	_, _, path := cacheEntry(t)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadRunEntry(path); err != nil {
		t.Fatal(err)
	}
	editEntry(t, path, good, true, func(*RunEntry) {})
	again, _ := os.ReadFile(path)
	if !bytes.Equal(again, good) {
		t.Errorf("an entry decoded and encoded again differs from the one written:\n%s\n%s", good, again)
	}
}
