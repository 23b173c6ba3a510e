package regfile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestRefusesWhatIsNotARegularFile: a directory and a named pipe are
// refused at once (the pipe without blocking), a file above the limit
// before it is read, and a regular file within it is read whole.
func TestRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		give  string
		limit int64
		want  string
	}{
		{dir, 10, "a directory, not a file"},
		{fifo, 10, "a named pipe (FIFO), not a regular file"},
		{"/dev/null", 10, "a device, not a regular file"},
		{file, 4, "file too large: 5 bytes, above the 4 this file may hold"},
	}
	for _, tt := range tests {
		_, err := ReadFile(tt.give, tt.limit)
		if err == nil || err.Error() != tt.want {
			t.Errorf("ReadFile(%s, %d) = %v, want %q", tt.give, tt.limit, err, tt.want)
		}
	}
	if _, err := ReadFile(fifo, 10); !errors.As(err, new(NotRegularError)) {
		t.Errorf("a FIFO's error %v is not a NotRegularError", err)
	}
	if data, err := ReadFile(file, 5); err != nil || string(data) != "12345" {
		t.Errorf("ReadFile = %q, %v", data, err)
	}
}
