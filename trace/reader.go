package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// MaxLine is the longest line a Reader accepts, in bytes.
const MaxLine = 1 << 20

// maxInterned bounds the table of repeated strings (services, tools,
// outcomes) a Reader shares between records, so memory stays bounded
// whatever the trace holds.
const maxInterned = 4096

// Error is a problem with one line of a trace.
type Error struct {
	Name string // the trace's name, as given to NewReader
	Line int    // from 1
	Err  error  // what is wrong with the line
}

func (e *Error) Error() string { return fmt.Sprintf("%s:%d: %v", e.Name, e.Line, e.Err) }
func (e *Error) Unwrap() error { return e.Err }

// Reader reads a trace line by line: it holds one line and one record at a
// time, never the whole trace. Blank lines are skipped. Keys a record does
// not know are skipped too, so a newer writer's extra fields do not break
// an older reader. A Reader is not safe for concurrent use.
//
//	r := trace.NewReader(f, "run.jsonl")
//	for r.Next() {
//		rec := r.Record()
//		…
//	}
//	if err := r.Err(); err != nil { … }
type Reader struct {
	br      *bufio.Reader
	name    string
	line    int
	long    []byte // a line longer than the buffer, assembled
	rec     Record
	header  *Header
	section int
	err     error
	strs    map[string]string
	recent  [slots][4]string // the latest values of each interned field
	// skippable is set when err is about the content of one whole line
	// read, so that Skip can go on after it.
	skippable bool
}

// NewReader reads a trace from r; name (usually the file's path) prefixes
// every error.
func NewReader(r io.Reader, name string) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 64<<10), name: name, strs: map[string]string{}}
}

