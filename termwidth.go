package main

import (
	"os"
	"strconv"

	"golang.org/x/term"
)

// terminalWidth is the width, in columns, the terminal table is laid out
// for: $COLUMNS when it holds a width, else the terminal's own when stdout
// is one (tty), else 0 (unknown: the wide layout, as for a file or pipe).
func terminalWidth(tty bool) int {
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	if !tty {
		return 0
	}
	if w, _, err := term.GetSize(int(os.Stdout.Fd())); err == nil && w > 0 {
		return w
	}
	return 0
}
