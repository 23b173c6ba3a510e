package main

import (
	"fmt"
	"path/filepath"

	"github.com/simbench/simbench/scenarios"
)

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
