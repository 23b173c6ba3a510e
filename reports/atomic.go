package reports

import (
	"fmt"
	"io/fs"

	"github.com/simbench/simbench/internal/atomicfile"
)

// WriteFileAtomic writes data to path so that readers see either the old
// file or the whole new one, never a part: it writes a temporary file in
// the same directory, syncs it, sets perm and renames it over path. On
// error the temporary file is removed and path is left as it was.
func WriteFileAtomic(path string, data []byte, perm fs.FileMode) error {
	if err := atomicfile.WriteFile(path, data, perm); err != nil {
		return fmt.Errorf("reports: %w", err)
	}
	return nil
}
