package scenarios

import (
	"fmt"
	"os"
	"strings"

	"github.com/simbench/simbench/scenarios/internal/suggest"
)

// Suggest adds "did you mean NAME?" to err, the error Open gave for arg,
// when arg is neither a file nor a built-in scenario but is within two
// edits of a built-in name; otherwise it returns err as it is.
func Suggest(arg string, err error) error {
	if _, statErr := os.Stat(arg); statErr == nil || len(arg) > 64 {
		return err
	}
	name := strings.TrimSuffix(arg, ".toml")
	best, bestD := "", 3
	for _, info := range List() {
		if info.Name == name {
			return err // a built-in that did not load: its problems say why
		}
		if d := suggest.Distance(name, info.Name); d < bestD {
			best, bestD = info.Name, d
		}
	}
	if best == "" {
		return err
	}
	return fmt.Errorf("%w; did you mean %s?", err, best)
}
