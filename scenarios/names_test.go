package scenarios

import (
	"strings"
	"testing"
)

// TestDefaultNameIsSafe: a file without a name key is named for the file,
// made a safe folder name when the file's name is not one.
func TestDefaultNameIsSafe(t *testing.T) {
	body := "duration = \"1m\"\n[workload]\nsessions = 1\ncalls = [ { tool = \"t\" } ]\n[services.s]\nrps = 1\n[tools.t]\nservice = \"s\"\n[[strategy]]\nname = \"a\"\n"
	for file, want := range map[string]string{"dir/tier3-copy.toml": "tier3-copy", "dir/my run (2).toml": "my_run__2_-"} {
		sc, err := Parse(file, []byte(body))
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if !strings.HasPrefix(sc.Name, want) || ScenarioNameProblem(sc.Name) != "" {
			t.Errorf("%s: named %q; want a safe name starting %q", file, sc.Name, want)
		}
	}
}
