package sched

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestMain fails the package when a goroutine started by this package's
// code (the Runner's, or a test's) is still running after the tests: every
// Runner must be closed and every attempt must return. It is the standard
// library's stand-in for goleak, which the Runner's own goroutine tests use
// (internal/tests/sched in the repository's root module): the sched module
// requires nothing, not even for its tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if left := leftover(); left != "" {
			fmt.Fprintf(os.Stderr, "goroutines left running after the tests:\n\n%s\n", left)
			code = 1
		}
	}
	os.Exit(code)
}

// leftover returns the stacks of the goroutines that this package created
// and that are still running, after giving them up to a second to return
// (a closed Runner's goroutines end soon after Close, not at once).
func leftover() string {
	const creator = "created by github.com/simbench/simbench/sched."
	var left []string
	for range 200 {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		left = left[:0]
		for _, g := range strings.Split(string(buf), "\n\n") {
			if strings.Contains(g, creator) {
				left = append(left, g)
			}
		}
		if len(left) == 0 {
			return ""
		}
		time.Sleep(5 * time.Millisecond)
	}
	return strings.Join(left, "\n\n")
}
