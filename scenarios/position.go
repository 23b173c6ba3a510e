package scenarios

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
)

// A pos is a 1-based line and column (in characters) in a scenario file.
type pos struct{ line, col int }

// positions records where each key and array element of a scenario file
// first appears, so that problems point at the right line and column.
//
// BurntSushi/toml v1.6.0 records key positions only in unexported fields, and
// keeps one position per key name, so the entries of an array of tables
// ([[strategy]]) share one position. Problems must point at the right entry,
// so the loader indexes positions itself with this small scanner.
//
// The scanner runs before the TOML parser, on any input, and doubles as the
// loader's depth check: the parser's cost per key grows with the square of
// the key's depth, so a file nesting deeper than MaxNesting is refused before
// the parser sees it. The index is a tree with one node per key or element,
// holding byte offsets, so it takes memory linear in the file; offsets become
// lines and columns only when a problem is reported.
type positions struct {
	root  *node
	lines lineIndex
	// tooDeep is the offset of the first key or element nested deeper than
	// MaxNesting, or -1.
	tooDeep int
	// depth is the deepest level indexed (at most MaxNesting).
	depth int
}

// A node is a key or an array element in the index.
type node struct {
	off   int              // where it first appears, in bytes from the start
	kids  []kid            // children by key, in the order they appear
	index map[string]*node // kids by key, once there are more than smallNode
	elems []*node
	aot   bool // an array of tables: headers below it extend its last entry
}

type kid struct {
	seg string
	n   *node
}

// smallNode is how many children a node searches in order before it
// indexes them in a map: most tables have a handful of keys.
const smallNode = 8

func (n *node) get(seg string) (*node, bool) {
	if n.index != nil {
		c, ok := n.index[seg]
		return c, ok
	}
	for _, k := range n.kids {
		if k.seg == seg {
			return k.n, true
		}
	}
	return nil, false
}

func (n *node) child(seg string, off int) *node {
	if c, ok := n.get(seg); ok {
		return c
	}
	c := &node{off: off}
	n.kids = append(n.kids, kid{seg, c})
	switch {
	case n.index != nil:
		n.index[seg] = c
	case len(n.kids) > smallNode:
		n.index = make(map[string]*node, len(n.kids))
		for _, k := range n.kids {
			n.index[k.seg] = k.n
		}
	}
	return c
}

func (n *node) elem(i, off int) *node {
	if i < len(n.elems) {
		return n.elems[i]
	}
	c := &node{off: off}
	n.elems = append(n.elems, c)
	return c
}

// indexPositions scans src, which need not be valid TOML, in time and
// memory linear in its length.
func indexPositions(src []byte) *positions {
	s := &posScanner{src: src, p: &positions{root: &node{}, lines: newLineIndex(src), tooDeep: -1}}
	s.document()
	return s.p
}

// find returns the node of key, a path as joinKey builds it, or of its
// nearest ancestor in the index (nil: none); exact says whether it is key's own.
func (p *positions) find(key string) (n *node, exact bool) {
	if p == nil {
		return nil, false
	}
	cur := p.root
	var found *node
	for i := 0; i < len(key); {
		var seg string
		if key[i] == '"' {
			q, err := strconv.QuotedPrefix(key[i:])
			if err != nil {
				return found, false
			}
			seg, _ = strconv.Unquote(q)
			i += len(q)
		} else {
			j := i
			for j < len(key) && key[j] != '.' && key[j] != '[' {
				j++
			}
			seg, i = key[i:j], j
		}
		next, ok := cur.get(seg)
		if !ok {
			return found, false
		}
		cur, found = next, next
		for i < len(key) && key[i] == '[' {
			end := strings.IndexByte(key[i:], ']')
			if end < 0 {
				return found, false
			}
			k, err := strconv.Atoi(key[i+1 : i+end])
			if err != nil || k < 0 || k >= len(cur.elems) {
				return found, false
			}
			cur, found = cur.elems[k], cur.elems[k]
			i += end + 1
		}
		if i < len(key) {
			if key[i] != '.' {
				return found, false
			}
			i++
		}
	}
	return found, found != nil
}

