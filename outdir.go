package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/simbench/simbench/scenarios"
)

// removeStale removes from dir the files of names, the outputs a command
// may write, that this run did not write (written): a figure an earlier run
// drew, such as sweep.png before --no-recommend, must not pass for this
// run's. Files simbench never writes are left alone.
func removeStale(dir string, names, written []string) error {
	for _, n := range names {
		if slices.Contains(written, n) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing %s, an earlier run's output: %w", filepath.Join(dir, n), err)
		}
	}
	return nil
}

// outDir is the folder a command writes to: --out when given (the
// user's own choice), else out/NAME+suffix under the working directory.
// name is the scenario's, which the loader has checked against
// scenarios.ScenarioNameProblem; it is checked again here, where it
// becomes a path, so that no scenario can put its results anywhere but
// below out/.
func outDir(flag, name, suffix string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	dir := filepath.Join("out", name+suffix)
	if msg := scenarios.ScenarioNameProblem(name); msg != "" || !filepath.IsLocal(dir) {
		return "", codedError{fmt.Errorf("scenario name %q cannot name a folder under out/ (%s); rename the scenario or give --out", name, msg), exitInvalid}
	}
	return dir, nil
}
