package scenarios

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// hostileAlloc bounds the memory one hostile file may cost to load: bytes
// allocated in all, which does not depend on timing.
const hostileAlloc = 64 << 20

// TestHostile loads every file of testdata/hostile, and the hostile files
// too big to commit, generated here: each must be refused with an error
// that names the file and says what is wrong, and loading it must allocate
// less than 64 MiB. A file's first line, "# want: TEXT", gives text its
// error must contain.
func TestHostile(t *testing.T) {
	files, err := filepath.Glob("testdata/hostile/*.toml")
	if err != nil || len(files) < 20 {
		t.Fatalf("testdata/hostile holds %d files (%v); want the whole corpus", len(files), err)
	}
	type hostile struct{ path, want string }
	var cases []hostile
	for _, f := range files {
		cases = append(cases, hostile{f, wantLine(t, f)})
	}
	dir := t.TempDir()
	for _, g := range generatedHostile() {
		path := filepath.Join(dir, g.name)
		if err := os.WriteFile(path, []byte(g.body), 0o644); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, hostile{path, g.want})
	}
	for _, c := range cases {
		t.Run(filepath.Base(c.path), func(t *testing.T) {
			var err error
			alloc := allocated(func() { _, err = Load(c.path) })
			switch {
			case err == nil:
				t.Fatal("loaded; want it refused")
			case !strings.Contains(err.Error(), c.path):
				t.Errorf("the error does not name the file:\n%.500s", err)
			case !strings.Contains(err.Error(), c.want):
				t.Errorf("error:\n%.1000s\nwant it to contain %q", err, c.want)
			}
			if alloc > hostileAlloc {
				t.Errorf("loading allocated %d MiB; want under %d MiB", alloc>>20, hostileAlloc>>20)
			}
		})
	}
}

// generated is a hostile file written by the test.
type generated struct{ name, body, want string }

// generatedHostile returns the hostile files too large to commit.
func generatedHostile() []generated {
	var unknown, chained strings.Builder
	unknown.WriteString("duration = \"1m\"\n[services.s]\n[[strategy]]\nname = \"a\"\n")
	for i := range 3000 {
		fmt.Fprintf(&unknown, "[tools.tool%04d]\nservice = \"s\"\n", i)
	}
	unknown.WriteString("[workload]\nsessions = 1\ncalls = [\n")
	for i := range 3000 {
		fmt.Fprintf(&unknown, "  { tool = \"missing%04d\" },\n", i)
	}
	unknown.WriteString("]\n")
	chained.WriteString(chainedGroups(100_000))
	return []generated{
		{"nested-arrays.toml", "a = " + strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000) + "\n", "nests deeper than 8 levels"},
		{"nested-tables.toml", "a = " + strings.Repeat("{b=", 50_000) + "1" + strings.Repeat("}", 50_000) + "\n", "nests deeper than 8 levels"},
		{"dotted-key.toml", strings.Repeat("a.", 50_000) + "b = 1\n", "nests deeper than 8 levels"},
		{"deep-header.toml", "[" + strings.Repeat("a.", 50_000) + "b]\nc = 1\n", "nests deeper than 8 levels"},
		{"unknown-tools.toml", unknown.String(), `workload.calls[2999].tool: unknown tool "missing2999"`},
		{"chained-groups.toml", chained.String(), "larger than 256 KiB"},
		{"too-large.toml", strings.Repeat("# padding\n", MaxFileBytes/10+1), "larger than 256 KiB"},
	}
}

// chainedGroups returns a scenario whose turn has n groups, each after the
// one before: n tools, n references to them and n-1 dependencies.
func chainedGroups(n int) string {
	var b strings.Builder
	b.WriteString("duration = \"1m\"\n[services.s]\n[[strategy]]\nname = \"a\"\n")
	for i := range n {
		fmt.Fprintf(&b, "[tools.t%d]\nservice = \"s\"\n", i)
	}
	b.WriteString("[workload]\nsessions = 1\ncalls = [\n  { tool = \"t0\", count = 0 },\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "  { tool = \"t%d\", count = 0, after = [\"t%d\"] },\n", i, i-1)
	}
	b.WriteString("]\n")
	return b.String()
}

// wantLine returns the text after "# want: " on file's first line.
func wantLine(t *testing.T, file string) string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan()
	want, ok := strings.CutPrefix(sc.Text(), "# want: ")
	if !ok || want == "" {
		t.Fatalf("%s does not open with a # want: line", file)
	}
	return want
}

// allocated returns the bytes f allocates on the heap.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