// Next reads up to the next record, taking in any header lines before it,
// and reports whether there is one. At the end of the trace, or at the
// first bad line, it returns false; Err tells which.
func (r *Reader) Next() bool {
	for r.err == nil {
		line, err := r.readLine()
		if err != nil {
			if err != io.EOF {
				r.err = fmt.Errorf("trace: %s: %w", r.name, err)
			}
			return false
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		isHeader, err := r.parse(line)
		if err == nil && !isHeader {
			err = r.rec.Check()
		}
		if err != nil {
			r.err, r.skippable = &Error{r.name, r.line, err}, true
			return false
		}
		if isHeader {
			continue
		}
		return true
	}
	return false
}

// Record returns the record Next read. It is overwritten by the next call
// to Next: copy it to keep it.
func (r *Reader) Record() *Record { return &r.rec }

// Header returns the header of the current section, or nil when no header
// has been read (a trace may start with records).
func (r *Reader) Header() *Header { return r.header }

// Section counts the headers read so far: records of different sections
// with the same Session or Turn are different sessions or turns.
func (r *Reader) Section() int { return r.section }

// Line is the line number of the last line read, from 1.
func (r *Reader) Line() int { return r.line }

// Skip clears the error that stopped Next when it was about one line's
// content (not JSON, a field of the wrong type, a record Check refuses),
// so that the next call to Next reads on from the following line: a
// caller can list every bad line of a trace at once. It reports whether
// it did; an error reading the trace, or a line longer than MaxLine,
// cannot be skipped.
func (r *Reader) Skip() bool {
	if r.err == nil || !r.skippable {
		return false
	}
	r.err, r.skippable = nil, false
	return true
}

// Err returns the error that stopped Next, or nil at the end of the trace.
// A bad line gives an *Error with its line number.
func (r *Reader) Err() error { return r.err }

// readLine returns the next line without its newline; the slice is valid
// until the next call.
func (r *Reader) readLine() ([]byte, error) {
	line, err := r.br.ReadSlice('\n')
	if err == nil || (err == io.EOF && len(line) > 0) {
		r.line++
		return line, nil
	}
	if err != bufio.ErrBufferFull {
		return nil, err
	}
	r.long = append(r.long[:0], line...)
	for {
		line, err = r.br.ReadSlice('\n')
		r.long = append(r.long, line...)
		if len(r.long) > MaxLine {
			r.line++
			return nil, &Error{r.name, r.line, fmt.Errorf("line longer than %d bytes", MaxLine)}
		}
		if err == nil || (err == io.EOF && len(r.long) > 0) {
			r.line++
			return r.long, nil
		}
		if err != bufio.ErrBufferFull {
			return nil, err
		}
	}
}

// Check reports what makes r invalid: a missing service or outcome, an
// unknown outcome or kind, an attempt below 1, a negative or non-finite
// time, an end before the start or a start before the intended start, a
// status that is neither 0 nor an HTTP status (100–599), negative tokens,
// a negative or non-finite limit.
func (r *Record) Check() error {
	switch {
	case r.Service == "":
		return errors.New(`no "service"`)
	case r.Outcome == "":
		return errors.New(`no "outcome"`)
	case !slices.Contains(Outcomes, r.Outcome):
		return fmt.Errorf("outcome %q is not one of %s", r.Outcome, strings.Join(Outcomes, ", "))
	case r.Kind != "" && r.Kind != KindTool && r.Kind != KindModel:
		return fmt.Errorf("kind %q is neither %q nor %q", r.Kind, KindTool, KindModel)
	case r.Attempt < 1:
		return fmt.Errorf("attempt %d: attempts count from 1", r.Attempt)
	}
	for _, t := range []float64{r.Intended, r.Start, r.End, r.RetryAfter, r.RetryDelay} {
		if t < 0 || math.IsNaN(t) || math.IsInf(t, 0) {
			return fmt.Errorf("time %v: times are seconds ≥ 0", t)
		}
	}
	switch {
	case r.Status != 0 && (r.Status < 100 || r.Status > 599):
		return fmt.Errorf("status %d is not an HTTP status (100 to 599, or 0 for none)", r.Status)
	case r.Tokens < 0:
		return fmt.Errorf("tokens %d: a count of tokens is ≥ 0", r.Tokens)
	case !(r.LimitRequests >= 0 && r.LimitTokens >= 0) || math.IsInf(r.LimitRequests, 0) || math.IsInf(r.LimitTokens, 0):
		return fmt.Errorf("limit_requests %v, limit_tokens %v: limits are ≥ 0", r.LimitRequests, r.LimitTokens)
	}
	if r.End < r.Start {
		return fmt.Errorf("end %v is before start %v", r.End, r.Start)
	}
	if r.Start < r.Intended {
		return fmt.Errorf("start %v is before intended %v", r.Start, r.Intended)
	}
	return nil
}

// Field presence bits, for the defaults and required fields.
const (
	hasStart = 1 << iota
	hasEnd
	hasIntended
	hasAttempt
)

// parse decodes one line into r.rec, or into a new header when the line
// holds the key "simbench_trace". It scans the flat object itself rather
// than through encoding/json, which is several times slower per record.
func (r *Reader) parse(line []byte) (header bool, err error) {
	r.rec = Record{}
	s := scanner{b: line}
	if !s.consume('{') {
		return false, errors.New("not a JSON object")
	}
	var seen int
	if s.consume('}') {
		return false, errors.New("empty object")
	}
	for {
		key, err := s.str()
		if err != nil {
			return false, err
		}
		if !s.consume(':') {
			return false, fmt.Errorf("want ':' after key %q at column %d", key, s.i+1)
		}
		if string(key) == "simbench_trace" {
			return true, r.parseHeader(line)
		}
		if err := r.field(&s, key, &seen); err != nil {
			return false, fmt.Errorf("%q: %w", key, err)
		}
		if s.consume(',') {
			continue
		}
		if !s.consume('}') {
			return false, fmt.Errorf("want ',' or '}' at column %d", s.i+1)
		}
		break
	}
	if s.ws(); s.i != len(s.b) {
		return false, fmt.Errorf("text after the object at column %d", s.i+1)
	}
	switch {
	case seen&hasStart == 0:
		return false, errors.New(`no "start"`)
	case seen&hasEnd == 0:
		return false, errors.New(`no "end"`)
	}
	if seen&hasIntended == 0 {
		r.rec.Intended = r.rec.Start
	}
	if seen&hasAttempt == 0 {
		r.rec.Attempt = 1
	}
	return false, nil
}

func (r *Reader) parseHeader(line []byte) error {
	var h Header
	if err := json.Unmarshal(line, &h); err != nil {
		return fmt.Errorf("header: %w", err)
	}
	if h.Format != FormatVersion {
		return fmt.Errorf("header: format version %d; this reader reads version %d", h.Format, FormatVersion)
	}
	for _, name := range slices.Sorted(maps.Keys(h.Limits)) {
		if l := h.Limits[name]; !(l.RPS >= 0 && l.RPM >= 0 && l.TPM >= 0 && l.MaxConcurrent >= 0) {
			return fmt.Errorf("header: the limits of %q (rps %v, rpm %v, tpm %v, max_concurrent %d) must not be negative", name, l.RPS, l.RPM, l.TPM, l.MaxConcurrent)
		}
	}
	r.header = &h
	r.section++
	return nil
}

// field decodes the value of one key into r.rec.
func (r *Reader) field(s *scanner, key []byte, seen *int) error {
	rec := &r.rec
	if s.ws(); bytes.HasPrefix(s.b[s.i:], []byte("null")) {
		s.i += 4 // null is the field left out
		return nil
	}
	var err error
	switch string(key) {
	case "session":
		rec.Session, err = s.int()
	case "turn":
		rec.Turn, err = s.int()
	case "call":
		var b []byte
		if b, err = s.str(); err == nil {
			rec.Call = string(b)
		}
	case "kind":
		rec.Kind, err = r.intern(s, slotKind)
	case "service":
		rec.Service, err = r.intern(s, slotService)
	case "tool":
		rec.Tool, err = r.intern(s, slotTool)
	case "outcome":
		rec.Outcome, err = r.intern(s, slotOutcome)
	case "attempt":
		var n int64
		n, err = s.int()
		rec.Attempt = int(n)
		*seen |= hasAttempt
	case "intended":
		rec.Intended, err = s.float()
		*seen |= hasIntended
	case "start":
		rec.Start, err = s.float()
		*seen |= hasStart
	case "end":
		rec.End, err = s.float()
		*seen |= hasEnd
	case "status":
		var n int64
		n, err = s.int()
		rec.Status = int(n)
	case "tokens":
		rec.Tokens, err = s.int()
	case "retry_after":
		rec.RetryAfter, err = s.float()
		rec.HasRetryAfter = true
	case "retry_delay":
		rec.RetryDelay, err = s.float()
	case "limit_requests":
		rec.LimitRequests, err = s.float()
	case "limit_tokens":
		rec.LimitTokens, err = s.float()
	default:
		err = s.skip()
	}
	return err
}

// intern reads a string value of the field slot (one of the slot
// constants), sharing one copy of each value seen before: the few most
// recent values of the slot are checked first, then a table.
func (r *Reader) intern(s *scanner, slot int) (string, error) {
	b, err := s.str()
	if err != nil {
		return "", err
	}
	recent := &r.recent[slot]
	for _, v := range recent {
		if v == string(b) && (v != "" || len(b) == 0) {
			return v, nil
		}
	}
	v, ok := r.strs[string(b)]
	if !ok {
		v = string(b)
		if len(r.strs) < maxInterned {
			r.strs[v] = v
		}
	}
	copy(recent[1:], recent[:len(recent)-1])
	recent[0] = v
	return v, nil
}

// Slots of Reader.recent.
const (
	slotKind = iota
	slotService
	slotTool
	slotOutcome
	slots
)

// scanner reads the JSON values of one line.
type scanner struct {
	b   []byte
	i   int
	buf []byte
}

func (s *scanner) ws() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\r' || s.b[s.i] == '\n') {
		s.i++
	}
}

