package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/simbench/simbench/scenarios"
)

// ValidateCmd checks scenario files and built-in scenarios without running
// them, reporting every problem of every file.
type ValidateCmd struct {
	Scenarios []string `arg:"" name:"file|name" predictor:"scenario" help:"Scenario files, or names of built-in scenarios."`

	Out io.Writer `kong:"-"` // where the report goes (nil: standard output)
}

// Run prints "NAME: ok" for each valid scenario and every problem of each
// invalid one, one per line as FILE:LINE:COL: key.path: message. It returns
// an error with exit code 2 when any scenario is invalid or missing.
func (c *ValidateCmd) Run() error {
	out := c.Out
	if out == nil {
		out = os.Stdout
	}
	invalid := 0
	for _, arg := range c.Scenarios {
		_, err := scenarios.Open(arg)
		var bad *scenarios.Error
		switch {
		case err == nil:
			fmt.Fprintf(out, "%s: ok\n", arg)
			continue
		case errors.As(err, &bad):
			fmt.Fprintln(out, bad.Error())
		default:
			fmt.Fprintf(out, "%s: %v\n", arg, scenarios.Suggest(arg, err))
		}
		invalid++
	}
	if invalid > 0 {
		return invalidScenariosError{invalid: invalid, total: len(c.Scenarios)}
	}
	return nil
}

// invalidScenariosError ends `simbench validate` with exit code 2 (invalid
// input), after the problems have been printed.
type invalidScenariosError struct{ invalid, total int }

func (e invalidScenariosError) Error() string {
	if e.invalid == 1 {
		return fmt.Sprintf("1 of %s is invalid", plural(e.total, "scenario"))
	}
	return fmt.Sprintf("%d of %d scenarios are invalid", e.invalid, e.total)
}

// ExitCode tells main to exit with 2.
func (invalidScenariosError) ExitCode() int { return exitInvalid }
