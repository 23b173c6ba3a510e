package reports

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/simbench/simbench/internal/atomicfile"
	"github.com/simbench/simbench/sim"
)

// WriteFileAtomic writes data to path so that readers see either the old
// file or the whole new one, never a part: it writes a temporary file in
// the same directory, syncs it, sets perm and renames it over path. On
// error the temporary file is removed and path is left as it was.
func WriteFileAtomic(path string, data []byte, perm fs.FileMode) error {
	if err := atomicfile.WriteFile(path, data, perm); err != nil {
		return fmt.Errorf("reports: %w", err)
	}
	return nil
}

// ResultsFile is the name of the results file in a run's directory.
const ResultsFile = "results.json"

// ReadResults reads results from path: a results.json file, or a directory
// holding one. Fields it does not know are ignored, so results written by a
// newer simbench still read.
func ReadResults(path string) (*sim.Results, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		path = filepath.Join(path, ResultsFile)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reports: %w", err)
	}
	var r sim.Results
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("reports: reading %s: %w", path, err)
	}
	return &r, nil
}