// consume skips white space and then c, reporting whether c was there.
func (s *scanner) consume(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// str reads a string. The result aliases the line unless it had escapes.
func (s *scanner) str() ([]byte, error) {
	if !s.consume('"') {
		return nil, fmt.Errorf("want a string at column %d", s.i+1)
	}
	start := s.i
	escaped := false
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			if !escaped {
				return s.b[start : s.i-1], nil
			}
			var v string
			if err := json.Unmarshal(s.b[start-1:s.i], &v); err != nil {
				return nil, fmt.Errorf("bad string at column %d: %w", start, err)
			}
			s.buf = append(s.buf[:0], v...)
			return s.buf, nil
		case c == '\\':
			escaped = true
			s.i += 2
		case c < 0x20:
			return nil, fmt.Errorf("control character in a string at column %d", s.i+1)
		default:
			s.i++
		}
	}
	return nil, fmt.Errorf("unterminated string from column %d", start)
}

// number returns the text of a number.
func (s *scanner) number() ([]byte, error) {
	s.ws()
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		if (c < '0' || c > '9') && c != '-' && c != '+' && c != '.' && c != 'e' && c != 'E' {
			break
		}
		s.i++
	}
	if s.i == start {
		return nil, fmt.Errorf("want a number at column %d", s.i+1)
	}
	return s.b[start:s.i], nil
}

