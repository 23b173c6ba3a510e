package calibrate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/simbench/simbench/trace"
)

// OpenTelemetry GenAI operation names (gen_ai.operation.name) and what
// they become.
const (
	opOther uint8 = iota // any other span: only a link in the parent chain
	opAgent              // invoke_agent, create_agent: a turn
	opModel              // chat, text_completion, generate_content: a model call
	opTool               // execute_tool: a tool call
)

func opOf(name string) uint8 {
	switch name {
	case "invoke_agent", "create_agent":
		return opAgent
	case "chat", "text_completion", "generate_content":
		return opModel
	case "execute_tool":
		return opTool
	}
	return opOther
}

// otelSpan is the part of an OTLP/JSON span the calibrator reads.
type otelSpan struct {
	TraceID      string     `json:"traceId"`
	SpanID       string     `json:"spanId"`
	ParentSpanID string     `json:"parentSpanId"`
	Start        otelNumber `json:"startTimeUnixNano"`
	End          otelNumber `json:"endTimeUnixNano"`
	Attributes   []struct {
		Key   string    `json:"key"`
		Value otelValue `json:"value"`
	} `json:"attributes"`
	Status struct {
		Code json.RawMessage `json:"code"`
	} `json:"status"`
}

// otelNumber is a 64-bit integer that OTLP/JSON writes as a string
// ("1700000000000000000") and some exporters as a number.
type otelNumber float64

func (n *otelNumber) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if s == "" || s == "null" {
		return nil
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("%s is not a number", b)
	}
	*n = otelNumber(x)
	return nil
}

// otelValue is an AnyValue; arrays of strings come from captured headers
// (http.response.header.*).
type otelValue struct {
	StringValue *string     `json:"stringValue"`
	IntValue    *otelNumber `json:"intValue"`
	DoubleValue *float64    `json:"doubleValue"`
	ArrayValue  *struct {
		Values []otelValue `json:"values"`
	} `json:"arrayValue"`
}

func (v otelValue) str() string {
	switch {
	case v.StringValue != nil:
		return *v.StringValue
	case v.IntValue != nil:
		return strconv.FormatFloat(float64(*v.IntValue), 'f', -1, 64)
	case v.DoubleValue != nil:
		return strconv.FormatFloat(*v.DoubleValue, 'f', -1, 64)
	case v.ArrayValue != nil && len(v.ArrayValue.Values) > 0:
		return v.ArrayValue.Values[0].str()
	}
	return ""
}

func (v otelValue) num() float64 {
	x, _ := strconv.ParseFloat(strings.TrimSpace(v.str()), 64)
	return x
}

func (s *otelSpan) attr(key string) (otelValue, bool) {
	for _, a := range s.Attributes {
		if a.Key == key {
			return a.Value, true
		}
	}
	return otelValue{}, false
}

func (s *otelSpan) op() uint8 {
	v, _ := s.attr("gen_ai.operation.name")
	return opOf(v.str())
}

// spanKey identifies a span within a file.
func spanKey(traceID, spanID string) int64 { return idOf(traceID + "/" + spanID) }

// parentInfo is what the second pass needs of a span that is not a tool
// call: its parent and its operation.
type parentInfo struct {
	parent int64 // spanKey of the parent, 0 for a root
	op     uint8
}

