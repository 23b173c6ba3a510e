package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"

	"github.com/simbench/simbench/internal/atomicfile"
	"github.com/simbench/simbench/internal/regfile"
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
// holding one, and checks them strictly: types, required fields, nulls,
// ranges and cross-field consistency (see Check), every problem listed at
// once in an *Error naming the file and field. Fields it does not know are
// ignored, so results written by a newer simbench still read. What is not
// a regular file (a FIFO, a device) is refused before it is opened, and a
// file above MaxFileBytes before it is read.
func Read(path string) (*Results, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		path = filepath.Join(path, ResultsFile)
	}
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return decode(path, data)
}

// decode decodes and checks the results file at path, held in data.
func decode(path string, data []byte) (*Results, error) {
	ps := &problems{file: path}
	var r Results
	if checkSchema(path, data, reflect.TypeFor[Results](), required, ps); len(ps.list) == 0 {
		if err := json.Unmarshal(data, &r); err != nil {
			ps.add("", "%v", err)
		} else {
			checkResults(ps, &r)
		}
	}
	if err := ps.err(); err != nil {
		return nil, err
	}
	return &r, nil
}

// readFile reads a results or sweep file: a regular file of at most
// MaxFileBytes.
func readFile(path string) ([]byte, error) {
	data, err := regfile.ReadFile(path, MaxFileBytes)
	var notRegular regfile.NotRegularError
	switch {
	case errors.Is(err, regfile.ErrTooLarge):
		return nil, &Error{Problems: []Problem{{File: path, Message: fmt.Sprintf(
			"larger than %d MiB, the most a results or sweep file may hold; simbench writes far less, so this is not one of its files", MaxFileBytes>>20)}}}
	case errors.As(err, &notRegular):
		return nil, fmt.Errorf("results: %s is %w; give a results.json file or a run's directory", path, err)
	case err != nil:
		return nil, fmt.Errorf("results: %w", err)
	}
	return data, nil
}

// ReadSweep reads a sweep from path: the object `simbench sweep` writes
// (Sweep), or a bare JSON array of points, read as one row with no load
// whose chosen cap and knee are unknown (PointsOnly set; the caller
// chooses them). It checks the file as Read does (see CheckSweep); a sweep
// without a single point is an error.
func ReadSweep(path string) (*Sweep, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return decodeSweep(path, data)
}

// decodeSweep decodes and checks the sweep file at path, held in data.
func decodeSweep(path string, data []byte) (*Sweep, error) {
	ps := &problems{file: path}
	var sw Sweep
	if b := bytes.TrimSpace(data); len(b) > 0 && b[0] == '[' {
		var pts []SweepPoint
		if checkSchema(path, b, reflect.TypeFor[[]SweepPoint](), required, ps); len(ps.list) == 0 {
			if err := json.Unmarshal(b, &pts); err != nil {
				ps.add("", "%v", err)
			}
		}
		sw.Rows, sw.PointsOnly = []SweepRow{{Points: pts}}, true
	} else if checkSchema(path, data, reflect.TypeFor[Sweep](), required, ps); len(ps.list) == 0 {
		if err := json.Unmarshal(data, &sw); err != nil {
			ps.add("", "%v", err)
		}
	}
	if len(ps.list) == 0 {
		checkSweep(ps, &sw)
	}
	if err := ps.err(); err != nil {
		return nil, err
	}
	return &sw, nil
}

var errNoPoints = errors.New("no sweep points")
