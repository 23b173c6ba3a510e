package atomicfile

import (
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
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
	tests := []struct{ give, want string }{
		{"bounded-64", "bounded-64"},
		{"tier3.v2", "tier3.v2"},
		{"a b/c", "a_b_c-" + hash32("a b/c")},
		{".hidden.", "hidden-" + hash32(".hidden.")},
		{"..", hash32("..")},
		{"../../x", "x-" + hash32("../../x")},
		{"é", hash32("é")},
		{strings.Repeat("a", 300), strings.Repeat("a", MaxSafeName-9) + "-" + hash32(strings.Repeat("a", 300))},
	}
	for _, tt := range tests {
		if got := SafeName(tt.give); got != tt.want {
			t.Errorf("SafeName(%q) = %q, want %q", tt.give, got, tt.want)
		}
	}
	// Names that differ only in what was replaced map apart.
	if SafeName("a/b") == SafeName("a_b") || SafeName("a/b") == SafeName("a:b") {
		t.Errorf("a/b, a_b and a:b share a file name: %s, %s, %s", SafeName("a/b"), SafeName("a_b"), SafeName("a:b"))
	}
}

// FuzzSafeName: whatever the name, the result is a safe, local file name
// of at most MaxSafeName bytes that SafeName keeps as it is.
func FuzzSafeName(f *testing.F) {
	for _, s := range []string{"", "..", "a/b", "\x00", "bounded-8", strings.Repeat("é", 100)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := SafeName(s)
		if !safe(got) || !filepath.IsLocal(got) || SafeName(got) != got {
			t.Fatalf("SafeName(%q) = %q", s, got)
		}
	})
}

func hash32(s string) string {
	h := fnv.New32a()
	h.Write([]byte(s))
	return fmt.Sprintf("%08x", h.Sum32())
}
