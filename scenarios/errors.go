package scenarios

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Problem is one thing wrong with a scenario file.
type Problem struct {
	// File is the scenario file's path, as given ("builtin:NAME.toml"
	// for a built-in).
	File string
	// Line and Col are 1-based; Col counts characters.
	Line, Col int
	// Key is the dotted key path, with [i] for array entries counted from 0
	// ("strategy[1].retry.base"); empty for a TOML syntax error with no key.
	Key string
	// Message says what is wrong and what to do about it.
	Message string
}

// String formats the problem as FILE:LINE:COL: key.path: message.
func (p Problem) String() string {
	if p.Key == "" {
		return fmt.Sprintf("%s:%d:%d: %s", p.File, p.Line, p.Col, p.Message)
	}
	return fmt.Sprintf("%s:%d:%d: %s: %s", p.File, p.Line, p.Col, p.Key, p.Message)
}

// Error is what loading an invalid scenario returns: every problem found, in
// file order. Use errors.As to get at it.
type Error struct {
	// Problems are the problems found, in file order (at least one).
	Problems []Problem
}

// Error returns one problem per line.
func (e *Error) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

func (e *Error) sort() {
	slices.SortStableFunc(e.Problems, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col))
	})
}
