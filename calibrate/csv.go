package calibrate

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/simbench/simbench/sched/httptool"
	"github.com/simbench/simbench/trace"
)

// CSVFields are the fields a CSV column can be mapped to, with what each
// holds. Required: service; start or start_ms; one of end, end_ms,
// latency_s and latency_ms; status or outcome.
var CSVFields = map[string]string{
	"session":     "the agent session's id (any text); leave it out for an open workload",
	"turn":        "the turn's id (any text); without it every row is a turn of its own",
	"call":        "the call's id within its turn",
	"kind":        `"model" (or "chat", "llm") for a model call; anything else is a tool call`,
	"service":     "the service called",
	"tool":        "the tool's name (default: the service's)",
	"attempt":     "the attempt number, from 1 (default 1)",
	"intended":    "when the attempt was due, like start (default: start)",
	"start":       "when the attempt was sent: seconds (any origin) or an RFC 3339 time",
	"start_ms":    "when the attempt was sent, in milliseconds (any origin)",
	"end":         "when the response arrived: seconds or an RFC 3339 time",
	"end_ms":      "when the response arrived, in milliseconds",
	"latency_s":   "the attempt's duration in seconds",
	"latency_ms":  "the attempt's duration in milliseconds",
	"status":      "the HTTP status (0 or empty: none); gives the outcome when there is no outcome column",
	"outcome":     "the outcome class (" + strings.Join(trace.Outcomes, ", ") + "; also ok, error, timeout)",
	"tokens":      "tokens used",
	"retry_after": "the server's retry delay, in seconds",
}

// ParseCSVColumns reads a column mapping written FIELD=COLUMN,… (for
// example start=ts,latency_ms=dur,service=svc,status=code,turn=turn_id)
// and checks the fields.
func ParseCSVColumns(spec string) (map[string]string, error) {
	m := map[string]string{}
	for part := range strings.SplitSeq(spec, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		field, col, ok := strings.Cut(part, "=")
		field, col = strings.TrimSpace(field), strings.TrimSpace(col)
		if !ok || field == "" || col == "" {
			return nil, fmt.Errorf("%q: write FIELD=COLUMN", part)
		}
		if _, known := CSVFields[field]; !known {
			return nil, fmt.Errorf("unknown field %q; the fields are %s", field, strings.Join(slices.Sorted(maps.Keys(CSVFields)), ", "))
		}
		if _, dup := m[field]; dup {
			return nil, fmt.Errorf("field %q is mapped twice", field)
		}
		m[field] = col
	}
	return m, checkCSVFields(m)
}

// checkCSVFields checks that a mapping has the required fields.
func checkCSVFields(m map[string]string) error {
	has := func(fs ...string) bool {
		return slices.ContainsFunc(fs, func(f string) bool { _, ok := m[f]; return ok })
	}
	var missing []string
	if !has("service") {
		missing = append(missing, "service")
	}
	if !has("start", "start_ms") {
		missing = append(missing, "start (or start_ms)")
	}
	if !has("end", "end_ms", "latency_s", "latency_ms") {
		missing = append(missing, "end (or end_ms, latency_s, latency_ms)")
	}
	if !has("status", "outcome") {
		missing = append(missing, "status (or outcome)")
	}
	if len(missing) > 0 {
		return fmt.Errorf("the column mapping lacks %s", strings.Join(missing, ", "))
	}
	return nil
}

// readCSV streams a CSV trace whose columns cols maps.
func (c *Calibrator) readCSV(r io.Reader, path string, cols map[string]string) error {
	if len(cols) == 0 {
		return fmt.Errorf("calibrate: %s: a CSV trace needs a column mapping (--csv-columns start=ts,latency_ms=dur,service=svc,status=code,…)", path)
	}
	if err := checkCSVFields(cols); err != nil {
		return fmt.Errorf("calibrate: %s: %w", path, err)
	}
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err == io.EOF {
		return fmt.Errorf("calibrate: %s: %w (not even a header row)", path, ErrEmpty)
	}
	if err != nil {
		return csvError(path, cr, err)
	}
	idx := map[string]int{}
	for _, field := range slices.Sorted(maps.Keys(CSVFields)) {
		col, ok := cols[field]
		if !ok {
			continue
		}
		i := slices.IndexFunc(header, func(h string) bool { return strings.TrimSpace(h) == col })
		if i < 0 {
			return &trace.Error{Name: path, Line: 1, Err: fmt.Errorf("no column %q (mapped to %s); the header has %s", col, field, strings.Join(header, ", "))}
		}
		idx[field] = i
	}
	_ = c.Section(nil) // no limits: nothing to refuse
	var rec trace.Record
	for row := int64(1); ; row++ {
		fields, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return csvError(path, cr, err)
		}
		line, _ := cr.FieldPos(0)
		if err := csvRecord(&rec, fields, idx, row); err != nil {
			return &trace.Error{Name: path, Line: line, Err: err}
		}
		if err := c.Add(&rec); err != nil {
			if err := c.problem(path, line, err); err != nil {
				return err
			}
		}
	}
}

func csvError(path string, cr *csv.Reader, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &trace.Error{Name: path, Line: pe.Line, Err: pe.Err}
	}
	line, _ := cr.FieldPos(0)
	return &trace.Error{Name: path, Line: line, Err: err}
}

// csvRow is one CSV row with the column of each mapped field.
type csvRow struct {
	fields []string
	idx    map[string]int
}

// get returns field f's text, trimmed; ok is false when f is not mapped,
// and a mapped column the row is too short for reads as empty.
func (r csvRow) get(f string) (s string, ok bool) {
	i, ok := r.idx[f]
	if !ok {
		return "", false
	}
	if i >= len(r.fields) {
		return "", true
	}
	return strings.TrimSpace(r.fields[i]), true
}

