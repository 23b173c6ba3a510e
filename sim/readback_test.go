package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
)

// readBackGuard is how long one hostile file may keep a reader before the
// test fails: a guard against a hang (a FIFO read blocks forever, /dev/zero
// never ends), far above the milliseconds a refusal takes.
const readBackGuard = 2 * time.Second

// readBackMaxAlloc is the most memory one hostile file may make a reader
// allocate, in bytes.
const readBackMaxAlloc = 100 << 20

// guarded runs read, failing the test when it has not returned within
// readBackGuard or allocated more than readBackMaxAlloc bytes, and
// returns its error.
func guarded(t *testing.T, read func() error) error {
	t.Helper()
	done := make(chan error, 1)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	go func() { done <- read() }()
	select {
	case err := <-done:
		runtime.ReadMemStats(&after)
		d := after.TotalAlloc - before.TotalAlloc
		if d > readBackMaxAlloc {
			t.Errorf("the read allocated %d MiB, want at most %d", d>>20, readBackMaxAlloc>>20)
		}
		t.Logf("%d KiB allocated: %v", d>>10, err)
		return err
	case <-time.After(readBackGuard):
		t.Fatalf("the read did not return within %v", readBackGuard)
		return nil
	}
}

// hostile is one way a file read back can be damaged or replaced: spoil
// turns the good file at path (whose bytes are good) into the bad one.
type hostile struct {
	name  string
	spoil func(t *testing.T, path string, good []byte)
	want  string // in the error
}

// writeFile replaces the file at path with data.
func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// editJSON sets the field at the dotted path in the JSON at path to v,
// written as raw JSON text (so that NaN can be written as a JSON reader
// would meet it).
func editJSON(t *testing.T, path string, good []byte, field, v string) {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(good, &doc); err != nil {
		t.Fatal(err)
	}
	keys := strings.Split(field, ".")
	m := doc
	for _, k := range keys[:len(keys)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			if arr, isArr := m[k].([]any); isArr && len(arr) > 0 {
				next, _ = arr[0].(map[string]any) // the first strategy
			}
			if next == nil {
				t.Fatalf("%s: no object %q in %s", path, k, field)
			}
		}
		m = next
	}
	const mark = "\"the edited field\""
	m[keys[len(keys)-1]] = json.RawMessage(mark)
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, bytes.Replace(data, []byte(mark), []byte(v), 1))
}

// hostileFiles are the damages every file read back is tried with.
var hostileFiles = []hostile{
	{"truncated", func(t *testing.T, path string, good []byte) { writeFile(t, path, good[:len(good)/2]) }, ""},
	{"empty", func(t *testing.T, path string, good []byte) { writeFile(t, path, nil) }, ""},
	{"fifo", func(t *testing.T, path string, good []byte) {
		os.Remove(path)
		if err := syscall.Mkfifo(path, 0o644); err != nil {
			t.Skip("no named pipes here:", err)
		}
	}, "named pipe"},
	{"dev-zero", func(t *testing.T, path string, good []byte) {
		os.Remove(path)
		if err := os.Symlink("/dev/zero", path); err != nil {
			t.Skip("no symbolic links here:", err)
		}
	}, "device"},
	{"directory", func(t *testing.T, path string, good []byte) {
		os.Remove(path)
		if err := os.Mkdir(path, 0o755); err != nil {
			t.Fatal(err)
		}
	}, "directory"},
	{"2GB-sparse", func(t *testing.T, path string, good []byte) {
		if err := os.Truncate(path, 2<<30); err != nil {
			t.Skip("no sparse files here:", err)
		}
	}, "larger than 64 MiB"},
}

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
	writeFile(t, path, data)
}

// The damages only a cache entry can have: figures edited by hand (the
// checksum catches them), or edited with the checksum made anew (the
// results' checks and the histograms catch them).
var hostileEntries = []hostile{
	{"turns-edited", func(t *testing.T, path string, good []byte) {
		editEntry(t, path, good, false, func(e *RunEntry) { e.Result.Turns = 999_999 })
	}, "checksum"},
	{"p95-edited", func(t *testing.T, path string, good []byte) {
		editEntry(t, path, good, false, func(e *RunEntry) { e.Result.TurnLatencyMs.P95 = 1.0 })
	}, "checksum"},
	{"429s-edited", func(t *testing.T, path string, good []byte) {
		editEntry(t, path, good, false, func(e *RunEntry) { e.Result.RateLimited = 0 })
	}, "checksum"},
	{"turns-resummed", func(t *testing.T, path string, good []byte) {
		editEntry(t, path, good, true, func(e *RunEntry) { e.Result.Turns = 999_999 })
	}, "turns, its turn histogram"},
	{"negative-resummed", func(t *testing.T, path string, good []byte) {
		editEntry(t, path, good, true, func(e *RunEntry) { e.Result.Attempts, e.Result.Failed = -5, -1 })
	}, "a count is ≥ 0"},
	{"1e308-resummed", func(t *testing.T, path string, good []byte) {
		editEntry(t, path, good, true, func(e *RunEntry) { e.Result.TurnLatencyMs.P99, e.Result.TurnLatencyMs.Max = 1e308, 1e308 })
	}, "want at most"},
	{"nan", func(t *testing.T, path string, good []byte) {
		editJSON(t, path, good, "result.turn_latency_ms.p95", "NaN")
	}, "not a simbench run file"},
	{"negative-edited", func(t *testing.T, path string, good []byte) { editJSON(t, path, good, "result.turns", "-3") }, "checksum"},
	{"huge-histogram-resummed", func(t *testing.T, path string, good []byte) {
		editEntry(t, path, good, true, func(e *RunEntry) { e.TurnHDR = hugeHistogram(t) })
	}, "another layout"},
}

