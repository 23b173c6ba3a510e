//go:build linux

package proc

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestSelfPeakRSSCountsTouchedMemory(t *testing.T) {
	const size = 64 << 20
	buf := make([]byte, size)
	for i := 0; i < size; i += 4096 {
		buf[i] = 1 // touch every page, so that it is resident
	}
	peak, ok := SelfPeakRSS()
	if !ok || peak < size {
		t.Errorf("peak RSS %d bytes (ok %v), want at least the %d touched", peak, ok, size)
	}
	if buf[size-4096] != 1 {
		t.Fatal("the buffer lost its pages")
	}
}

// /proc/self/stat counts the same user and system time in clock ticks
// (USER_HZ, 100 a second on Linux), truncated: SelfCPU lies between the
// ticks read before it and those read after it, plus a tick of each.
func TestSelfCPUAgreesWithProcStat(t *testing.T) {
	const tick = 10 * time.Millisecond
	for x := 0; SelfCPU() < 50*time.Millisecond; x++ { // some CPU time to compare
		_ = x * x
	}
	before := statCPU(t)
	got := SelfCPU()
	after := statCPU(t)
	if got < before || got > after+2*tick {
		t.Errorf("SelfCPU %v, /proc/self/stat %v before and %v after", got, before, after)
	}
}

// statCPU reads utime + stime of /proc/self/stat, fields 14 and 15 (after
// the parenthesised command name), in ticks of 10 ms.
func statCPU(t *testing.T) time.Duration {
	t.Helper()
	data, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
	// f[0] is field 3 (the state), so utime, field 14, is f[11].
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("utime %q stime %q", f[11], f[12])
	}
	return time.Duration(u+s) * 10 * time.Millisecond
}
