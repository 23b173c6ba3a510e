package spec

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// ReadSamples reads the values of an empirical distribution (Dist.Samples)
// from r, the format of its file: one value per line, blank lines skipped
// and # starting a comment that runs to the end of the line. A duration is
// a Go duration ("120ms", "1.5s") or a bare number of milliseconds; an
// amount is a number. Values must be 0 or more and finite, and a duration
// must fit a time.Duration. A bad line gives a *LineError; a file without
// values gives ErrNoSamples. It reads r to the end and nothing else.
func ReadSamples[T Unit](r io.Reader) ([]T, error) {
	var out []T
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, math.MaxInt32) // a line may be as long as the file
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		v, err := parseSample[T](line)
		if err != nil {
			return nil, &LineError{Line: n, Err: err}
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, ErrNoSamples
	}
	return out, nil
}

// ErrNoSamples is ReadSamples' error for a file that holds no values.
var ErrNoSamples = errors.New("holds no values; put one value per line")

// LineError is a bad line of a samples file: its number, from 1, and what
// is wrong with it.
type LineError struct {
	// Line is the bad line's number, from 1; Err what is wrong with it.
	Line int
	Err  error
}

// Error formats the problem as "line N: PROBLEM".
func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

// Unwrap returns what is wrong with the line.
func (e *LineError) Unwrap() error { return e.Err }

// parseSample reads one value of a samples file.
func parseSample[T Unit](s string) (T, error) {
	var zero T
	f, numErr := strconv.ParseFloat(s, 64)
	if math.IsNaN(f) {
		numErr = strconv.ErrSyntax
	}
	if _, isDuration := any(zero).(time.Duration); !isDuration {
		if numErr != nil || !(f >= 0 && f <= math.MaxFloat64) {
			return 0, fmt.Errorf("%q is not a number ≥ 0", s)
		}
		return T(f), nil
	}
	var d time.Duration
	switch {
	case numErr == nil && !(f >= 0):
		return 0, fmt.Errorf("%q is negative; values must be 0 or more", s)
	case numErr == nil && f*float64(time.Millisecond) >= math.MaxInt64:
		return 0, fmt.Errorf("%q milliseconds is longer than the longest duration (%v)", s, time.Duration(math.MaxInt64))
	case numErr == nil:
		d = time.Duration(f * float64(time.Millisecond))
	default:
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, fmt.Errorf("%q is neither a duration (like \"120ms\" or \"1.5s\") nor a number of milliseconds", s)
		}
		if d < 0 {
			return 0, fmt.Errorf("%q is negative; values must be 0 or more", s)
		}
	}
	return T(d), nil
}