// hugeHistogram is an empty histogram, compressed to a few bytes, whose
// layout (5 significant digits up to 2^62) takes about 50 MB once decoded.
func hugeHistogram(t *testing.T) []byte {
	t.Helper()
	b, err := hdrhistogram.New(1, 1<<62, 5).Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The damages only a member's histogram log can have: intervals of a
// layout that takes tens of megabytes each, many of them.
var hostileHistLogs = []hostile{
	{"huge-histograms", func(t *testing.T, path string, good []byte) {
		h, err := hdrhistogram.Decode(hugeHistogram(t))
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := WriteHDRLog(&buf, "huge", "turn:shared", []*hdrhistogram.Histogram{h}); err != nil {
			t.Fatal(err)
		}
		// The interval 100 times over (encoding it anew each time is slow).
		lines := bytes.SplitAfter(bytes.TrimSuffix(buf.Bytes(), []byte("\n")), []byte("\n"))
		interval := append(lines[len(lines)-1], '\n')
		writeFile(t, path, append(buf.Bytes(), bytes.Repeat(interval, 99)...))
	}, "another layout"},
}

// Every damaged or replaced cache entry is refused, within the guard's
// time and memory, with a message naming the file: read alone
// (ReadRunEntry), as a shard's folder (OpenUnion, which refuses the
// folder), and by a cache, which warns and simulates the run again to
// the figures it had.
func TestHostileCacheEntries(t *testing.T) {
	for _, h := range append(append([]hostile{}, hostileFiles...), hostileEntries...) {
		t.Run(h.name, func(t *testing.T) {
			sc, opts, path := cacheEntry(t)
			good, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var want RunEntry
			if err := json.Unmarshal(good, &want); err != nil {
				t.Fatal(err)
			}
			h.spoil(t, path, good)
			for what, read := range map[string]func() error{
				"ReadRunEntry": func() error { _, _, err := ReadRunEntry(path); return err },
				"OpenUnion":    func() error { _, err := OpenUnion([]string{filepath.Dir(path)}, "test"); return err },
			} {
				err := guarded(t, read)
				if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), h.want) {
					t.Errorf("%s: err = %v, want one naming %s and saying %q", what, err, path, h.want)
				}
			}
			var w warnings
			opts.Cache = NewCache(filepath.Dir(path), "test", w.add)
			var got *results.Results
			guarded(t, func() error { got, err = Run(context.Background(), sc, opts); return err })
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

// The damages only a member's results can have: figures that contradict
// the histograms beside them, or a fleet size out of range.
var hostileMembers = []hostile{
	{"turns-edited", func(t *testing.T, path string, good []byte) {
		editJSON(t, path, good, "strategies.turns", "999999")
	}, "turns, its turn histogram"},
	{"calls-edited", func(t *testing.T, path string, good []byte) {
		editJSON(t, path, good, "strategies.calls", "81")
	}, "calls, its call histogram"},
	{"negative", func(t *testing.T, path string, good []byte) { editJSON(t, path, good, "strategies.turns", "-1") }, "a count is ≥ 0"},
	{"nan", func(t *testing.T, path string, good []byte) {
		editJSON(t, path, good, "strategies.turn_latency_ms.p95", "NaN")
	}, "invalid character"},
	{"1e308", func(t *testing.T, path string, good []byte) {
		editJSON(t, path, good, "strategies.turn_latency_ms.max", "1e308")
	}, "want at most"},
	{"fleet-of-negative", func(t *testing.T, path string, good []byte) { editJSON(t, path, good, "fleet.of", "-1") }, "fleet.of"},
	{"fleet-of-2^62", func(t *testing.T, path string, good []byte) {
		editJSON(t, path, good, "fleet.of", "4611686018427387904")
	}, "fleet.of"},
	{"fleet-of-1e9", func(t *testing.T, path string, good []byte) { editJSON(t, path, good, "fleet.of", "1000000000") }, "fleet.of"},
	{"member-out-of-range", func(t *testing.T, path string, good []byte) { editJSON(t, path, good, "fleet.member", "2") }, "fleet.member"},
}
