package trace

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"unicode/utf8"
)

// bufferSize is the writer's buffer, in bytes: all the memory a Writer
// holds besides one line being encoded.
const bufferSize = 256 << 10

// Writer writes a trace as JSON Lines: a [Header], then one line per
// [Record]. It buffers a fixed amount and writes the rest through, so its
// memory does not grow with the trace. A Writer is safe for concurrent use;
// lines from concurrent writers never interleave. Errors are sticky: after
// the first one every call returns it.
type Writer struct {
	mu   sync.Mutex
	bw   *bufio.Writer
	f    *os.File // the temporary file (Create), else nil
	path string   // where Close renames f to
	line []byte
	err  error
	done bool
}

// Create starts a trace file at path. The lines go to a temporary file in
// the same directory, renamed onto path by Close, so path holds either the
// previous file or a complete trace, never a partial one. Abort discards
// the temporary file instead.
func Create(path string) (*Writer, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	return &Writer{bw: bufio.NewWriterSize(f, bufferSize), f: f, path: path}, nil
}

// NewWriter returns a Writer onto w. Close flushes it and does not close w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{bw: bufio.NewWriterSize(w, bufferSize)}
}

// Header writes h as a header line, starting a section: the records
// written after it belong to it. h.Format is set to FormatVersion.
func (w *Writer) Header(h Header) error {
	h.Format = FormatVersion
	data, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("trace: header: %w", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.put(append(data, '\n'))
}

// Write appends r as one line. It does not check r; see [Record.Check].
func (w *Writer) Write(r Record) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.line = r.AppendJSON(w.line[:0])
	w.line = append(w.line, '\n')
	return w.put(w.line)
}

func (w *Writer) put(line []byte) error {
	if w.err != nil {
		return w.err
	}
	if w.done {
		return errors.New("trace: write after Close")
	}
	if _, err := w.bw.Write(line); err != nil {
		w.err = fmt.Errorf("trace: %w", err)
	}
	return w.err
}

// Close flushes the trace. For a Writer from Create it syncs the
// temporary file and renames it onto the path; on any error the temporary
// file is removed and the path left as it was. Close is idempotent.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return w.err
	}
	w.done = true
	if w.err == nil {
		if err := w.bw.Flush(); err != nil {
			w.err = fmt.Errorf("trace: %w", err)
		}
	}
	if w.f == nil {
		return w.err
	}
	if w.err == nil {
		if err := w.f.Sync(); err != nil {
			w.err = fmt.Errorf("trace: %w", err)
		}
	}
	if err := w.f.Close(); err != nil && w.err == nil {
		w.err = fmt.Errorf("trace: %w", err)
	}
	if w.err == nil {
		if err := os.Rename(w.f.Name(), w.path); err != nil {
			w.err = fmt.Errorf("trace: %w", err)
		}
	}
	if w.err != nil {
		os.Remove(w.f.Name())
	}
	return w.err
}

// Abort discards a Writer from Create without touching its path (for a
// run that failed); for one from NewWriter it only stops writing. Calling
// Close after Abort returns an error; Abort after Close does nothing.
func (w *Writer) Abort() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return
	}
	w.done = true
	w.err = errors.New("trace: aborted")
	if w.f != nil {
		w.f.Close()
		os.Remove(w.f.Name())
	}
}

// AppendJSON appends r as one JSON object (no newline) to b, with the keys
// in the order of the format reference and the optional ones left out as
// documented on [Record]. Times (and the limits) are written to the
// microsecond.
func (r *Record) AppendJSON(b []byte) []byte {
	b = append(b, '{')
	if r.Session != 0 {
		b = append(b, `"session":`...)
		b = strconv.AppendInt(b, r.Session, 10)
		b = append(b, ',')
	}
	b = append(b, `"turn":`...)
	b = strconv.AppendInt(b, r.Turn, 10)
	if r.Call != "" {
		b = append(b, `,"call":`...)
		b = appendString(b, r.Call)
	}
	if r.Kind != "" && r.Kind != KindTool {
		b = append(b, `,"kind":`...)
		b = appendString(b, r.Kind)
	}
	b = append(b, `,"service":`...)
	b = appendString(b, r.Service)
	if r.Tool != "" {
		b = append(b, `,"tool":`...)
		b = appendString(b, r.Tool)
	}
	b = append(b, `,"attempt":`...)
	b = strconv.AppendInt(b, int64(max(r.Attempt, 1)), 10)
	b = appendFloat(append(b, `,"intended":`...), r.Intended)
	b = appendFloat(append(b, `,"start":`...), r.Start)
	b = appendFloat(append(b, `,"end":`...), r.End)
	b = append(b, `,"outcome":`...)
	b = appendString(b, r.Outcome)
	if r.Status != 0 {
		b = append(b, `,"status":`...)
		b = strconv.AppendInt(b, int64(r.Status), 10)
	}
	if r.Tokens != 0 {
		b = append(b, `,"tokens":`...)
		b = strconv.AppendInt(b, r.Tokens, 10)
	}
	if r.HasRetryAfter {
		b = appendFloat(append(b, `,"retry_after":`...), r.RetryAfter)
	}
	if r.RetryDelay != 0 {
		b = appendFloat(append(b, `,"retry_delay":`...), r.RetryDelay)
	}
	if r.LimitRequests != 0 {
		b = appendFloat(append(b, `,"limit_requests":`...), r.LimitRequests)
	}
	if r.LimitTokens != 0 {
		b = appendFloat(append(b, `,"limit_tokens":`...), r.LimitTokens)
	}
	return append(b, '}')
}

// appendFloat writes seconds rounded to the microsecond, in the shortest
// decimal form that reads back to the rounded value (a plain decimal, no
// exponent, below 10⁹ s: what the reader parses fastest). NaN and
// infinities, which JSON cannot hold, are written as 0.
func appendFloat(b []byte, x float64) []byte {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		x = 0
	}
	if math.Abs(x) < 1e15 {
		x = math.Round(x*1e6) / 1e6
	}
	return strconv.AppendFloat(b, x, 'f', -1, 64)
}

// appendString writes s as a JSON string: quotes, backslashes and control
// characters escaped, invalid UTF-8 replaced by U+FFFD.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\t':
				b = append(b, '\\', 't')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c < 0x20 || c == 0x7f:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}
