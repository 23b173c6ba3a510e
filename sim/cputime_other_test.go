//go:build !unix

package sim

import "time"

// processStart anchors cpuTime where the process's CPU time cannot be read.
var processStart = time.Now()

// cpuTime stands in for the process's CPU time where getrusage is missing:
// the wall time since the test binary started, so that CPU-second figures
// read as wall-second figures there.
func cpuTime() time.Duration { return time.Since(processStart) }

// peakRSS reports no peak resident set where getrusage is missing.
func peakRSS() (uint64, bool) { return 0, false }
