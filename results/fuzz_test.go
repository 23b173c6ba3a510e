package results

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzRead feeds arbitrary bytes to the results reader that report
// and compare use: it never panics; it returns results or an error.
func FuzzRead(f *testing.F) {
	f.Add([]byte(`{"scenario":"x","seed":1,"strategies":[{"name":"s","answer_latency_ms":{"p95":null}}]}`))
	f.Add([]byte(`{"strategies":[{"seed_runs":[{"seed_runs":[]}]}]}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), ResultsFile)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if r, err := Read(path); err == nil && r == nil {
			t.Fatal("no results and no error")
		}
	})
}
