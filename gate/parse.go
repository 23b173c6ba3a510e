package gate

import (
	"errors"
	"fmt"
	"io"
	"math"
	"path"
	"strings"

	"golang.org/x/perf/benchfmt"
)

// ErrNoResults is returned by Parse for an input without a single
// benchmark result: an empty measurement is never a pass.
var ErrNoResults = errors.New("no benchmark results")

// Set is one benchmark output, parsed: per benchmark, per unit, the value
// of every run, in the order the output gave them. A Set is not changed
// after Parse and is safe to read from many goroutines.
type Set struct {
	// File names the input in messages.
	File    string
	benches []*bench
	index   map[string]*bench
}

// bench is one benchmark's values, keyed by package and name (the name
// without the GOMAXPROCS suffix).
type bench struct {
	pkg, name string
	units     []string // first-appearance order
	values    map[string][]float64
}

// display is the name shown in the table: the last element of the package
// path, a dot, the benchmark name (sched.BenchmarkCore).
func (b *bench) display() string {
	if b.pkg == "" {
		return b.name
	}
	return path.Base(b.pkg) + "." + b.name
}

// Len reports how many distinct benchmarks the set holds.
func (s *Set) Len() int { return len(s.benches) }

// Values returns the values one benchmark reported for a unit, one per
// run; benchmark is the name without the GOMAXPROCS suffix, as the table
// shows it (pkg.BenchmarkName, or BenchmarkName for output without a pkg
// line). The slice must not be modified.
func (s *Set) Values(benchmark, unit string) []float64 {
	for _, b := range s.benches {
		if b.display() == benchmark {
			return b.values[unit]
		}
	}
	return nil
}

// Parse reads Go benchmark output (go test -bench, any number of packages
// and runs) with benchfmt. file names the input in errors. A malformed
// benchmark line is an error naming the file and line, and so is a line
// whose iteration count is below 1 or one of whose values is NaN or ±Inf
// (no statistic can judge them); input without any
// result is ErrNoResults; a negative value of a unit that cannot be
// negative (NonNegative: 429s/op, ns/op, …) is an error naming the
// benchmark and the unit, since judging it would call it an improvement.
//
// Units are kept as the benchmark wrote them (ns/op, not benchfmt's tidied
// sec/op). The -N GOMAXPROCS suffix is stripped so that outputs from
// machines with different core counts match; because go test adds no
// suffix at GOMAXPROCS=1 and benchmark names may end in a number
// (bounded-64), the suffix is stripped only when every result in the input
// ends in -N.
func Parse(r io.Reader, file string) (*Set, error) {
	type raw struct {
		pkg, name string
		values    []benchfmt.Value
	}
	var (
		results []raw
		errs    []error
	)
	rd := benchfmt.NewReader(r, file)
	for rd.Scan() {
		switch rec := rd.Result().(type) {
		case *benchfmt.SyntaxError:
			errs = append(errs, rec)
		case *benchfmt.Result:
			if err := checkResult(rec); err != nil {
				errs = append(errs, err)
				continue
			}
			results = append(results, raw{
				pkg:    rec.GetConfig("pkg"),
				name:   "Benchmark" + string(rec.Name.Full()), // benchfmt drops the prefix
				values: append([]benchfmt.Value(nil), rec.Values...),
			})
		}
	}
	if err := rd.Err(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("gate: invalid data: %w", errors.Join(errs...))
	}
	if len(results) == 0 {
		return nil, fmt.Errorf("gate: %s: %w", file, ErrNoResults)
	}

	strip := true
	for _, res := range results {
		if procsSuffix(res.name) == "" {
			strip = false
			break
		}
	}
	s := &Set{File: file, index: make(map[string]*bench)}
	for _, res := range results {
		name := res.name
		if strip {
			name = strings.TrimSuffix(name, procsSuffix(name))
		}
		key := res.pkg + "\x00" + name
		b := s.index[key]
		if b == nil {
			b = &bench{pkg: res.pkg, name: name, values: make(map[string][]float64)}
			s.index[key] = b
			s.benches = append(s.benches, b)
		}
		for _, v := range res.values {
			unit, val := v.Unit, v.Value
			if v.OrigUnit != "" {
				unit, val = v.OrigUnit, v.OrigValue
			}
			if _, seen := b.values[unit]; !seen {
				b.units = append(b.units, unit)
			}
			if val < 0 && NonNegative(unit) {
				errs = append(errs, fmt.Errorf("%s: %s: %s is %s, but it counts or measures something and cannot be negative", file, b.display(), unit, formatValue(val)))
			}
			b.values[unit] = append(b.values[unit], val)
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("gate: invalid data: %w", errors.Join(errs...))
	}
	return s, nil
}

// procsSuffix returns the trailing "-N" of a benchmark name, or "".
func procsSuffix(name string) string {
	i := strings.LastIndexByte(name, '-')
	if i < 0 || i == len(name)-1 {
		return ""
	}
	for _, c := range name[i+1:] {
		if c < '0' || c > '9' {
			return ""
		}
	}
	return name[i:]
}

// checkResult returns an error naming the file and line when a result
// cannot be judged: an iteration count below 1, or a value that is NaN or
// infinite.
func checkResult(rec *benchfmt.Result) error {
	file, line := rec.Pos()
	name := "Benchmark" + string(rec.Name.Full())
	if rec.Iters < 1 {
		return fmt.Errorf("%s:%d: %s ran %d iterations; a benchmark line needs at least 1", file, line, name, rec.Iters)
	}
	for _, v := range rec.Values {
		unit, val := v.Unit, v.Value
		if v.OrigUnit != "" {
			unit, val = v.OrigUnit, v.OrigValue
		}
		if math.IsNaN(val) || math.IsInf(val, 0) {
			return fmt.Errorf("%s:%d: %s reports %v %s; every value must be a finite number", file, line, name, val, unit)
		}
	}
	return nil
}
