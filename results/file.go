package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/simbench/simbench/internal/atomicfile"
)

// File names in a run's or a sweep's output directory.
const (
	// ResultsFile is the name of the results file in a run's directory.
	ResultsFile = "results.json"
	// SweepFile is the name `simbench sweep` gives its JSON in its output
	// directory; `simbench report DIR` plots it when present.
	SweepFile = "sweep.json"
)

// Write writes res as DIR/results.json, indented and ending in a newline,
// creating DIR when missing. Readers see the old file or the whole new
// one, never a part (atomicfile.WriteFile).
func Write(dir string, res *Results) error {
	return writeJSON(dir, ResultsFile, res)
}

// WriteSweep writes sw as DIR/sweep.json, as Write writes results.json.
func WriteSweep(dir string, sw *Sweep) error {
	return writeJSON(dir, SweepFile, sw)
}

// Encode returns v (a *Results or a *Sweep) as its file holds it:
// indented JSON ending in a newline, the bytes Write and WriteSweep write
// and `run --json` and `sweep --json` print.
func Encode(v any) ([]byte, error) {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	return append(data, '\n'), nil
}

func writeJSON(dir, name string, v any) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data, err := Encode(v)
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	return nil
}

// Read reads results from path: a results.json file, or a directory
// holding one. Fields it does not know are ignored, so results written by
// a newer simbench still read. A file that is not a JSON object is an
// error.
func Read(path string) (*Results, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		path = filepath.Join(path, ResultsFile)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	var r Results
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("results: reading %s: %w", path, err)
	}
	return &r, nil
}

// ReadSweep reads a sweep from path: the object `simbench sweep` writes
// (Sweep), or a bare JSON array of points, read as one row with no load
// whose chosen cap and knee are unknown (PointsOnly set; the caller
// chooses them). A sweep without a single point is an error.
func ReadSweep(path string) (*Sweep, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var sw Sweep
	if b := bytes.TrimSpace(data); len(b) > 0 && b[0] == '[' {
		var pts []SweepPoint
		if err := json.Unmarshal(b, &pts); err != nil {
			return nil, fmt.Errorf("reading sweep %s: %w", path, err)
		}
		sw.Rows, sw.PointsOnly = []SweepRow{{Points: pts}}, true
	} else if err := json.Unmarshal(data, &sw); err != nil {
		return nil, fmt.Errorf("reading sweep %s: %w", path, err)
	}
	n := 0
	for _, r := range sw.Rows {
		n += len(r.Points)
	}
	if n == 0 {
		return nil, fmt.Errorf("reading sweep %s: %w", path, errNoPoints)
	}
	return &sw, nil
}

var errNoPoints = errors.New("no sweep points")
