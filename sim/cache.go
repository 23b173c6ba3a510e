package sim

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/simbench/simbench/internal/atomicfile"
	"github.com/simbench/simbench/internal/collect"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
)

// RunFormat names the format of a cached run's file (RunEntry), version 2
// (version 1 held no checksum).
const RunFormat = "simbench-run/2"

// Cache keeps the results of virtual-time runs on disk, one file per run
// of one strategy at one seed, so that `run`, `sweep` and `recommend`
// simulate each run once between them. A run is known by its RunKey:
// the simbench version, the scenario's digest, the strategy's settings
// (its name too: the name seeds the strategy's random stream), the seed
// and the duration. The same key gives the same figures bit for bit (the
// engine is deterministic), so an entry stands in for the run.
//
// An entry is written atomically (atomicfile.WriteFile) once its run
// finished; an interrupted run is never stored. An entry is read back as
// ReadRunEntry reads it; one that fails its checks (not a regular file,
// too large, edited, figures out of range or not matching its
// histograms), or whose key is not the one asked for (a file from
// another version or another scenario), is ignored, reported through
// Warn with its path, and simulated again. A Cache is safe for concurrent use; the zero value is
// not usable: make one with NewCache.
type Cache struct {
	dir     string
	version string
	warn    func(msg string)

	files   map[string]string // a read-only union (OpenUnion): run files by name
	missing map[string]Point  // a read-only union: the runs asked for and not held

	mu        sync.Mutex
	simulated map[string]int // runs simulated, by key file
	reused    int
}

// NewCache returns a cache of runs under dir for simbench version version
// (entries of another version are never read). warn, when not nil, is
// told about an entry ignored or not written; it must be safe for
// concurrent use.
func NewCache(dir, version string, warn func(msg string)) *Cache {
	if warn == nil {
		warn = func(string) {}
	}
	return &Cache{dir: dir, version: version, warn: warn, simulated: map[string]int{}}
}

// Dir is the directory the cache keeps its entries in.
func (c *Cache) Dir() string { return c.dir }

// Simulated returns how many runs the cache's users simulated (those it
// did not hold), by entry file name; a name counted twice is a run done
// twice. A nil cache counts none.
func (c *Cache) Simulated() map[string]int {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.simulated))
	for k, v := range c.simulated {
		out[k] = v
	}
	return out
}

// Reused returns how many runs were read from the cache instead of
// simulated (0 for a nil cache).
func (c *Cache) Reused() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reused
}

// RunKey names one run of one strategy: what its figures depend on.
type RunKey struct {
	// SimbenchVersion is the version of the simbench that ran it: another
	// version's entries are not reused.
	SimbenchVersion string `json:"simbench_version"`
	// ScenarioDigest is the scenario's ScenarioDigest (SHA-256 in hex of
	// its workload, services and tools).
	ScenarioDigest string `json:"scenario_digest"`
	// Strategy is the strategy's full settings, its name included.
	Strategy scenarios.Strategy `json:"strategy"`
	// Seed is the run's random seed.
	Seed uint64 `json:"seed"`
	// DurationNs is the scenario's duration, in nanoseconds.
	DurationNs time.Duration `json:"duration_ns"`
	// Stop names the rule that could stop the run early (Options.StopKey;
	// "": a run to the end): such a run is kept apart from the whole one.
	Stop string `json:"stop,omitempty"`
}

// runKey is the key of strategy st's run of sc (sc's seed and duration).
func (c *Cache) runKey(sc *scenarios.Scenario, st *scenarios.Strategy) RunKey {
	return RunKey{SimbenchVersion: c.version, ScenarioDigest: ScenarioDigest(sc), Strategy: *st, Seed: sc.Seed, DurationNs: sc.Duration}
}

// File is the name of the key's entry: the SHA-256 of the key, in hex,
// and ".json".
func (k RunKey) File() string {
	b, _ := json.Marshal(k) // plain data: cannot fail
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]) + ".json"
}

// RunEntry is a cached run's file: the key it answers, the strategy's
// results and its latencies as HdrHistograms (microseconds) in
// hdrhistogram-go's own compressed encoding, as the interval logs hold them,
// and a checksum of all of it.
type RunEntry struct {
	// Format is RunFormat; an entry in any other format is not read.
	Format string `json:"format"`
	// SHA256 is the SHA-256, in hex, of the entry's JSON encoding
	// (encoding/json's, compact) with SHA256 empty: an entry edited by
	// hand or damaged on disk no longer matches it. Key is the run the
	// entry answers; Result the strategy's figures from that run.
	SHA256 string                 `json:"sha256"`
	Key    RunKey                 `json:"key"`
	Result results.StrategyResult `json:"result"`
	// TurnHDR and CallHDR are HDRLatencies' Turn and Call, encoded (the
	// encoding holds no interval: it is the run's, 0 to its duration).
	TurnHDR []byte `json:"turn_hdr"`
	CallHDR []byte `json:"call_hdr"`
}