// num reads field f as a number; ok is false when it is unmapped or empty.
func (r csvRow) num(f string) (x float64, ok bool, err error) {
	s, ok := r.get(f)
	if !ok || s == "" {
		return 0, false, nil
	}
	x, err = strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false, fmt.Errorf("%s %q is not a number", f, s)
	}
	return x, true, nil
}

// csvRecord fills rec from one row, the row-th after the header.
func csvRecord(rec *trace.Record, fields []string, idx map[string]int, row int64) error {
	*rec = trace.Record{Attempt: 1, Turn: row}
	r := csvRow{fields: fields, idx: idx}
	if err := csvIDs(rec, r); err != nil {
		return err
	}
	if err := csvCounts(rec, r); err != nil {
		return err
	}
	if err := csvTimes(rec, r); err != nil {
		return err
	}
	return csvOutcome(rec, r)
}

// csvIDs reads who made the attempt: service, tool, call, session, turn
// and kind.
func csvIDs(rec *trace.Record, r csvRow) error {
	if s, ok := r.get("service"); ok {
		if s == "" {
			return errors.New("empty service")
		}
		rec.Service = s
	}
	if s, ok := r.get("tool"); ok {
		rec.Tool = s
	}
	if s, ok := r.get("call"); ok {
		rec.Call = s
	}
	if s, ok := r.get("session"); ok && s != "" {
		rec.Session = max(idOf(s), 1)
	}
	if s, ok := r.get("turn"); ok && s != "" {
		rec.Turn = idOf(s)
	}
	if s, ok := r.get("kind"); ok {
		switch strings.ToLower(s) {
		case "model", "chat", "llm":
			rec.Kind = trace.KindModel
		}
	}
	return nil
}

// csvCounts reads the attempt number, the tokens and the retry delay.
func csvCounts(rec *trace.Record, r csvRow) error {
	if x, ok, err := r.num("attempt"); err != nil {
		return err
	} else if ok {
		rec.Attempt = max(int(x), 1)
	}
	if x, ok, err := r.num("tokens"); err != nil {
		return err
	} else if ok {
		rec.Tokens = int64(x)
	}
	if x, ok, err := r.num("retry_after"); err != nil {
		return err
	} else if ok {
		rec.RetryAfter, rec.HasRetryAfter = x, true
	}
	return nil
}

// csvTimes reads when the attempt was due, sent and answered: the end
// from its own column, else from the latency. The times are checked with
// the rest of the record (trace.Record.Check, through Calibrator.Add).
func csvTimes(rec *trace.Record, r csvRow) error {
	start, ok, err := csvTime(r.get, "start", "start_ms")
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("empty start")
	}
	rec.Start, rec.Intended = start, start
	if t, ok, err := csvTime(r.get, "intended", ""); err != nil {
		return err
	} else if ok {
		rec.Intended = min(t, start)
	}
	end, ok, err := csvTime(r.get, "end", "end_ms")
	if err != nil {
		return err
	}
	if !ok {
		x, ok, err := r.num("latency_s")
		if err != nil {
			return err
		}
		if !ok {
			if x, ok, err = r.num("latency_ms"); err != nil {
				return err
			}
			x /= 1000
		}
		if !ok {
			return errors.New("empty end and latency")
		}
		end = start + x
	}
	rec.End = end // one that ends before it starts is refused by trace.Record.Check
	return nil
}

// csvOutcome reads the status and the outcome, which the status gives
// when the outcome column is empty or unmapped.
func csvOutcome(rec *trace.Record, r csvRow) error {
	status, hasStatus, err := r.num("status")
	if err != nil {
		return err
	}
	rec.Status = int(status)
	if s, ok := r.get("outcome"); ok && s != "" {
		o, known := outcomeAliases[strings.ToLower(s)]
		if !known {
			return fmt.Errorf("outcome %q is not one of %s", s, strings.Join(trace.Outcomes, ", "))
		}
		rec.Outcome = o
	} else if hasStatus {
		rec.Outcome = outcomeOfStatus(rec.Status)
	} else {
		return errors.New("empty status and outcome")
	}
	return nil
}

// outcomeAliases maps outcome names, trace's own and common ones, to
// trace's classes.
var outcomeAliases = func() map[string]string {
	m := map[string]string{
		"ok": trace.OutcomeSuccess, "error": trace.OutcomeTransient, "timeout": trace.OutcomeTransient,
		"429": trace.OutcomeRateLimited, "rate_limit": trace.OutcomeRateLimited, "canceled": trace.OutcomeCancelled,
	}
	for _, o := range trace.Outcomes {
		m[o] = o
	}
	return m
}()

// outcomeOfStatus classes an HTTP status as the scheduler's HTTP reader
// does (httptool.StatusClass): 409 a conflict, 3xx and statuses from 600 on
// permanent.
func outcomeOfStatus(status int) string {
	return httptool.StatusClass(status).String()
}

// csvTime reads a time field: seconds, an RFC 3339 time, or (in the
// field msField) milliseconds.
func csvTime(get func(string) (string, bool), field, msField string) (float64, bool, error) {
	if s, ok := get(field); ok && s != "" {
		if x, err := strconv.ParseFloat(s, 64); err == nil {
			return x, true, nil
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return 0, false, fmt.Errorf("%s %q is neither seconds nor an RFC 3339 time", field, s)
		}
		return float64(t.Unix()) + float64(t.Nanosecond())/1e9, true, nil
	}
	if msField == "" {
		return 0, false, nil
	}
	if s, ok := get(msField); ok && s != "" {
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return 0, false, fmt.Errorf("%s %q is not a number", msField, s)
		}
		return x / 1000, true, nil
	}
	return 0, false, nil
}
