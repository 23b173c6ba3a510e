// Package atomicfile writes files so that readers see the old file or the
// whole new one, never a part, and makes names safe to use in file names.
package atomicfile

import (
	"fmt"
	"hash/fnv"
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

// MaxSafeName is the longest name SafeName returns, in bytes.
const MaxSafeName = 64

// SafeName maps a name (a scenario's, a strategy's, a service's) to one
// that is safe as a file name, or as a part of one, on every system: at
// most MaxSafeName bytes of ASCII letters, digits, '.', '_' and '-',
// starting with a letter or a digit, so never "..", never a path, never
// hidden. A name that already is one is returned as it is. Any other gets
// its unsafe characters replaced by '_', is cut to fit, and ends in '-'
// and 8 hex digits of a hash of the whole name, so that two names that
// differ only in what was replaced or cut ("a/b" and "a_b") still map to
// different file names.
func SafeName(s string) string {
	if safe(s) {
		return s
	}
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if c := byte(r); r < 0x80 && (isAlnum(c) || c == '-' || c == '_' || c == '.') {
			out = append(out, c)
		} else {
			out = append(out, '_')
		}
	}
	slug := strings.TrimLeft(string(out), "._-")
	slug = strings.TrimRight(slug[:min(len(slug), MaxSafeName-9)], ".")
	h := fnv.New32a()
	h.Write([]byte(s))
	sum := fmt.Sprintf("%08x", h.Sum32())
	if slug == "" {
		return sum
	}
	return slug + "-" + sum
}

// safe reports whether s is a name SafeName returns unchanged.
func safe(s string) bool {
	if s == "" || len(s) > MaxSafeName || !isAlnum(s[0]) || s[len(s)-1] == '.' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
