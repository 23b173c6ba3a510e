package scenarios

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"strings"

	"github.com/simbench/simbench/internal/regfile"
)

// errTooLarge is returned by the readers for a file above MaxFileBytes.
var errTooLarge = fmt.Errorf("larger than %s, the most a scenario or empirical file may hold", showBytes(MaxFileBytes))

// readRegular reads the regular file at name, at most MaxFileBytes of it
// (regfile.ReadFile): devices, named pipes, sockets and directories are
// refused before they are opened.
func readRegular(name string) ([]byte, error) {
	data, err := regfile.ReadFile(name, MaxFileBytes)
	if errors.Is(err, regfile.ErrTooLarge) {
		return nil, errTooLarge
	}
	return data, err
}

// notRegularError says what a file is when it is not a regular file, as
// the end of a sentence that starts "it is".
type notRegularError = regfile.NotRegularError

// regular says what is wrong with a file that is not a regular file.
func regular(fi fs.FileInfo) error { return regfile.Check(fi) }

// A source reads the files a scenario names (empirical distributions),
// relative to the scenario's directory.
type source interface {
	// read returns the contents of file, a slash-separated path that
	// fs.ValidPath accepts, or an error saying what is wrong with it.
	read(file string) ([]byte, error)
}

// dirSource reads files in a directory on disk, or below it. A symbolic
// link is followed only when it resolves inside the directory.
type dirSource struct{ dir string }

func (s dirSource) read(file string) ([]byte, error) {
	name := filepath.Join(s.dir, filepath.FromSlash(file))
	root, err := filepath.EvalSymlinks(s.dir)
	if err != nil {
		return nil, err
	}
	target, err := filepath.EvalSymlinks(name)
	if err != nil {
		return nil, err
	}
	if rel, err := filepath.Rel(root, target); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return nil, fmt.Errorf("it resolves through a symbolic link to %s, outside the scenario's directory; copy the file into the directory", target)
	}
	return readRegular(target)
}

// fsSource reads files from a file system, such as the embedded built-ins.
type fsSource struct{ fsys fs.FS }

func (s fsSource) read(file string) ([]byte, error) {
	f, err := s.fsys.Open(path.Clean(file))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := regular(fi); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err == nil && len(data) > MaxFileBytes {
		err = errTooLarge
	}
	return data, err
}

// showBytes prints a size in bytes as KiB or MiB when it is a whole number of them.
func showBytes(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	default:
		return fmt.Sprintf("%d bytes", n)
	}
}