// offset returns the byte offset of key, or of its nearest ancestor that has
// one, or 0.
func (p *positions) offset(key string) int {
	if n, _ := p.find(key); n != nil {
		return n.off
	}
	return 0
}

// lookup returns the position of key, or of its nearest ancestor that has
// one, or line 1, column 1.
func (p *positions) lookup(key string) pos {
	if p == nil {
		return pos{1, 1}
	}
	return p.lines.at(p.offset(key))
}

// walk calls f with every node's position, in no particular order.
func (p *positions) walk(f func(at pos)) {
	stack := []*node{p.root}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n != p.root {
			f(p.lines.at(n.off))
		}
		for _, k := range n.kids {
			stack = append(stack, k.n)
		}
		stack = append(stack, n.elems...)
	}
}

// lineIndex turns byte offsets into lines and columns in characters.
type lineIndex struct {
	src    []byte
	starts []int   // offset of each line's first byte
	runes  []int32 // runes[k]: characters in src[:k*runeBlock]
}

// runeBlock is how many bytes apart lineIndex samples its character
// count, so that a column costs at most that many steps on any line.
const runeBlock = 256

func newLineIndex(src []byte) lineIndex {
	x := lineIndex{src: src, starts: []int{0}, runes: make([]int32, 0, len(src)/runeBlock+1)}
	var n int32
	for i, b := range src {
		if i%runeBlock == 0 {
			x.runes = append(x.runes, n)
		}
		if b&0xC0 != 0x80 { // not a UTF-8 continuation byte: a character starts
			n++
		}
		if b == '\n' {
			x.starts = append(x.starts, i+1)
		}
	}
	return x
}

// runesBefore counts the characters in src[:off].
func (x *lineIndex) runesBefore(off int) int {
	k := off / runeBlock
	if k >= len(x.runes) {
		k = len(x.runes) - 1
	}
	if k < 0 {
		return 0
	}
	n := int(x.runes[k])
	for _, b := range x.src[k*runeBlock : off] {
		if b&0xC0 != 0x80 {
			n++
		}
	}
	return n
}

func (x *lineIndex) at(off int) pos {
	off = min(max(off, 0), len(x.src))
	line, _ := slices.BinarySearch(x.starts, off+1) // first start after off
	start := x.starts[line-1]
	return pos{line, x.runesBefore(off) - x.runesBefore(start) + 1}
}

type posScanner struct {
	src []byte
	i   int
	p   *positions
}

// enter returns whether a node at depth may exist; past MaxNesting it
// records where and ends the scan.
func (s *posScanner) enter(depth, off int) bool {
	if depth <= MaxNesting {
		s.p.depth = max(s.p.depth, depth)
		return true
	}
	if s.p.tooDeep < 0 {
		s.p.tooDeep = off
	}
	s.i = len(s.src) // every loop of the scanner stops at the end
	return false
}

func (s *posScanner) eof() bool { return s.i >= len(s.src) }

func (s *posScanner) peek(n int) byte {
	if s.i+n < len(s.src) {
		return s.src[s.i+n]
	}
	return 0
}

func (s *posScanner) has(prefix string) bool {
	return bytes.HasPrefix(s.src[s.i:], []byte(prefix))
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
			s.toEOL()
		default:
			return
		}
	}
}

func (s *posScanner) toEOL() {
	if end := bytes.IndexByte(s.src[s.i:], '\n'); end >= 0 {
		s.i += end
	} else {
		s.i = len(s.src)
	}
}

