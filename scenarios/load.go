package scenarios

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// builtin holds the scenario files beside this package.
//
//go:embed *.toml
var builtin embed.FS

// Load reads and validates the scenario file at path. Invalid content gives
// an *Error listing every problem; a file that cannot be read gives the
// read error.
func Load(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("scenarios: %w", err)
	}
	return Parse(path, data)
}

// Parse validates a scenario held in memory. name is used in problems and
// as the default scenario name; empirical distribution files are read
// relative to name's directory.
func Parse(name string, data []byte) (*Scenario, error) {
	sc, err := parse(name, data, os.DirFS(filepath.Dir(name)))
	if sc != nil {
		sc.Source = name
	}
	return sc, err
}

// Builtin returns the embedded scenario called name ("tier3" or "tier3.toml").
func Builtin(name string) (*Scenario, error) {
	file := strings.TrimSuffix(name, ".toml") + ".toml"
	data, err := builtin.ReadFile(file)
	if err != nil || strings.ContainsAny(name, `/\`) {
		return nil, fmt.Errorf("scenarios: no built-in scenario %q; the built-ins are %s", name, strings.Join(names(), ", "))
	}
	source := "builtin:" + file
	sc, err := parse(source, data, builtin)
	if sc != nil {
		sc.Source = source
	}
	return sc, err
}

// Open loads nameOrPath as a file when one exists at that path, and
// otherwise as a built-in scenario name.
func Open(nameOrPath string) (*Scenario, error) {
	if _, err := os.Stat(nameOrPath); err == nil {
		return Load(nameOrPath)
	}
	if slices.Contains(names(), strings.TrimSuffix(nameOrPath, ".toml")) {
		return Builtin(nameOrPath)
	}
	return nil, fmt.Errorf("scenarios: %q is neither a file nor a built-in scenario; the built-ins are %s", nameOrPath, strings.Join(names(), ", "))
}

// List returns the built-in scenarios sorted by name, with the one-line
// description each file declares.
func List() []Info {
	var out []Info
	for _, name := range names() {
		data, _ := builtin.ReadFile(name + ".toml")
		var head struct{ Description string }
		_, _ = toml.Decode(string(data), &head) // the built-ins are tested to be valid
		out = append(out, Info{Name: name, Description: head.Description})
	}
	return out
}

// names returns the built-in scenario names, sorted.
func names() []string {
	entries, _ := fs.Glob(builtin, "*.toml")
	for i, e := range entries {
		entries[i] = strings.TrimSuffix(e, ".toml")
	}
	slices.Sort(entries)
	return entries
}

func parse(name string, data []byte, files fs.FS) (*Scenario, error) {
	var root map[string]any
	if _, err := toml.Decode(string(data), &root); err != nil {
		p := Problem{File: name, Line: 1, Col: 1, Message: "invalid TOML: " + err.Error()}
		var pe toml.ParseError
		if errors.As(err, &pe) {
			p.Line, p.Col = max(pe.Position.Line, 1), max(pe.Position.Col, 1)
			p.Message = "invalid TOML: " + pe.Message
		}
		return nil, &Error{Problems: []Problem{p}}
	}
	d := &decoder{file: name, pos: indexPositions(data), files: files}
	base := strings.TrimSuffix(filepath.Base(strings.TrimPrefix(name, "builtin:")), ".toml")
	sc := d.decodeScenario(root, base)
	if len(d.problems) > 0 {
		e := &Error{Problems: d.problems}
		e.sort()
		return nil, e
	}
	return sc, nil
}