// entryOf makes the entry of a finished run.
func entryOf(key RunKey, r results.StrategyResult, l collect.HDRLatencies) (*RunEntry, error) {
	turn, err := l.Turn.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return nil, err
	}
	call, err := l.Call.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return nil, err
	}
	e := &RunEntry{Format: RunFormat, Key: key, Result: r, TurnHDR: turn, CallHDR: call}
	if e.SHA256, err = e.checksum(); err != nil {
		return nil, err
	}
	return e, nil
}

// checksum is what the entry's SHA256 should be: the SHA-256 of its
// compact JSON encoding with SHA256 empty. Encoding what was decoded
// gives the bytes encoded before (floats are written in their shortest
// exact form, maps in key order), so any edit that changes a figure
// changes the sum.
func (e *RunEntry) checksum() (string, error) {
	c := *e
	c.SHA256 = ""
	b, err := json.Marshal(&c)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// Latencies decodes the entry's histograms, each of the layout a run
// records in (checkLayout).
func (e *RunEntry) Latencies() (collect.HDRLatencies, error) {
	var hs [2]*hdrhistogram.Histogram
	for i, enc := range [][]byte{e.TurnHDR, e.CallHDR} {
		what := []string{"turn_hdr", "call_hdr"}[i]
		h, err := hdrhistogram.Decode(enc)
		if err != nil {
			return collect.HDRLatencies{}, fmt.Errorf("%s: %w", what, err)
		}
		if err := CheckLayout(what, h, int64(collect.HistMax/time.Microsecond)); err != nil {
			return collect.HDRLatencies{}, err
		}
		hs[i] = h
	}
	turn, call := hs[0], hs[1]
	// The encoding leaves out the interval, which is the run's: from 0 to
	// its duration.
	for _, h := range []*hdrhistogram.Histogram{turn, call} {
		h.SetStartTimeMs(0)
		h.SetEndTimeMs(e.Key.DurationNs.Milliseconds())
	}
	return collect.HDRLatencies{Strategy: e.Key.Strategy.Name, Seed: e.Key.Seed, Turn: turn, Call: call}, nil
}

// ReadRunEntry reads the run file at path and checks that it is one: a
// regular file of at most MaxReadBackBytes (readBack), its format, its
// checksum, a key, a result named for the key's strategy whose figures
// pass results.CheckStrategy, histograms that decode and hold as many
// turns and calls as the result counts. The error names the file.
func ReadRunEntry(path string) (*RunEntry, collect.HDRLatencies, error) {
	data, err := ReadBack(path)
	if err != nil {
		return nil, collect.HDRLatencies{}, err
	}
	e, l, err := decodeRunEntry(data)
	if err != nil {
		return nil, collect.HDRLatencies{}, fmt.Errorf("%s: %w", path, err)
	}
	if err := results.CheckStrategy(path, "result", &e.Result, e.Key.DurationNs.Seconds()); err != nil {
		return nil, collect.HDRLatencies{}, err
	}
	if err := CheckCounts(path, path, &e.Result, l.Turn, nil, l.Call); err != nil {
		return nil, collect.HDRLatencies{}, err
	}
	return e, l, nil
}

func decodeRunEntry(data []byte) (*RunEntry, collect.HDRLatencies, error) {
	var e RunEntry
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&e); err != nil {
		return nil, collect.HDRLatencies{}, fmt.Errorf("not a simbench run file: %w", err)
	}
	switch {
	case e.Format != RunFormat:
		return nil, collect.HDRLatencies{}, fmt.Errorf("format %q, want %q", e.Format, RunFormat)
	}
	if sum, err := e.checksum(); err != nil || sum != e.SHA256 {
		return nil, collect.HDRLatencies{}, errors.New("its contents do not match their checksum (sha256): edited or damaged")
	}
	switch {
	case e.Key.ScenarioDigest == "" || e.Key.Strategy.Name == "" || e.Key.DurationNs <= 0:
		return nil, collect.HDRLatencies{}, errors.New("key: no scenario digest, strategy or duration")
	case e.Result.Name != e.Key.Strategy.Name:
		return nil, collect.HDRLatencies{}, fmt.Errorf("result names strategy %q, the key %q", e.Result.Name, e.Key.Strategy.Name)
	case e.Result.Partial:
		return nil, collect.HDRLatencies{}, errors.New("result is partial")
	}
	l, err := e.Latencies()
	if err != nil {
		return nil, collect.HDRLatencies{}, err
	}
	return &e, l, nil
}

