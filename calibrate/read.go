package calibrate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/simbench/simbench/internal/regfile"
	"github.com/simbench/simbench/trace"
)

// Format is a trace file's format.
type Format string

// The formats ReadFile reads.
const (
	// FormatAuto decides from the file: .csv is CSV; a first line holding
	// "resourceSpans" is OpenTelemetry; another JSON object is simbench.
	FormatAuto Format = ""
	// FormatSimbench is package trace's JSON Lines.
	FormatSimbench Format = "simbench"
	// FormatOTel is OpenTelemetry's OTLP/JSON export of spans with the
	// GenAI semantic-convention attributes: one JSON document, or one per
	// line as the collector's file exporter writes them.
	FormatOTel Format = "otel"
	// FormatCSV is a CSV file with a header row, its columns mapped by
	// ReadOptions.CSVColumns.
	FormatCSV Format = "csv"
)

// Formats lists the formats a caller may name.
var Formats = []Format{FormatSimbench, FormatOTel, FormatCSV}

// ErrEmpty is wrapped by the error of a trace that holds no attempts.
var ErrEmpty = errors.New("no attempts in the trace")

// ReadOptions say how to read one trace file.
type ReadOptions struct {
	// Strategy, when set, takes only the sections of simbench traces whose
	// header names this strategy (run --trace writes a section per
	// strategy and seed); the others are skipped. When empty, every
	// section is taken, and Calibrator.Strategies tells which strategies
	// were mixed.
	Strategy string
	// Format of the file (FormatAuto: decide from the file).
	Format Format
	// CSVColumns maps fields (the keys of CSVFields) to the names of
	// the CSV's columns; see CSVFields.
	CSVColumns map[string]string
}

// ReadFile streams the trace at path into the calibrator: it holds a
// bounded window of the file, never all of it. Problems are reported as
// *trace.Error values naming the file and line; a file without attempts
// wraps ErrEmpty.
func (c *Calibrator) ReadFile(path string, opts ReadOptions) error {
	f, err := regfile.Open(path)
	var notRegular regfile.NotRegularError
	if errors.As(err, &notRegular) {
		return fmt.Errorf("calibrate: %s is %w; give a trace file", path, err)
	}
	if err != nil {
		return fmt.Errorf("calibrate: %w", err)
	}
	defer f.Close()
	format := opts.Format
	if format == FormatAuto {
		if format, err = detect(path, f, opts); err != nil {
			return err
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("calibrate: %w", err)
		}
	}
	src := Source{Path: path, Format: format}
	before := c.records
	switch format {
	case FormatSimbench:
		err = c.readSimbench(f, path, opts.Strategy)
	case FormatOTel:
		err = c.readOTel(f, path, &src)
	case FormatCSV:
		err = c.readCSV(f, path, opts.CSVColumns)
	default:
		return fmt.Errorf("calibrate: %s: unknown format %q; want one of %s", path, format, formatList())
	}
	if err != nil && err != errTooMany {
		c.problems = append(c.problems, err)
	}
	if err := c.Problems(); err != nil {
		return err
	}
	src.Records = c.records - before
	if src.Records == 0 && opts.Strategy != "" {
		return fmt.Errorf("calibrate: %s: %w of strategy %q (its sections name %s)", path, ErrEmpty, opts.Strategy, c.strategyList())
	}
	if src.Records == 0 {
		return fmt.Errorf("calibrate: %s: %w", path, ErrEmpty)
	}
	c.sources = append(c.sources, src)
	return nil
}

func formatList() string {
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = string(f)
	}
	return strings.Join(names, ", ")
}

