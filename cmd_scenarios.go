package main

import (
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/simbench/simbench/scenarios"
)

// ScenariosCmd lists the scenarios built into the binary.
type ScenariosCmd struct {
	Out io.Writer `kong:"-"` // where the list goes (nil: standard output)
}

// Run prints one built-in scenario per line: its name, then its one-line
// description, aligned.
func (c *ScenariosCmd) Run() error {
	out := c.Out
	if out == nil {
		out = os.Stdout
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	for _, info := range scenarios.List() {
		fmt.Fprintf(tw, "%s\t%s\n", info.Name, info.Description)
	}
	return tw.Flush()
}
