// Package regfile opens and reads files that must be regular files:
// devices, named pipes, sockets and directories are refused before they
// are opened, so that a FIFO cannot block a reader and /dev/zero cannot
// fill memory, and a file larger than the caller's cap is refused before
// it is read.
package regfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ErrTooLarge is wrapped by the error for a file above the cap ReadFile
// was given.
var ErrTooLarge = errors.New("file too large")

// NotRegularError says what a file is when it is not a regular file, as
// the end of a sentence that starts "it is" (What: "a directory", say).
type NotRegularError struct{ What string }

func (e NotRegularError) Error() string { return e.What }

// Check says what is wrong with a file that is not a regular file, as a
// NotRegularError; nil for a regular file.
func Check(fi fs.FileInfo) error {
	m := fi.Mode()
	switch {
	case m.IsRegular():
		return nil
	case m.IsDir():
		return NotRegularError{"a directory, not a file"}
	case m&fs.ModeNamedPipe != 0:
		return NotRegularError{"a named pipe (FIFO), not a regular file"}
	case m&fs.ModeSocket != 0:
		return NotRegularError{"a socket, not a regular file"}
	case m&fs.ModeDevice != 0:
		return NotRegularError{"a device, not a regular file"}
	default:
		return NotRegularError{fmt.Sprintf("not a regular file (mode %v)", m)}
	}
}

// Open opens the regular file at name for reading. What is not a regular
// file is refused before it is opened, and again once open (it may have
// been swapped in between); it is opened without blocking, so a FIFO
// swapped in cannot hang the open. The error for a file that is not a
// regular file is a NotRegularError.
func Open(name string) (*os.File, error) {
	fi, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	if err := Check(fi); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	opened, err := f.Stat()
	if err == nil {
		err = Check(opened)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// ReadFile reads the regular file at name (see Open), at most limit
// bytes of it: a larger file is refused with an error wrapping
// ErrTooLarge, before it is read when its size shows it, else as soon as
// the limit is passed. Memory never grows past limit + 1 bytes.
func ReadFile(name string, limit int64) ([]byte, error) {
	f, err := Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > limit {
		return nil, fmt.Errorf("%w: %d bytes, above the %d this file may hold", ErrTooLarge, fi.Size(), limit)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit { // it grew since Stat
		return nil, fmt.Errorf("%w: above the %d bytes this file may hold", ErrTooLarge, limit)
	}
	return data, nil
}
