package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFileReplacesWhole(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.json")
	if err := WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	info, _ := os.Stat(path)
	if err != nil || string(got) != "new" || info.Mode().Perm() != 0o600 {
		t.Errorf("read %q (%v), mode %v; want new, 0600", got, err, info.Mode())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d files left in the directory, want 1", len(entries))
	}
	if err := WriteFile(filepath.Join(dir, "missing", "f"), nil, 0o644); err == nil {
		t.Error("a write into a missing directory succeeded")
	}
}

func TestSafeName(t *testing.T) {
	for in, want := range map[string]string{"bounded-64": "bounded-64", "a b/c": "a_b_c", ".hidden.": "hidden", "é": "_"} {
		if got := SafeName(in); got != want {
			t.Errorf("SafeName(%q) = %q, want %q", in, got, want)
		}
	}
}
