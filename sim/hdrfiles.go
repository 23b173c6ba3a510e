package sim

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/simbench/simbench/internal/atomicfile"
	"github.com/simbench/simbench/internal/collect"
)

// HDRSet gathers the latency distributions a run hands to Options.HDR and
// writes them as interval logs, a turn and a call log per strategy. Its
// Add is Options.HDR; it is safe for concurrent use. The zero value is an
// empty set.
type HDRSet struct {
	mu sync.Mutex
	ls []collect.HDRLatencies
}

// Add records one strategy's latencies from one run (one seed).
func (s *HDRSet) Add(l collect.HDRLatencies) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ls = append(s.ls, l)
}

// MakeHDRDir makes sure dir is a directory HDRSet.WriteFiles can write
// into, creating it when missing; an error says why not (such as a file in
// its place).
func MakeHDRDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return errors.New("not a directory")
	}
	return nil
}

// WriteFiles writes DIR/<strategy>-turn.hlog and DIR/<strategy>-call.hlog
// for every strategy added, one interval per seed in the order they ran,
// each file written atomically. Strategy names are made safe for file
// names (atomicfile.SafeName).
func (s *HDRSet) WriteFiles(dir string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	type kinds struct{ turn, call []*hdrhistogram.Histogram }
	var order []string
	by := map[string]*kinds{}
	for _, l := range s.ls {
		k := by[l.Strategy]
		if k == nil {
			k = &kinds{}
			by[l.Strategy] = k
			order = append(order, l.Strategy)
		}
		k.turn = append(k.turn, l.Turn)
		k.call = append(k.call, l.Call)
	}
	for _, name := range order {
		k := by[name]
		for _, f := range []struct {
			kind, what string
			hs         []*hdrhistogram.Histogram
		}{{"turn", "turn latency", k.turn}, {"call", "tool call latency", k.call}} {
			var buf bytes.Buffer
			what := fmt.Sprintf("%s of strategy %s", f.what, name)
			if err := collect.WriteHDRLog(&buf, what, name+"-"+f.kind, f.hs); err != nil {
				return err
			}
			path := filepath.Join(dir, atomicfile.SafeName(name)+"-"+f.kind+".hlog")
			if err := atomicfile.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				return fmt.Errorf("sim: %w", err)
			}
		}
	}
	return nil
}
