//go:build !unix

package proc

import "time"

// processStart anchors SelfCPU where the process's CPU time cannot be read.
var processStart = time.Now()

// SelfCPU stands in for the process's CPU time where getrusage is missing:
// the wall time since the process started, so that CPU-second figures read
// as wall-second figures there.
func SelfCPU() time.Duration { return time.Since(processStart) }

// SelfPeakRSS reports no peak resident set where /proc is missing.
func SelfPeakRSS() (bytes uint64, ok bool) { return 0, false }
