package scenarios

import (
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

// FuzzParse feeds arbitrary input to the loader: it must return a scenario
// or an *Error, never panic or hang, and every problem must point inside
// the input. Where the TOML parser accepts the input, the position scanner
// (which also enforces MaxNesting before the parser runs) must see exactly
// as deep a tree as the parser built, so that the depth cap cannot be
// dodged.
func FuzzParse(f *testing.F) {
	files, _ := fs.Glob(builtin, "*.toml")
	for _, name := range files {
		data, _ := builtin.ReadFile(name)
		f.Add(data)
	}
	f.Add([]byte("a = { b = [ { c = 1 }, \n { d = '''x]''' } ] }\n[[e.f]]\n\"g.h\".i = \"\"\"\n[j]\n\"\"\""))
	f.Add([]byte("a = [[[[[[[[[[1]]]]]]]]]]\n"))
	f.Add([]byte("[[a.b]]\n[a.b.c.d]\ne.f.g = { h = [ { i = 1 } ] }\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := 1 + strings.Count(string(data), "\n")
		idx := indexPositions(data)
		idx.walk(func(at pos) {
			if at.line < 1 || at.line > lines || at.col < 1 {
				t.Fatalf("a key at %v, outside the %d-line input", at, lines)
			}
		})
		sc, err := parse("fuzz.toml", data, nil, nil)
		var e *Error
		switch {
		case errors.As(err, &e):
			for _, p := range e.Problems {
				if p.Line < 1 || p.Line > lines || p.Col < 1 {
					t.Fatalf("problem outside the input: %v", p)
				}
			}
		case err != nil || sc == nil:
			t.Fatalf("parse = %v, %v; want a scenario or an *Error", sc, err)
		}
		if idx.tooDeep >= 0 {
			return // the TOML parser would take time quadratic in the depth
		}
		var root map[string]any
		if _, err := toml.Decode(string(data), &root); err != nil {
			return
		}
		if got := treeDepth(root); got != idx.depth {
			t.Fatalf("the parser built a tree %d deep, the scanner saw %d", got, idx.depth)
		}
	})
}

// treeDepth returns how deep a decoded TOML tree nests: each table key and
// array element is one level.
func treeDepth(v any) int {
	deepest := 0
	switch v := v.(type) {
	case map[string]any:
		for _, c := range v {
			deepest = max(deepest, 1+treeDepth(c))
		}
	case []map[string]any:
		for _, c := range v {
			deepest = max(deepest, 1+treeDepth(c))
		}
	case []any:
		for _, c := range v {
			deepest = max(deepest, 1+treeDepth(c))
		}
	}
	return deepest
}
