package main

import (
	"github.com/alecthomas/kong"
	"github.com/willabides/kongplete"
)

// InstallCompletionsCmd prints the line that turns on tab completion for
// the login shell (bash, zsh or fish). It is kongplete's command without
// its --uninstall flag, which kongplete reads only after printing the
// line, so that it could never do what it says: completion is turned off
// by deleting the line from the shell's startup file.
type InstallCompletionsCmd struct{}

// BeforeApply prints the line and exits 0, before kong reads any flag.
func (*InstallCompletionsCmd) BeforeApply(ctx *kong.Context) error {
	var c kongplete.InstallCompletions
	return c.BeforeApply(ctx)
}
