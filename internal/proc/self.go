//go:build unix

package proc

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// SelfCPU returns the CPU time this process has spent so far: the user and
// system time of every thread, the garbage collector's included. It
// panics when getrusage fails, which it does not for the calling process.
func SelfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// SelfPeakRSS returns this process's peak resident set in bytes (VmHWM in
// /proc/self/status); ok is false where Linux's /proc does not say.
func SelfPeakRSS() (bytes uint64, ok bool) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(data)) {
		if v, found := strings.CutPrefix(line, "VmHWM:"); found {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err == nil
		}
	}
	return 0, false
}
