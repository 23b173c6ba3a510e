package sim

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/simbench/simbench/internal/atomicfile"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
)

// RunFormat names the format of a cached run's file (RunEntry), version 1.
const RunFormat = "simbench-run/1"

// Cache keeps the results of virtual-time runs on disk, one file per run
// of one strategy at one seed, so that `run`, `sweep` and `recommend`
// simulate each run once between them. A run is known by its RunKey:
// the simbench version, the scenario's digest, the strategy's settings
// (its name too: the name seeds the strategy's random stream), the seed
// and the duration. The same key gives the same figures bit for bit (the
// engine is deterministic), so an entry stands in for the run.
//
// An entry is written atomically (atomicfile.WriteFile) once its run
// finished; an interrupted run is never stored. An entry that does not
// decode, or whose key is not the one asked for (a file from another
// version or another scenario), is ignored, reported through Warn, and
// simulated again. A Cache is safe for concurrent use; the zero value is
// not usable: make one with NewCache.
type Cache struct {
	dir     string
	version string
	warn    func(msg string)

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
	SimbenchVersion string             `json:"simbench_version"`
	ScenarioDigest  string             `json:"scenario_digest"`
	Strategy        scenarios.Strategy `json:"strategy"`
	Seed            uint64             `json:"seed"`
	DurationNs      time.Duration      `json:"duration_ns"`
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
// hdrhistogram-go's own compressed encoding, as the interval logs hold them.
type RunEntry struct {
	Format string                 `json:"format"`
	Key    RunKey                 `json:"key"`
	Result results.StrategyResult `json:"result"`
	// TurnHDR and CallHDR are HDRLatencies' Turn and Call, encoded (the
	// encoding holds no interval: it is the run's, 0 to its duration).
	TurnHDR []byte `json:"turn_hdr"`
	CallHDR []byte `json:"call_hdr"`
}

// entryOf makes the entry of a finished run.
func entryOf(key RunKey, r results.StrategyResult, l HDRLatencies) (*RunEntry, error) {
	turn, err := l.Turn.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return nil, err
	}
	call, err := l.Call.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return nil, err
	}
	return &RunEntry{Format: RunFormat, Key: key, Result: r, TurnHDR: turn, CallHDR: call}, nil
}

// Latencies decodes the entry's histograms.
func (e *RunEntry) Latencies() (HDRLatencies, error) {
	turn, err := hdrhistogram.Decode(e.TurnHDR)
	if err != nil {
		return HDRLatencies{}, fmt.Errorf("turn_hdr: %w", err)
	}
	call, err := hdrhistogram.Decode(e.CallHDR)
	if err != nil {
		return HDRLatencies{}, fmt.Errorf("call_hdr: %w", err)
	}
	// The encoding leaves out the interval, which is the run's: from 0 to
	// its duration.
	for _, h := range []*hdrhistogram.Histogram{turn, call} {
		h.SetStartTimeMs(0)
		h.SetEndTimeMs(e.Key.DurationNs.Milliseconds())
	}
	return HDRLatencies{Strategy: e.Key.Strategy.Name, Seed: e.Key.Seed, Turn: turn, Call: call}, nil
}

// ReadRunEntry reads the run file at path and checks that it is one: its
// format, a key, a result named for the key's strategy, histograms that
// decode. The error names the file.
func ReadRunEntry(path string) (*RunEntry, HDRLatencies, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, HDRLatencies{}, err
	}
	e, l, err := decodeRunEntry(data)
	if err != nil {
		return nil, HDRLatencies{}, fmt.Errorf("%s: %w", path, err)
	}
	return e, l, nil
}

func decodeRunEntry(data []byte) (*RunEntry, HDRLatencies, error) {
	var e RunEntry
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&e); err != nil {
		return nil, HDRLatencies{}, fmt.Errorf("not a simbench run file: %w", err)
	}
	switch {
	case e.Format != RunFormat:
		return nil, HDRLatencies{}, fmt.Errorf("format %q, want %q", e.Format, RunFormat)
	case e.Key.ScenarioDigest == "" || e.Key.Strategy.Name == "" || e.Key.DurationNs <= 0:
		return nil, HDRLatencies{}, errors.New("key: no scenario digest, strategy or duration")
	case e.Result.Name != e.Key.Strategy.Name:
		return nil, HDRLatencies{}, fmt.Errorf("result names strategy %q, the key %q", e.Result.Name, e.Key.Strategy.Name)
	case e.Result.Partial:
		return nil, HDRLatencies{}, errors.New("result is partial")
	}
	l, err := e.Latencies()
	if err != nil {
		return nil, HDRLatencies{}, err
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
func (c *Cache) load(key RunKey) (*results.StrategyResult, HDRLatencies, bool) {
	path := filepath.Join(c.dir, key.File())
	e, l, err := ReadRunEntry(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, HDRLatencies{}, false
	case err != nil:
		c.warn(fmt.Sprintf("ignoring the cached run %v; simulating it again", err))
		return nil, HDRLatencies{}, false
	}
	if !sameKey(e.Key, key) {
		c.warn(fmt.Sprintf("ignoring the cached run %s: it holds another run (strategy %q, seed %d, simbench %s); simulating it again",
			path, e.Key.Strategy.Name, e.Key.Seed, e.Key.SimbenchVersion))
		return nil, HDRLatencies{}, false
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
func (c *Cache) store(key RunKey, r results.StrategyResult, l HDRLatencies) {
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
