package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/simbench/simbench/sim"
)

// cacheEnv names the environment variable that sets --cache-dir.
const cacheEnv = "SIMBENCH_CACHE"

// cacheFlags are the run cache's flags, shared by run, sweep and
// recommend: a run of one strategy at one seed simulated by one of them is
// read back by the others (sim.Cache).
type cacheFlags struct {
	CacheDir string `placeholder:"DIR" env:"SIMBENCH_CACHE" help:"Where finished runs are kept, so that run, sweep and recommend simulate each run once between them (default: simbench under the user cache directory, such as ~/.cache/simbench)."`
	NoCache  bool   `help:"Neither read nor write the run cache: simulate every run."`

	cache *sim.Cache // tests: the cache to use, whatever the flags say
}

// open returns the run cache the flags ask for (nil with --no-cache, or
// when no cache directory can be found, said on warn), keyed by this
// binary's cacheVersion. Entries it ignores or cannot write are reported on
// warn.
func (f cacheFlags) open(warn io.Writer) *sim.Cache {
	if f.cache != nil {
		return f.cache
	}
	if f.NoCache {
		return nil
	}
	dir := f.CacheDir
	if dir == "" {
		// Kong sets the flag from the environment; a command built
		// without kong (a test) reads it here too.
		dir = os.Getenv(cacheEnv)
	}
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			fmt.Fprintf(warn, "simbench: warning: no run cache (%v); set --cache-dir or %s to keep runs between commands\n", err, cacheEnv)
			return nil
		}
		dir = filepath.Join(base, "simbench")
	}
	v, err := cacheVersion()
	if err != nil {
		fmt.Fprintf(warn, "simbench: warning: no run cache: this build names no version and its executable cannot be read (%v)\n", err)
		return nil
	}
	return sim.NewCache(dir, v, func(msg string) { fmt.Fprintf(warn, "simbench: warning: %s\n", msg) })
}

// cacheVersion is the version that keys the run cache: simbenchVersion,
// and for a build that does not name its code (devel, or a tree with
// uncommitted changes) the SHA-256 of the executable too, so that a
// rebuilt binary never reads the runs of the one before; an error when
// the executable cannot be read.
func cacheVersion() (string, error) {
	v := simbenchVersion()
	if v != "devel" && !strings.HasSuffix(v, "+modified") {
		return v, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	f, err := os.Open(exe)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return v + "+" + hex.EncodeToString(h.Sum(nil)[:8]), nil
}

// privateCache returns a cache of runs that only this process reads and
// writes, in a new temporary folder (returned, for the caller to remove),
// or nil when no folder can be made. A run without the run cache
// (--no-cache) keeps its comparison's runs there, so that its decision
// reads the runs it shares with the comparison (the strategies as written,
// at the first seed) instead of simulating them again: the same run gives
// the same figures bit for bit (sim.Cache), and no other command sees them.
func privateCache() (*sim.Cache, string) {
	dir, err := os.MkdirTemp("", "simbench-run-")
	if err != nil {
		return nil, ""
	}
	return sim.NewCache(dir, "private", nil), dir
}
