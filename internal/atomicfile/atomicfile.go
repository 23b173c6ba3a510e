// Package atomicfile writes files so that readers see the old file or the
// whole new one, never a part, and makes names safe to use in file names.
package atomicfile

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// WriteFile writes data to path so that readers see either the old file or
// the whole new one, never a part: it writes a temporary file in the same
// directory, syncs it, sets perm and renames it over path. On error the
// temporary file is removed, path is left as it was, and the error names
// path.
func WriteFile(path string, data []byte, perm fs.FileMode) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
			err = fmt.Errorf("writing %s: %w", path, err)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Chmod(perm); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// SafeName makes a name usable in a file name: characters other than
// letters, digits, '-', '_' and '.' become '_', and leading or trailing dots
// are dropped.
func SafeName(s string) string {
	out := []rune(s)
	for i, r := range out {
		if !(r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			out[i] = '_'
		}
	}
	return strings.Trim(string(out), ".")
}