func (s *scanner) float() (float64, error) {
	b, err := s.number()
	if err != nil {
		return 0, err
	}
	if x, ok := fastFloat(b); ok {
		return x, nil
	}
	x, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", b)
	}
	return x, nil
}

// pow10 holds the powers of ten that a float64 represents exactly.
var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// fastFloat parses a plain decimal ("-12.345678") of at most 15 digits, as
// the writer writes times to the microsecond: the digits and the power of
// ten are both exact in a float64, so one division rounds correctly, to
// the same value strconv.ParseFloat gives. Anything else is left to
// ParseFloat (ok false).
func fastFloat(b []byte) (float64, bool) {
	i, neg := 0, false
	if len(b) > 0 && b[0] == '-' {
		i, neg = 1, true
	}
	var m uint64
	digits, frac, point := 0, 0, false
	for ; i < len(b); i++ {
		c := b[i]
		switch {
		case c >= '0' && c <= '9':
			m = m*10 + uint64(c-'0')
			digits++
			if point {
				frac++
			}
		case c == '.' && !point:
			point = true
		default:
			return 0, false
		}
	}
	if digits == 0 || digits > 15 || (point && frac == 0) {
		return 0, false
	}
	x := float64(m) / pow10[frac]
	if neg {
		x = -x
	}
	return x, true
}

// int reads a whole number; a float with nothing after the point (3.0,
// 1e3) is accepted.
func (s *scanner) int() (int64, error) {
	b, err := s.number()
	if err != nil {
		return 0, err
	}
	if len(b) <= 18 { // the digits alone cannot overflow
		neg := b[0] == '-'
		var n int64
		i := 0
		if neg {
			i = 1
		}
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			n = n*10 + int64(b[i]-'0')
		}
		if i == len(b) && (len(b) > 1 || !neg) {
			if neg {
				n = -n
			}
			return n, nil
		}
	}
	if n, err := strconv.ParseInt(string(b), 10, 64); err == nil {
		return n, nil
	}
	x, err := strconv.ParseFloat(string(b), 64)
	if err != nil || x != math.Trunc(x) || math.Abs(x) > 1<<53 {
		return 0, fmt.Errorf("%q is not a whole number", b)
	}
	return int64(x), nil
}

// skip passes over any value, nested ones included.
func (s *scanner) skip() error {
	s.ws()
	if s.i >= len(s.b) {
		return errors.New("missing value")
	}
	switch c := s.b[s.i]; {
	case c == '"':
		_, err := s.str()
		return err
	case c == '{' || c == '[':
		start := s.i
		dec := json.NewDecoder(bytes.NewReader(s.b[s.i:]))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("bad value at column %d: %w", start+1, err)
		}
		s.i += int(dec.InputOffset())
		return nil
	case c == 't' || c == 'f' || c == 'n':
		for _, lit := range []string{"true", "false", "null"} {
			if bytes.HasPrefix(s.b[s.i:], []byte(lit)) {
				s.i += len(lit)
				return nil
			}
		}
		return fmt.Errorf("bad value at column %d", s.i+1)
	default:
		_, err := s.float()
		return err
	}
}
