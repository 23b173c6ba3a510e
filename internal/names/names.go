// Package names holds the rules for the names and free text simbench's
// files carry (scenario, service, tool and strategy names, descriptions):
// what scenario files may say and what results files are checked
// against, in one place that both packages can import.
package names

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxLength is the longest name a scenario file may give its scenario,
// a service, a tool or a strategy, in bytes: names label table columns,
// plot legends and file names, and 64 bytes keeps a file name built from
// two of them well within the 255 bytes file systems allow.
const MaxLength = 64

// Scenario says what keeps name from naming a scenario, or ""
// when nothing does. A scenario's name becomes the folder its results go
// to (out/NAME), so it must be a safe file name on every system: 1 to
// MaxLength bytes of ASCII letters, digits, '.', '_' and '-', starting
// with a letter or a digit. That rules out '/', '\', "..", a leading dot,
// spaces and control characters.
func Scenario(name string) string {
	switch {
	case strings.TrimSpace(name) == "":
		return "is empty; name the scenario"
	case len(name) > MaxLength:
		return fmt.Sprintf("is %d bytes long; a scenario name is at most %d", len(name), MaxLength)
	case !isAlnum(name[0]):
		return fmt.Sprintf("%s starts with %s; a scenario name starts with a letter or a digit, since it names the folder its results go to", quoteName(name), quoteByte(name[0]))
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !isAlnum(c) && c != '.' && c != '_' && c != '-' {
			return fmt.Sprintf("%s holds %s; a scenario name holds only letters, digits, '.', '_' and '-' (ASCII), since it names the folder its results go to", quoteName(name), quoteByte(c))
		}
	}
	return ""
}

// Name says what keeps name from naming a service, a tool or a
// strategy (what, for the message), or "": it must not be empty, be
// longer than MaxLength bytes, or hold a control character (a
// newline, NUL, ESC, …) or a bidirectional-text control (U+202A–U+202E,
// U+2066–U+2069), since names are printed on terminals and written into
// reports and other files. Where such a name becomes part of a file name,
// it goes through a slug first (atomicfile.SafeName).
func Name(what, name string) string {
	switch {
	case strings.TrimSpace(name) == "":
		return fmt.Sprintf("is empty; name the %s", what)
	case len(name) > MaxLength:
		return fmt.Sprintf("is %d bytes long; a %s name is at most %d", len(name), what, MaxLength)
	}
	if r, ok := controlIn(name); ok {
		return fmt.Sprintf("%s holds the control character %U; a %s name is printable text", quoteName(name), r, what)
	}
	return ""
}

// Text says what keeps s, the value of a free-text key such as a
// description, from being written into terminals and reports, or "": it
// must hold no control character and no bidirectional-text control.
func Text(s string) string {
	if r, ok := controlIn(s); ok {
		if r == '\n' || r == '\r' {
			return "spans several lines; keep it to one line and put the rest in a comment"
		}
		return fmt.Sprintf("holds the control character %U; write printable text only", r)
	}
	return ""
}

// controlIn returns the first control character of s: a C0 or C1 control
// (tab included), DEL, or a bidirectional-text control.
func controlIn(s string) (rune, bool) {
	for _, r := range s {
		if unicode.IsControl(r) || isBidiControl(r) {
			return r, true
		}
	}
	return 0, false
}

// isBidiControl reports the characters that reorder the text around them
// (embeddings, overrides and isolates): shown on a terminal or in a
// report, they make a name read as another.
func isBidiControl(r rune) bool {
	return r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// quoteName quotes a name for a problem, shortened past 40 bytes.
func quoteName(name string) string {
	if len(name) > 40 {
		cut := 40
		for cut > 0 && !utf8.RuneStart(name[cut]) {
			cut--
		}
		return fmt.Sprintf("%q…", name[:cut])
	}
	return fmt.Sprintf("%q", name)
}

// quoteByte shows one byte of a name: printable ASCII as itself in
// quotes, anything else as its code.
func quoteByte(c byte) string {
	if c >= 0x21 && c < 0x7f {
		return fmt.Sprintf("'%c'", c)
	}
	return fmt.Sprintf("the byte 0x%02X", c)
}
