package reports

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies: reports draws and formats results and nothing more, so
// its build must not pull in the simulator, the fake servers, Redis or
// Prometheus (DESIGN.md's layout). It asks `go list -deps` for the
// package's non-test imports, all the way down.
func TestDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps listed only %q", deps)
	}
	forbidden := []struct{ prefix, why string }{
		{"github.com/redis/", "go-redis"},
		{"github.com/prometheus/", "Prometheus"},
		{"github.com/simbench/simbench/fakeapi", "the fake servers"},
		{"github.com/simbench/simbench/sim", "the simulator"},
		{"github.com/simbench/simbench/decision", "the decision (it imports the simulator)"},
		{"github.com/simbench/simbench/sched", "the scheduler"},
	}
	for _, d := range deps {
		for _, f := range forbidden {
			if d == f.prefix || strings.HasPrefix(d, f.prefix+"/") || (strings.HasSuffix(f.prefix, "/") && strings.HasPrefix(d, f.prefix)) {
				t.Errorf("reports depends on %s (%s)", d, f.why)
			}
		}
	}
}
