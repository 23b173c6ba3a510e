package gate

import (
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// ParseFile parses the go test -bench output in the file name, or in
// stdin when name is "-" (named "stdin" in messages).
func ParseFile(name string, stdin io.Reader) (*Set, error) {
	if name == "-" {
		return Parse(stdin, "stdin")
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("gate: %w", err)
	}
	defer f.Close()
	return Parse(f, name)
}

// ParsePercent reads a percentage such as Options.MinChange is given in,
// "10%" or "10", as the fraction 0.10; it must be above 0 and finite.
func ParsePercent(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%")), 64)
	if err != nil || !(v > 0) || math.IsInf(v, 1) {
		return 0, fmt.Errorf("%q is not a percentage above 0 (10%% or 10)", s)
	}
	return v / 100, nil
}
