package scenarios

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// A pos is a 1-based line and column (in characters) in a scenario file.
type pos struct{ line, col int }

// positions maps key paths (as joinKey builds them, with [i] for array
// elements) to where each key or element first appears in the source.
//
// BurntSushi/toml v1.6.0 records key positions only in unexported fields, and
// keeps one position per key name, so the entries of an array of tables
// ([[strategy]]) share one position. Problems must point at the right entry,
// so the loader indexes positions itself with this small scanner. It runs only
// on input the TOML parser has accepted, so it can skip values without
// checking them.
type positions map[string]pos

func indexPositions(src []byte) positions {
	s := &posScanner{src: src, idx: positions{}, arrays: map[string]int{}}
	s.lineStarts = append(s.lineStarts, 0)
	for i, b := range src {
		if b == '\n' {
			s.lineStarts = append(s.lineStarts, i+1)
		}
	}
	s.document()
	return s.idx
}

// lookup returns the position of key, or of its nearest ancestor that has
// one, or line 1, column 1.
func (p positions) lookup(key string) pos {
	for key != "" {
		if at, ok := p[key]; ok {
			return at
		}
		key = parentKey(key)
	}
	return pos{1, 1}
}

type posScanner struct {
	src        []byte
	i          int
	lineStarts []int
	idx        positions
	arrays     map[string]int // array-of-tables path → entries seen so far
}

func (s *posScanner) at(off int) pos {
	line := 0
	lo, hi := 0, len(s.lineStarts)-1
	for lo <= hi { // last line start ≤ off
		mid := (lo + hi) / 2
		if s.lineStarts[mid] <= off {
			line, lo = mid, mid+1
		} else {
			hi = mid - 1
		}
	}
	return pos{line + 1, utf8.RuneCount(s.src[s.lineStarts[line]:off]) + 1}
}

func (s *posScanner) record(key string, off int) {
	if _, ok := s.idx[key]; !ok {
		s.idx[key] = s.at(off)
	}
}

func (s *posScanner) eof() bool { return s.i >= len(s.src) }

func (s *posScanner) peek(n int) byte {
	if s.i+n < len(s.src) {
		return s.src[s.i+n]
	}
	return 0
}

// skip passes spaces, tabs and, when newlines is set, newlines and comments.
func (s *posScanner) skip(newlines bool) {
	for !s.eof() {
		switch c := s.src[s.i]; {
		case c == ' ' || c == '\t':
			s.i++
		case newlines && (c == '\n' || c == '\r'):
			s.i++
		case newlines && c == '#':
			for !s.eof() && s.src[s.i] != '\n' {
				s.i++
			}
		default:
			return
		}
	}
}

func (s *posScanner) document() {
	prefix := ""
	for {
		s.skip(true)
		if s.eof() {
			return
		}
		if s.src[s.i] == '[' {
			prefix = s.header()
			continue
		}
		before := s.i
		s.keyValue(prefix)
		if s.i == before { // not TOML the parser accepted; give up quietly
			return
		}
	}
}

// header reads [a.b] or [[a.b]] and returns the resolved table path.
func (s *posScanner) header() string {
	array := s.peek(1) == '['
	if array {
		s.i += 2
	} else {
		s.i++
	}
	segs, offs := s.key()
	cur := ""
	for j, seg := range segs {
		cur = joinKey(cur, seg)
		s.record(cur, offs[j])
		n, isArray := s.arrays[cur]
		switch {
		case array && j == len(segs)-1:
			s.arrays[cur] = n + 1
			cur = cur + "[" + strconv.Itoa(n) + "]"
			s.record(cur, offs[j])
		case isArray:
			cur = cur + "[" + strconv.Itoa(n-1) + "]"
		}
	}
	for !s.eof() && s.src[s.i] != '\n' && s.src[s.i] != '#' {
		s.i++ // the closing brackets
	}
	return cur
}

// key reads a dotted key and returns its segments and their offsets.
func (s *posScanner) key() (segs []string, offs []int) {
	for {
		s.skip(false)
		off := s.i
		var seg string
		switch {
		case s.eof():
			return segs, offs
		case s.src[s.i] == '"':
			raw := s.basicString()
			seg, _ = strconv.Unquote(raw)
		case s.src[s.i] == '\'':
			start := s.i
			s.i++
			for !s.eof() && s.src[s.i] != '\'' {
				s.i++
			}
			s.i++
			seg = string(s.src[start+1 : s.i-1])
		default:
			start := s.i
			for !s.eof() && isBare(s.src[s.i]) {
				s.i++
			}
			seg = string(s.src[start:s.i])
		}
		if seg == "" && s.i == off {
			return segs, offs
		}
		segs, offs = append(segs, seg), append(offs, off)
		s.skip(false)
		if s.eof() || s.src[s.i] != '.' {
			return segs, offs
		}
		s.i++
	}
}