// detect decides a file's format from its extension and first line.
func detect(path string, r io.Reader, opts ReadOptions) (Format, error) {
	if strings.EqualFold(filepath.Ext(path), ".csv") {
		return FormatCSV, nil
	}
	br := bufio.NewReaderSize(r, 64<<10)
	head, err := br.Peek(64 << 10)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return "", fmt.Errorf("calibrate: %w", err)
	}
	head = bytes.TrimLeft(head, " \t\r\n")
	first, _, _ := bytes.Cut(head, []byte{'\n'})
	first = bytes.TrimSpace(first)
	otel := []byte(`"resourceSpans"`)
	switch {
	case len(head) == 0:
		return "", fmt.Errorf("calibrate: %s: %w", path, ErrEmpty)
	case len(first) > 0 && first[0] == '{' && bytes.Contains(first, otel):
		return FormatOTel, nil
	case len(first) > 0 && first[0] == '{' && json.Valid(first):
		return FormatSimbench, nil
	case len(first) > 0 && first[0] == '{' && bytes.Contains(head, otel):
		return FormatOTel, nil // one document over many lines
	case len(first) > 0 && first[0] == '{':
		return FormatSimbench, nil // the reader says what is wrong with the line
	case len(opts.CSVColumns) > 0:
		return FormatCSV, nil
	}
	return "", &trace.Error{Name: path, Line: 1, Err: fmt.Errorf("unknown trace format: the line is neither a JSON object (a simbench trace or OpenTelemetry JSON) nor CSV with --csv-columns; name the format with --format (%s)", formatList())}
}

// readSimbench streams a simbench trace, only the sections of strategy
// when it is set. Bad lines and records a scenario cannot hold are kept as
// problems and the reading goes on, up to maxProblems; an error reading
// the file stops it.
func (c *Calibrator) readSimbench(r io.Reader, path, strategy string) error {
	tr := trace.NewReader(r, path)
	section, take := -1, true
	for next := tr.Next(); next || c.skipBad(tr); next = tr.Next() {
		if !next {
			continue // a bad line, kept as a problem
		}
		if tr.Section() != section || section < 0 {
			section = tr.Section()
			var limits map[string]trace.Limits
			h := tr.Header()
			if h != nil {
				limits = h.Limits
				c.sawStrategy(h.Strategy)
			}
			if take = strategy == "" || h != nil && h.Strategy == strategy; take {
				if err := c.Section(limits); err != nil {
					if err := c.problem(path, tr.Line(), err); err != nil {
						return err
					}
				}
			}
		}
		if !take {
			continue
		}
		if err := c.Add(tr.Record()); err != nil {
			if err := c.problem(path, tr.Line(), err); err != nil {
				return err
			}
		}
	}
	return tr.Err()
}

// skipBad keeps the line error that stopped tr among the problems and
// reports whether reading can go on past it (trace.Reader.Skip).
func (c *Calibrator) skipBad(tr *trace.Reader) bool {
	var e *trace.Error
	if !errors.As(tr.Err(), &e) || len(c.problems) >= maxProblems-1 || !tr.Skip() {
		return false
	}
	c.problems = append(c.problems, e)
	return true
}

// sawStrategy notes a strategy a trace header names.
func (c *Calibrator) sawStrategy(name string) {
	if name != "" && !slices.Contains(c.strategies, name) {
		c.strategies = append(c.strategies, name)
	}
}

// Strategies returns the strategies the simbench traces read so far name
// in their headers, in the order first seen. Sections of several
// strategies describe different systems: calibrating from all of them
// together merges their sessions and their 429s, so a caller should pick
// one (ReadOptions.Strategy).
func (c *Calibrator) Strategies() []string { return slices.Clone(c.strategies) }

func (c *Calibrator) strategyList() string {
	if len(c.strategies) == 0 {
		return "no strategy"
	}
	q := make([]string, len(c.strategies))
	for i, s := range c.strategies {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// idOf turns a string id (a turn, session or span id) into an int64 key.
// A 64-bit hash keeps memory bounded where a table of every id would not;
// two ids colliding among a billion is a one-in-ten-billion chance.
func idOf(s string) int64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return int64(h.Sum64() &^ (1 << 63))
}