func (s *posScanner) document() {
	table, depth := s.p.root, 0
	for {
		s.skip(true)
		if s.eof() {
			return
		}
		if s.src[s.i] == '[' {
			table, depth = s.header()
			continue
		}
		before := s.i
		s.keyValue(table, depth)
		if s.i == before { // not TOML; go on at the next line so nothing goes unchecked
			s.i++
			s.toEOL()
		}
	}
}

// header reads [a.b] or [[a.b]] and returns the table it opens and its depth.
func (s *posScanner) header() (*node, int) {
	array := s.peek(1) == '['
	if array {
		s.i += 2
	} else {
		s.i++
	}
	cur, depth := s.p.root, 0
	segs, offs := s.key(MaxNesting + 1)
	for j, seg := range segs {
		if depth++; !s.enter(depth, offs[j]) {
			return cur, depth
		}
		cur = cur.child(seg, offs[j])
		switch {
		case array && j == len(segs)-1:
			cur.aot = true
			if depth++; !s.enter(depth, offs[j]) {
				return cur, depth
			}
			cur = cur.elem(len(cur.elems), offs[j])
		case cur.aot && len(cur.elems) > 0:
			if depth++; !s.enter(depth, offs[j]) {
				return cur, depth
			}
			cur = cur.elems[len(cur.elems)-1]
		}
	}
	for !s.eof() && s.src[s.i] != '\n' && s.src[s.i] != '#' {
		s.i++ // the closing brackets
	}
	return cur, depth
}

// key reads a dotted key of at most limit segments (the scan stops
// reading there) and returns its segments and their offsets.
func (s *posScanner) key(limit int) (segs []string, offs []int) {
	for len(segs) < limit {
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
			for !s.eof() && s.src[s.i] != '\'' && s.src[s.i] != '\n' {
				s.i++
			}
			seg = string(s.src[start+1 : s.i])
			if !s.eof() && s.src[s.i] == '\'' {
				s.i++
			}
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
	return segs, offs
}

func (s *posScanner) keyValue(parent *node, depth int) {
	segs, offs := s.key(MaxNesting - depth + 1)
	if len(segs) == 0 {
		return
	}
	cur := parent
	for j, seg := range segs {
		if depth++; !s.enter(depth, offs[j]) {
			return
		}
		cur = cur.child(seg, offs[j])
	}
	s.skip(false)
	if !s.eof() && s.src[s.i] == '=' {
		s.i++
	}
	s.skip(false)
	s.value(cur, depth)
}

// value reads the value of n, which sits at depth.
func (s *posScanner) value(n *node, depth int) {
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
			s.keyValue(n, depth)
			if s.i == before {
				s.i++
			}
		}
	case '[':
		s.i++
		for k := 0; ; {
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
			if !s.enter(depth+1, s.i) {
				return
			}
			elem := n.elem(k, s.i)
			before := s.i
			s.value(elem, depth+1)
			if s.i == before {
				s.i++
			}
			k++
		}
	case '"':
		s.basicString()
	case '\'':
		if s.has("'''") {
			end := bytes.Index(s.src[s.i+3:], []byte("'''"))
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
		for !s.eof() && s.src[s.i] != '\'' && s.src[s.i] != '\n' {
			s.i++
		}
		if !s.eof() && s.src[s.i] == '\'' {
			s.i++
		}
	default: // number, boolean or date: runs to a delimiter
		for !s.eof() && !strings.ContainsRune(",]}\n\r#", rune(s.src[s.i])) {
			s.i++
		}
	}
}

// basicString skips a "..." or """...""" string and returns its raw text.
func (s *posScanner) basicString() string {
	start := s.i
	if s.has(`"""`) {
		s.i += 3
		for !s.eof() {
			switch {
			case s.src[s.i] == '\\':
				s.i += 2
			case s.has(`"""`):
				s.i += 3
				for !s.eof() && s.src[s.i] == '"' {
					s.i++
				}
				return string(s.src[start:s.i])
			default:
				s.i++
			}
		}
		s.i = len(s.src)
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
