package scenarios

import namerules "github.com/simbench/simbench/internal/names"

// MaxNameLength is the longest name a scenario file may give its scenario,
// a service, a tool or a strategy, in bytes: names label table columns,
// plot legends and file names, and 64 bytes keeps a file name built from
// two of them well within the 255 bytes file systems allow.
const MaxNameLength = namerules.MaxLength

// ScenarioNameProblem says what keeps name from naming a scenario, or ""
// when nothing does. A scenario's name becomes the folder its results go
// to (out/NAME), so it must be a safe file name on every system: 1 to
// MaxNameLength bytes of ASCII letters, digits, '.', '_' and '-', starting
// with a letter or a digit. That rules out '/', '\', "..", a leading dot,
// spaces and control characters.
func ScenarioNameProblem(name string) string { return namerules.Scenario(name) }

// NameProblem says what keeps name from naming a service, a tool or a
// strategy (what, for the message), or "": it must not be empty, be
// longer than MaxNameLength bytes, or hold a control character (a
// newline, NUL, ESC, …) or a bidirectional-text control (U+202A–U+202E,
// U+2066–U+2069). Where such a name becomes part of a file name, it goes
// through a collision-free slug first.
func NameProblem(what, name string) string { return namerules.Name(what, name) }

// TextProblem says what keeps s, the value of a free-text key such as a
// description, from being written into terminals and reports, or "": it
// must hold no control character and no bidirectional-text control.
func TextProblem(s string) string { return namerules.Text(s) }