// readOTel reads an OTLP/JSON export in two streaming passes over the
// file: the first indexes the parent and operation of every span that is
// not a tool call (tool spans are leaves), the second turns model and
// tool spans into attempts, each in the turn of its nearest invoke_agent
// ancestor, else of its nearest chat span (itself for a chat span), else
// of its parent; the session is gen_ai.conversation.id, else the trace.
// Memory grows with the non-tool spans (two words each), not with the
// file.
func (c *Calibrator) readOTel(f *os.File, path string, src *Source) error {
	index := map[int64]parentInfo{}
	err := walkOTel(f, path, func(s *otelSpan, _ int64) error {
		if op := s.op(); op != opTool {
			var parent int64
			if s.ParentSpanID != "" {
				parent = spanKey(s.TraceID, s.ParentSpanID)
			}
			index[spanKey(s.TraceID, s.SpanID)] = parentInfo{parent, op}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("calibrate: %w", err)
	}
	_ = c.Section(nil) // no limits: nothing to refuse
	var rec trace.Record
	var bad []spanProblem // spans a scenario cannot hold, by offset
	err = walkOTel(f, path, func(s *otelSpan, off int64) error {
		op := s.op()
		if op != opModel && op != opTool {
			src.Skipped++
			return nil
		}
		otelRecord(&rec, s, op, index)
		if err := c.Add(&rec); err != nil {
			bad = append(bad, spanProblem{off, err})
			if len(c.problems)+len(bad) >= maxProblems {
				return errTooMany
			}
		}
		return nil
	})
	offsets := make([]int64, len(bad))
	for i, b := range bad {
		offsets[i] = b.off
	}
	for i, line := range linesAt(f, offsets) {
		c.problems = append(c.problems, &trace.Error{Name: path, Line: line, Err: bad[i].err})
	}
	if errors.Is(err, errTooMany) {
		return errTooMany
	}
	return err
}

// spanProblem is why a span cannot enter a scenario, and the offset in
// the file just past it.
type spanProblem struct {
	off int64
	err error
}

// turnOf finds a span's turn by the rule readOTel describes.
func turnOf(s *otelSpan, op uint8, index map[int64]parentInfo) int64 {
	self := spanKey(s.TraceID, s.SpanID)
	var chat int64
	if op == opModel {
		chat = self
	}
	k := int64(0)
	if s.ParentSpanID != "" {
		k = spanKey(s.TraceID, s.ParentSpanID)
	}
	parent := k
	for depth := 0; k != 0 && depth < 64; depth++ {
		info, ok := index[k]
		if !ok {
			break
		}
		if info.op == opAgent {
			return k
		}
		if info.op == opModel && chat == 0 {
			chat = k
		}
		k = info.parent
	}
	switch {
	case chat != 0:
		return chat
	case parent != 0:
		return parent
	}
	return idOf(s.TraceID)
}

// otelRecord turns a model or tool span into an attempt.
func otelRecord(rec *trace.Record, s *otelSpan, op uint8, index map[int64]parentInfo) {
	*rec = trace.Record{Attempt: 1, Turn: turnOf(s, op, index), Call: s.SpanID}
	if v, ok := s.attr("gen_ai.conversation.id"); ok && v.str() != "" {
		rec.Session = max(idOf(v.str()), 1)
	} else {
		rec.Session = max(idOf(s.TraceID), 1)
	}
	if v, ok := s.attr("http.request.resend_count"); ok {
		rec.Attempt = max(int(v.num())+1, 1)
	}
	rec.Start = float64(s.Start) / 1e9
	rec.Intended = rec.Start
	rec.End = float64(s.End) / 1e9 // one that ends before it starts is refused by trace.Record.Check
	if op == opModel {
		rec.Kind = trace.KindModel
	}
	if v, ok := s.attr("gen_ai.tool.name"); ok {
		rec.Tool = v.str()
	}
	for _, k := range []string{"server.address", "gen_ai.provider.name", "gen_ai.system"} {
		if v, ok := s.attr(k); ok && v.str() != "" {
			rec.Service = v.str()
			break
		}
	}
	if rec.Service == "" {
		rec.Service = cmpOr(rec.Tool, "unknown")
	}
	in, _ := s.attr("gen_ai.usage.input_tokens")
	out, _ := s.attr("gen_ai.usage.output_tokens")
	rec.Tokens = int64(in.num() + out.num())
	if v, ok := s.attr("http.response.header.x-ratelimit-limit-requests"); ok {
		rec.LimitRequests = v.num()
	}
	if v, ok := s.attr("http.response.header.x-ratelimit-limit-tokens"); ok {
		rec.LimitTokens = v.num()
	}
	if v, ok := s.attr("http.response.header.retry-after"); ok {
		rec.RetryAfter, rec.HasRetryAfter = v.num(), true
	}
	status, _ := s.attr("http.response.status_code")
	rec.Status = int(status.num())
	errType, hasErr := s.attr("error.type")
	code := strings.Trim(string(s.Status.Code), `"`)
	failed := code == "2" || code == "STATUS_CODE_ERROR"
	switch {
	case rec.Status != 0:
		rec.Outcome = outcomeOfStatus(rec.Status)
	case hasErr && errType.str() != "":
		rec.Outcome = outcomeOfError(errType.str())
	case failed:
		rec.Outcome = trace.OutcomeTransient
	default:
		rec.Outcome = trace.OutcomeSuccess
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// outcomeOfError classes an error.type value without a status.
func outcomeOfError(e string) string {
	e = strings.ToLower(e)
	switch {
	case strings.Contains(e, "429") || strings.Contains(e, "rate"):
		return trace.OutcomeRateLimited
	case strings.Contains(e, "overload") || strings.Contains(e, "529") || strings.Contains(e, "503"):
		return trace.OutcomeOverloaded
	case strings.Contains(e, "cancel"):
		return trace.OutcomeCancelled
	}
	return trace.OutcomeTransient
}

// walkOTel calls fn for every span of the OTLP/JSON documents in r
// (resourceSpans → scopeSpans → spans), decoding one span at a time.
func walkOTel(r io.ReadSeeker, path string, fn func(s *otelSpan, end int64) error) error {
	dec := json.NewDecoder(bufio.NewReaderSize(r, 64<<10))
	fail := func(err error) error {
		var se *json.SyntaxError
		off := dec.InputOffset()
		if errors.As(err, &se) {
			off = se.Offset
		}
		return &trace.Error{Name: path, Line: lineAt(r, off), Err: err}
	}
	var span otelSpan
	spans := func() error {
		return array(dec, func() error {
			span = otelSpan{}
			if err := dec.Decode(&span); err != nil {
				return err
			}
			return fn(&span, dec.InputOffset())
		})
	}
	scopes := func() error {
		return array(dec, func() error {
			return object(dec, map[string]func() error{"spans": spans})
		})
	}
	resources := func() error {
		return array(dec, func() error {
			return object(dec, map[string]func() error{"scopeSpans": scopes})
		})
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		} else if err != nil {
			return fail(err)
		}
		if d, ok := tok.(json.Delim); !ok || d != '{' {
			return fail(fmt.Errorf("want an OTLP/JSON object ({\"resourceSpans\": …}), found %v", tok))
		}
		if err := objectBody(dec, map[string]func() error{"resourceSpans": resources}); err != nil {
			return fail(err)
		}
	}
}

// object reads an object, giving the values of the keys in handlers to
// their functions and skipping the others.
func object(dec *json.Decoder, handlers map[string]func() error) error {
	if err := delim(dec, '{'); err != nil {
		return err
	}
	return objectBody(dec, handlers)
}

// objectBody reads an object after its '{'.
func objectBody(dec *json.Decoder, handlers map[string]func() error) error {
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		if h, ok := handlers[tok.(string)]; ok {
			err = h()
		} else {
			var skip json.RawMessage
			err = dec.Decode(&skip)
		}
		if err != nil {
			return err
		}
	}
	_, err := dec.Token() // '}'
	return err
}

// array calls each for every element of an array.
func array(dec *json.Decoder, each func() error) error {
	if err := delim(dec, '['); err != nil {
		return err
	}
	for dec.More() {
		if err := each(); err != nil {
			return err
		}
	}
	_, err := dec.Token() // ']'
	return err
}

func delim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("want %q, found %v", want, tok)
	}
	return nil
}

// lineAt returns the line number of byte offset off in r.
func lineAt(r io.ReadSeeker, off int64) int {
	return linesAt(r, []int64{off})[0]
}

// linesAt returns the line numbers of the byte offsets offs in r, which
// are in increasing order, in one pass over r from its start.
func linesAt(r io.ReadSeeker, offs []int64) []int {
	lines := make([]int, len(offs))
	if len(offs) == 0 {
		return lines
	}
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return lines
	}
	line, pos := 1, int64(0)
	buf := make([]byte, 64<<10)
	for i, off := range offs {
		for pos < off {
			n, err := r.Read(buf[:min(int64(len(buf)), off-pos)])
			line += bytes.Count(buf[:n], []byte{'\n'})
			pos += int64(n)
			if err != nil || n == 0 {
				break
			}
		}
		lines[i] = line
	}
	return lines
}
