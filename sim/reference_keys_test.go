package sim

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/simbench/simbench/scenarios"
)

// formatKey is a key's path with its array indices dropped and the names
// a file chooses (services, routes, tools, a strategy's thresholds, a service's
// projects, the keys of check's gateway) as *: "services.llm.faults.error_rate" gives
// "services.*.faults.error_rate".
func formatKey(path string) string {
	segs := strings.Split(arrayIndex.ReplaceAllString(path, ""), ".")
	if len(segs) >= 3 && (segs[0] == "services" || segs[0] == "tools" || segs[0] == "routes" || segs[0] == "thresholds") {
		segs[1] = "*"
	}
	if len(segs) >= 5 && segs[0] == "services" && segs[2] == "projects" {
		segs[3] = "*"
	}
	if len(segs) >= 5 && segs[0] == "check" && segs[1] == "gateway" && segs[2] == "keys" {
		segs[3] = "*" // the API keys a gateway declares limits for
	}
	return strings.Join(segs, ".")
}

var arrayIndex = regexp.MustCompile(`\[[0-9]+\]`)

// keysOf returns the format keys file data sets, or the load's error.
// With all, it returns every key the decoder accepts there, set or not.
func keysOf(name string, data []byte, all bool) (map[string]bool, error) {
	keys := map[string]bool{}
	_, err := scenarios.ParseKeys(name, data, func(key string, set bool, _ []string) {
		if set || all {
			keys[formatKey(key)] = true
		}
	})
	return keys, err
}

// notGenerated are the keys the decoder accepts that genScenario never
// sets, each with why.
var notGenerated = map[string]string{
	// A subagent's model call ends its subagent when it fails: the
	// decoder reads these keys to refuse them.
	"workload.subagents.llm.success": "refused under subagents",
	"workload.subagents.llm.retries": "refused under subagents",
}

// TestReferenceGeneratorKeys lists the scenario format's keys, every key
// the decoder accepts in the format's reference inputs (the files that set
// every key, scenarios/testdata/full*.toml) and in the built-in
// scenarios, and fails when genScenario never sets one of them in 1,000
// examples: a key added to the format must be added to the generator, so
// that the differential test (TestReferenceMatches) covers it.
func TestReferenceGeneratorKeys(t *testing.T) {
	files, err := filepath.Glob("../scenarios/*.toml")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "../scenarios/testdata/full.toml", "../scenarios/testdata/full-open.toml")
	format := map[string]bool{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		keys, err := keysOf(f, data, true)
		if err != nil {
			t.Fatal(err)
		}
		for k := range keys {
			format[k] = true
		}
	}
	if len(format) < 250 {
		t.Fatalf("the format has %d keys; ParseKeys is not reporting them", len(format))
	}

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, genEmpiricalFile), []byte(genEmpirical), 0o600); err != nil {
		t.Fatal(err)
	}
	gen := rapid.Custom(genScenario)
	generated := map[string]bool{}
	for i := range 1000 {
		file := gen.Example(i)
		keys, err := keysOf(filepath.Join(dir, "generated.toml"), []byte(file), false)
		if err != nil {
			t.Fatalf("example %d does not load: %v\n%s", i, err, file)
		}
		for k := range keys {
			generated[k] = true
		}
	}
	var missing []string
	for k := range format {
		if !generated[k] && notGenerated[k] == "" {
			missing = append(missing, k)
		}
	}
	slices.Sort(missing)
	for _, k := range missing {
		t.Errorf("genScenario never sets %s; add it to the generator", k)
	}
}
