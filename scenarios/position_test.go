package scenarios

import (
	"io/fs"
	"testing"

	"github.com/BurntSushi/toml"
)

// FuzzParse feeds arbitrary input to the loader: it must return a scenario
// or an *Error, never panic or hang, and every problem must point inside
// the input.
func FuzzParse(f *testing.F) {
	files, _ := fs.Glob(builtin, "*.toml")
	for _, name := range files {
		data, _ := builtin.ReadFile(name)
		f.Add(data)
	}
	f.Add([]byte("a = { b = [ { c = 1 }, \n { d = '''x]''' } ] }\n[[e.f]]\n\"g.h\".i = \"\"\"\n[j]\n\"\"\""))
	f.Fuzz(func(t *testing.T, data []byte) {
		var root map[string]any
		if _, err := toml.Decode(string(data), &root); err != nil {
			return // the scanner only ever sees input the parser accepted
		}
		lines := 1
		for _, b := range data {
			if b == '\n' {
				lines++
			}
		}
		indexPositions(data).walk(func(at pos) {
			if at.line < 1 || at.line > lines || at.col < 1 {
				t.Fatalf("a key at %v, outside the %d-line input", at, lines)
			}
		})
		sc, err := parse("fuzz.toml", data, nil)
		if e, ok := err.(*Error); ok {
			for _, p := range e.Problems {
				if p.Line < 1 || p.Line > lines || p.Col < 1 {
					t.Fatalf("problem outside the input: %v", p)
				}
			}
		} else if err != nil || sc == nil {
			t.Fatalf("parse = %v, %v; want a scenario or an *Error", sc, err)
		}
	})
}