// Encode returns the entry as its file holds it: indented JSON ending in a
// newline.
func (e *RunEntry) Encode() ([]byte, error) {
	data, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// load returns the entry of key, or nil when the cache holds none that
// can be trusted (a bad one is reported and ignored).
func (c *Cache) load(key RunKey) (*results.StrategyResult, collect.HDRLatencies, bool) {
	path := filepath.Join(c.dir, key.File())
	if c.files != nil {
		p, ok := c.files[key.File()]
		if !ok {
			return nil, collect.HDRLatencies{}, false
		}
		path = p
	}
	e, l, err := ReadRunEntry(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, collect.HDRLatencies{}, false
	case err != nil:
		c.warn(fmt.Sprintf("ignoring the cached run %v; simulating it again", err))
		return nil, collect.HDRLatencies{}, false
	}
	if !sameKey(e.Key, key) {
		c.warn(fmt.Sprintf("ignoring the cached run %s: it holds another run (strategy %q, seed %d, simbench %s); simulating it again",
			path, e.Key.Strategy.Name, e.Key.Seed, e.Key.SimbenchVersion))
		return nil, collect.HDRLatencies{}, false
	}
	c.mu.Lock()
	c.reused++
	c.mu.Unlock()
	return &e.Result, l, true
}

// sameKey compares two keys by their encodings.
func sameKey(a, b RunKey) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// store writes a finished run's entry; a failure is reported, not
// returned: the run's results stand without it.
func (c *Cache) store(key RunKey, r results.StrategyResult, l collect.HDRLatencies) {
	c.mu.Lock()
	c.simulated[key.File()]++
	c.mu.Unlock()
	e, err := entryOf(key, r, l)
	var data []byte
	if err == nil {
		data, err = e.Encode()
	}
	if err == nil {
		err = os.MkdirAll(c.dir, 0o755)
	}
	if err == nil {
		err = atomicfile.WriteFile(filepath.Join(c.dir, key.File()), data, 0o644)
	}
	if err != nil {
		c.warn(fmt.Sprintf("not caching the run of %s at seed %d: %v", key.Strategy.Name, key.Seed, err))
	}
}

// OpenUnion returns a read-only cache over the run files of dirs, the
// output folders of a sharded sweep (`simbench sweep --shard`), for
// simbench version version. It never simulates: a run it does not hold
// fails with a *MissError naming the run, and is kept for Missing. Every
// file of every folder must be a run entry of this version under its own
// name, and no file name may be in two folders; OpenUnion reports every
// file that is not, naming it, all at once.
func OpenUnion(dirs []string, version string) (*Cache, error) {
	c := NewCache("", version, nil)
	c.files, c.missing = map[string]string{}, map[string]Point{}
	var errs []error
	for _, dir := range dirs {
		ents, err := os.ReadDir(dir)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, ent := range ents {
			path := filepath.Join(dir, ent.Name())
			if prev, ok := c.files[ent.Name()]; ok {
				errs = append(errs, fmt.Errorf("%s: the same run as %s: a point run by two shards", path, prev))
				continue
			}
			e, _, err := ReadRunEntry(path)
			switch {
			case err != nil:
				errs = append(errs, err)
			case e.Key.SimbenchVersion != version:
				errs = append(errs, fmt.Errorf("%s: a run of simbench %s, not of this build (%s)", path, e.Key.SimbenchVersion, version))
			case e.Key.File() != ent.Name():
				errs = append(errs, fmt.Errorf("%s: holds the run named %s", path, e.Key.File()))
			default:
				c.files[ent.Name()] = path
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return c, nil
}

// Point is a run a read-only cache was asked for and does not hold: its
// key, and the scenario to simulate it with (Run).
type Point struct {
	// Key names the run missing from the cache.
	Key      RunKey
	scenario *scenarios.Scenario
	// stopWhen is the run's Options.StopWhen (nil: none), of Key.Stop.
	stopWhen func(strategy string, w Watch) bool
}

// Run simulates the point, stopping it early as the run asked for would
// have, and stores it in into, a writable cache.
func (p Point) Run(ctx context.Context, into *Cache) error {
	_, err := Run(ctx, p.scenario, Options{Cache: into, Parallel: 1, StopWhen: p.stopWhen, StopKey: p.Key.Stop})
	return err
}

// MissError is a read-only cache's (OpenUnion) answer for runs it does
// not hold.
type MissError struct {
	// Keys are the runs asked for and not held, one per run.
	Keys []RunKey
}

// Error names the runs the read-only cache does not hold.
func (e *MissError) Error() string {
	var names []string
	for _, k := range e.Keys {
		names = append(names, fmt.Sprintf("%s (strategy %s, seed %d)", k.File(), k.Strategy.Name, k.Seed))
	}
	return "the shards hold no run " + strings.Join(names, ", ")
}

// ReadOnly says whether the cache is a union of shard folders (OpenUnion).
func (c *Cache) ReadOnly() bool { return c != nil && c.files != nil }

// Missing returns the runs a read-only cache was asked for and does not
// hold, in the order of their file names.
func (c *Cache) Missing() []Point {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Point, 0, len(c.missing))
	for _, p := range c.missing {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b Point) int { return strings.Compare(a.Key.File(), b.Key.File()) })
	return out
}

// miss records that strategy st's run of sc (sc applied), stopped early
// by stop (nil: none), is not held.
func (c *Cache) miss(key RunKey, sc *scenarios.Scenario, st *scenarios.Strategy, stop func(string, Watch) bool) {
	one := *sc
	one.Strategies = []scenarios.Strategy{*st}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.missing[key.File()] = Point{Key: key, scenario: &one, stopWhen: stop}
}
