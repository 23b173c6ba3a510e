// Package hostile holds the damaged and replaced files the tests of a
// reader of untrusted files try it with, and the guard that fails such a
// test when a read hangs or allocates without bound. Only tests import it.
package hostile

import (
	"bytes"
	"encoding/json"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// ReadGuard is how long one hostile file may keep a reader before the
// test fails: a guard against a hang (a FIFO read blocks forever, /dev/zero
// never ends), far above the milliseconds a refusal takes.
const ReadGuard = 2 * time.Second

// MaxAlloc is the most memory one hostile file may make a reader
// allocate, in bytes.
const MaxAlloc = 100 << 20

// Damage is one way a file read back can be damaged or replaced: Spoil
// turns the good file at path (whose bytes are good) into the bad one.
type Damage struct {
	// Name names the damage in subtest names; Spoil writes it over the
	// file; Want is a substring the reader's error must hold.
	Name  string
	Spoil func(t *testing.T, path string, good []byte)
	Want  string // in the error
}

// Files are the damages every file read back is tried with.
var Files = []Damage{
	{"truncated", func(t *testing.T, path string, good []byte) { WriteFile(t, path, good[:len(good)/2]) }, ""},
	{"empty", func(t *testing.T, path string, good []byte) { WriteFile(t, path, nil) }, ""},
	{"fifo", func(t *testing.T, path string, good []byte) {
		os.Remove(path)
		if err := syscall.Mkfifo(path, 0o644); err != nil {
			t.Skip("no named pipes here:", err)
		}
	}, "named pipe"},
	{"dev-zero", func(t *testing.T, path string, good []byte) {
		os.Remove(path)
		if err := os.Symlink("/dev/zero", path); err != nil {
			t.Skip("no symbolic links here:", err)
		}
	}, "device"},
	{"directory", func(t *testing.T, path string, good []byte) {
		os.Remove(path)
		if err := os.Mkdir(path, 0o755); err != nil {
			t.Fatal(err)
		}
	}, "directory"},
	{"2GB-sparse", func(t *testing.T, path string, good []byte) {
		if err := os.Truncate(path, 2<<30); err != nil {
			t.Skip("no sparse files here:", err)
		}
	}, "larger than 64 MiB"},
}

// Guarded runs read, failing the test when it has not returned within
// ReadGuard or allocated more than MaxAlloc bytes, and
// returns its error.
func Guarded(t *testing.T, read func() error) error {
	t.Helper()
	done := make(chan error, 1)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	go func() { done <- read() }()
	select {
	case err := <-done:
		runtime.ReadMemStats(&after)
		d := after.TotalAlloc - before.TotalAlloc
		if d > MaxAlloc {
			t.Errorf("the read allocated %d MiB, want at most %d", d>>20, MaxAlloc>>20)
		}
		t.Logf("%d KiB allocated: %v", d>>10, err)
		return err
	case <-time.After(ReadGuard):
		t.Fatalf("the read did not return within %v", ReadGuard)
		return nil
	}
}

// WriteFile replaces the file at path with data.
func WriteFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// EditJSON sets the field at the dotted path in the JSON at path to v,
// written as raw JSON text (so that NaN can be written as a JSON reader
// would meet it).
func EditJSON(t *testing.T, path string, good []byte, field, v string) {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(good, &doc); err != nil {
		t.Fatal(err)
	}
	keys := strings.Split(field, ".")
	m := doc
	for _, k := range keys[:len(keys)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			if arr, isArr := m[k].([]any); isArr && len(arr) > 0 {
				next, _ = arr[0].(map[string]any) // the first strategy
			}
			if next == nil {
				t.Fatalf("%s: no object %q in %s", path, k, field)
			}
		}
		m = next
	}
	const mark = "\"the edited field\""
	m[keys[len(keys)-1]] = json.RawMessage(mark)
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	WriteFile(t, path, bytes.Replace(data, []byte(mark), []byte(v), 1))
}

// HugeHistogram is an empty histogram, compressed to a few bytes, whose
// layout (5 significant digits up to 2^62) takes about 50 MB once decoded.
func HugeHistogram(t *testing.T) []byte {
	t.Helper()
	b, err := hdrhistogram.New(1, 1<<62, 5).Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// D returns the damage named name that spoil does, whose error says want.
func D(name string, spoil func(t *testing.T, path string, good []byte), want string) Damage {
	return Damage{Name: name, Spoil: spoil, Want: want}
}
