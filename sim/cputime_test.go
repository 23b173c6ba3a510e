//go:build unix

package sim

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time the process has spent so far: user and
// system time of every thread, the garbage collector's included.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
