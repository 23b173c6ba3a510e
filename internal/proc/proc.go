// Package proc reads what the system says of a process: another's state
// and process group from Linux's /proc, and so whether it still runs; this
// process's CPU time and peak resident memory, which benchmarks report.
package proc

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Stat reads process pid's state letter ('R', 'S', 'Z', …) and process
// group from /proc/<pid>/stat; ok is false when it cannot (the process is
// gone, or there is no /proc).
func Stat(pid int) (state byte, pgid int, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	// pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 3 || len(f[0]) != 1 {
		return 0, 0, false
	}
	g, err := strconv.Atoi(f[2])
	return f[0][0], g, err == nil
}

// Running reports whether process pid runs: it exists and is not a
// zombie (a process that exited and that its parent has not collected).
// Without /proc a zombie counts as running.
func Running(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	state, _, ok := Stat(pid)
	return !ok || state != 'Z'
}
