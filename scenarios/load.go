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

	"github.com/simbench/simbench/internal/atomicfile"
)

// builtin holds the scenario files beside this package.
//
//go:embed *.toml
var builtin embed.FS

// Load reads and validates the scenario file at path. Invalid content, or a
// file larger than MaxFileBytes, gives an *Error listing every problem; a
// file that cannot be read, or is not a regular file (a device, a named
// pipe, a directory), gives an error naming it. Reading never blocks on a
// named pipe and never reads more than MaxFileBytes + 1 bytes.
func Load(path string) (*Scenario, error) {
	data, err := readRegular(path)
	var notRegular notRegularError
	switch {
	case errors.Is(err, errTooLarge):
		return nil, &Error{Problems: []Problem{tooLarge(path)}}
	case errors.As(err, &notRegular):
		return nil, fmt.Errorf("scenarios: %s is %w; give the path of a scenario file", path, err)
	case err != nil:
		return nil, fmt.Errorf("scenarios: %w", err)
	}
	return Parse(path, data)
}

// tooLarge is the problem of a scenario file above MaxFileBytes.
func tooLarge(name string) Problem {
	return Problem{File: name, Line: 1, Col: 1, Message: fmt.Sprintf(
		"the file is larger than %s, the most a scenario file may hold; remove what it does not need", showBytes(MaxFileBytes))}
}

// Parse validates a scenario held in memory, at most MaxFileBytes of it.
// name is used in problems and as the default scenario name; empirical
// distribution files are read relative to name's directory, and must be
// regular files there or below it.
func Parse(name string, data []byte) (*Scenario, error) {
	return ParseKeys(name, data, nil)
}

// ParseKeys is Parse telling accepts, when not nil, every key the decoder
// accepts in data as it decodes it: each table's keys as the table
// finishes, whether data sets them or not (set), and each enum key with
// its allowed values. Tables keyed by names the file chooses (services,
// tools, mix, max_in_flight_per_service) report their entries' keys, not
// the names. Tests use it to list the format's keys.
func ParseKeys(name string, data []byte, accepts func(key string, set bool, values []string)) (*Scenario, error) {
	sc, err := parse(name, data, dirSource{filepath.Dir(name)}, accepts)
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
	sc, err := parse(source, data, fsSource{builtin}, nil)
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

// parse checks data's size and nesting before the TOML parser sees it, so
// that loading takes time and memory linear in the input, then decodes and
// validates it; files is where empirical files are read from (nil: nowhere);
// accepts, when not nil, is told every key the decoder accepts (ParseKeys).
func parse(name string, data []byte, files source, accepts func(key string, set bool, values []string)) (*Scenario, error) {
	if len(data) > MaxFileBytes {
		return nil, &Error{Problems: []Problem{tooLarge(name)}}
	}
	idx := indexPositions(data)
	if idx.tooDeep >= 0 {
		at := idx.lines.at(idx.tooDeep)
		return nil, &Error{Problems: []Problem{{File: name, Line: at.line, Col: at.col, Message: fmt.Sprintf(
			"nests deeper than %d levels (each table, dotted key, array and inline table is one); scenario keys nest at most 6 deep, so flatten this", MaxNesting)}}}
	}
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
	d := newDecoder(name, idx, files)
	d.accepts = accepts
	// A file without a name key is named for the file, made safe for the
	// folder it names (see ScenarioNameProblem).
	base := strings.TrimSuffix(filepath.Base(strings.TrimPrefix(name, "builtin:")), ".toml")
	sc := d.decodeScenario(root, atomicfile.SafeName(base))
	if len(d.problems) > 0 {
		e := &Error{Problems: d.problems}
		e.sort()
		return nil, e
	}
	return sc, nil
}

func newDecoder(name string, pos *positions, files source) *decoder {
	return &decoder{file: name, pos: pos, files: files,
		services: map[string]int{}, tools: map[string]int{}, routes: map[string]int{}, strategies: map[string]string{}}
}