func (s *posScanner) keyValue(prefix string) {
	segs, offs := s.key()
	if len(segs) == 0 {
		return
	}
	path := prefix
	for j, seg := range segs {
		path = joinKey(path, seg)
		s.record(path, offs[j])
	}
	s.skip(false)
	if !s.eof() && s.src[s.i] == '=' {
		s.i++
	}
	s.skip(false)
	s.value(path)
}

func (s *posScanner) value(path string) {
	if s.eof() {
		return
	}
	switch s.src[s.i] {
	case '{':
		s.i++
		for {
			s.skip(true)
			if s.eof() {
				return
			}
			if s.src[s.i] == '}' {
				s.i++
				return
			}
			if s.src[s.i] == ',' {
				s.i++
				continue
			}
			before := s.i
			s.keyValue(path)
			if s.i == before {
				s.i++
			}
		}
	case '[':
		s.i++
		for n := 0; ; {
			s.skip(true)
			if s.eof() {
				return
			}
			switch s.src[s.i] {
			case ']':
				s.i++
				return
			case ',':
				s.i++
				continue
			}
			elem := path + "[" + strconv.Itoa(n) + "]"
			s.record(elem, s.i)
			before := s.i
			s.value(elem)
			if s.i == before {
				s.i++
			}
			n++
		}
	case '"':
		s.basicString()
	case '\'':
		if strings.HasPrefix(string(s.src[s.i:min(s.i+3, len(s.src))]), "'''") {
			end := strings.Index(string(s.src[s.i+3:]), "'''")
			if end < 0 {
				s.i = len(s.src)
				return
			}
			s.i += 3 + end + 3
			for !s.eof() && s.src[s.i] == '\'' { // up to two quotes may end the content
				s.i++
			}
			return
		}
		s.i++
		for !s.eof() && s.src[s.i] != '\'' {
			s.i++
		}
		s.i++
	default: // number, boolean or date: runs to a delimiter
		for !s.eof() && !strings.ContainsRune(",]}\n\r#", rune(s.src[s.i])) {
			s.i++
		}
	}
}

// basicString skips a "..." or """...""" string and returns its raw text.
func (s *posScanner) basicString() string {
	start := s.i
	if strings.HasPrefix(string(s.src[s.i:min(s.i+3, len(s.src))]), `"""`) {
		s.i += 3
		for !s.eof() {
			switch {
			case s.src[s.i] == '\\':
				s.i += 2
			case strings.HasPrefix(string(s.src[s.i:min(s.i+3, len(s.src))]), `"""`):
				s.i += 3
				for !s.eof() && s.src[s.i] == '"' {
					s.i++
				}
				return string(s.src[start:s.i])
			default:
				s.i++
			}
		}
		return string(s.src[start:])
	}
	s.i++
	for !s.eof() && s.src[s.i] != '"' && s.src[s.i] != '\n' {
		if s.src[s.i] == '\\' {
			s.i++
		}
		s.i++
	}
	s.i = min(s.i+1, len(s.src))
	return string(s.src[start:s.i])
}

func isBare(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// joinKey appends one key segment to a dotted path, quoting segments that are
// not bare keys so that the path reads as TOML.
func joinKey(prefix, seg string) string {
	if seg == "" || strings.IndexFunc(seg, func(r rune) bool { return r > 127 || !isBare(byte(r)) }) >= 0 {
		seg = strconv.Quote(seg)
	}
	if prefix == "" {
		return seg
	}
	return prefix + "." + seg
}

// parentKey drops the last segment or index of a path built by joinKey.
func parentKey(key string) string {
	if strings.HasSuffix(key, "]") {
		if i := strings.LastIndexByte(key, '['); i >= 0 {
			return key[:i]
		}
	}
	inQuote := false
	last := -1
	for i := 0; i < len(key); i++ {
		switch key[i] {
		case '\\':
			i++
		case '"':
			inQuote = !inQuote
		case '.':
			if !inQuote {
				last = i
			}
		}
	}
	if last < 0 {
		return ""
	}
	return key[:last]
}
