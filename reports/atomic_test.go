package reports

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.md")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(path, []byte("new contents"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "new contents" {
		t.Errorf("read %q, %v; want the new contents", got, err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("%d files left in the directory, want 1", len(entries))
	}
}

func TestWriteFileAtomicFailureLeavesOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.html")
	// A directory in the way: the rename fails.
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(path, "keep"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := WriteFileAtomic(path, []byte("x"), 0o644)
	if err == nil || !strings.Contains(err.Error(), "report.html") {
		t.Errorf("error %v, want one naming the file", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("%d entries left, want only the directory (temporary file not removed?)", len(entries))
	}
	if err := WriteFileAtomic(filepath.Join(dir, "missing", "f"), nil, 0o644); err == nil {
		t.Error("no error for a missing directory")
	}
}

func TestReadResults(t *testing.T) {
	fromFile, err := ReadResults(filepath.Join("testdata", "tier3", "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	fromDir, err := ReadResults(filepath.Join("testdata", "tier3"))
	if err != nil {
		t.Fatal(err)
	}
	if fromFile.Scenario != "tier3" || len(fromFile.Strategies) != 4 || !reflect.DeepEqual(fromFile, fromDir) {
		t.Error("the file and its directory read differently")
	}
}

func TestReadResultsToleratesUnknownFields(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.json")
	data := `{"scenario":"x","seed":7,"future_field":{"a":1},"strategies":[{"name":"s","turns":3,"new_metric":9}]}`
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := ReadResults(path)
	if err != nil {
		t.Fatal(err)
	}
	if r.Scenario != "x" || r.Seed != 7 || len(r.Strategies) != 1 || r.Strategies[0].Turns != 3 {
		t.Errorf("read %+v", r)
	}
}

func TestReadResultsErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"scenario": 3}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{bad, filepath.Join(dir, "missing.json"), dir} {
		if _, err := ReadResults(path); err == nil {
			t.Errorf("%s: no error", path)
		}
	}
}
