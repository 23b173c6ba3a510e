package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// schema checks a JSON document against the Go type it decodes into,
// before it is decoded: every value of the wrong type (a string where a
// number goes, a fraction where a whole number goes, a number out of the
// type's range), every null where the type has no null (only AnswerMs,
// pointers, slices and maps do), and every required field missing, each
// with its path, all at once. Keys the type does not know are skipped, so
// files written by a newer simbench still read. It streams the document's
// tokens: memory does not grow with it.
type schema struct {
	dec      *json.Decoder
	file     string
	problems *problems
	// required lists, per struct type, the JSON fields a file must hold.
	required map[reflect.Type][]string
}

var (
	answerMsType    = reflect.TypeFor[AnswerMs]()
	rawMessageType  = reflect.TypeFor[json.RawMessage]()
	errSchemaStop   = errors.New("too many problems")
	fieldCache      sync.Map // reflect.Type → map[string]reflect.StructField
	marshalerType   = reflect.TypeFor[json.Marshaler]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
)

// checkSchema checks data against t (see schema).
func checkSchema(file string, data []byte, t reflect.Type, required map[reflect.Type][]string, ps *problems) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	s := &schema{dec: dec, file: file, problems: ps, required: required}
	err := s.value("", t)
	if err == nil {
		if _, err = dec.Token(); err == io.EOF {
			return
		} else if err == nil {
			err = errors.New("more than one JSON value")
		}
	}
	if err != errSchemaStop {
		ps.add("", "not valid JSON: %v", syntaxText(err, data))
	}
}

// syntaxText says where a syntax error is, as a line and column.
func syntaxText(err error, data []byte) string {
	var se *json.SyntaxError
	if errors.As(err, &se) && se.Offset <= int64(len(data)) {
		before := data[:se.Offset]
		line := bytes.Count(before, []byte{'\n'}) + 1
		col := len(before) - bytes.LastIndexByte(before, '\n')
		return fmt.Sprintf("%v at line %d, column %d", err, line, col)
	}
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return "the file ends inside a value"
	}
	return err.Error()
}

// value reads one value at path, which t decodes.
func (s *schema) value(path string, t reflect.Type) error {
	tok, err := s.dec.Token()
	if err != nil {
		return err
	}
	if tok == nil {
		if ownJSON(t) {
			return nil // its own encoding (Interval writes infinite bounds as null)
		}
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
			return nil
		}
		if t == answerMsType {
			return nil
		}
		return s.add(path, "is null; want %s", want(t))
	}
	if t == rawMessageType || t.Kind() == reflect.Interface || ownJSON(t) {
		return s.skip(tok)
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		if d, ok := tok.(json.Delim); ok && d == '{' {
			return s.object(path, t)
		}
	case reflect.Map:
		if d, ok := tok.(json.Delim); ok && d == '{' {
			return s.mapValue(path, t)
		}
	case reflect.Slice, reflect.Array:
		if d, ok := tok.(json.Delim); ok && d == '[' {
			for i := 0; s.dec.More(); i++ {
				if err := s.value(fmt.Sprintf("%s[%d]", path, i), t.Elem()); err != nil {
					return err
				}
			}
			_, err := s.dec.Token()
			return err
		}
	case reflect.String:
		if _, ok := tok.(string); ok {
			return nil
		}
	case reflect.Bool:
		if _, ok := tok.(bool); ok {
			return nil
		}
	case reflect.Float32, reflect.Float64:
		if n, ok := tok.(json.Number); ok {
			if _, err := strconv.ParseFloat(string(n), 64); err != nil {
				return s.add(path, "is %s, beyond the range of a number", n)
			}
			return nil
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if n, ok := tok.(json.Number); ok {
			if _, err := strconv.ParseInt(string(n), 10, t.Bits()); err != nil {
				return s.add(path, "is %s; want %s", n, want(t))
			}
			return nil
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if n, ok := tok.(json.Number); ok {
			if _, err := strconv.ParseUint(string(n), 10, t.Bits()); err != nil {
				return s.add(path, "is %s; want %s", n, want(t))
			}
			return nil
		}
	}
	if err := s.add(path, "is %s; want %s", describe(tok), want(t)); err != nil {
		return err
	}
	return s.skip(tok)
}

// ownJSON reports a type with its own JSON encoding (other than AnswerMs,
// which the walk knows): what it accepts is its own business, so its value
// is skipped, null included, and json.Unmarshal has the last word.
func ownJSON(t reflect.Type) bool {
	if t == answerMsType {
		return false
	}
	return t.Implements(marshalerType) || reflect.PointerTo(t).Implements(unmarshalerType)
}

// object reads the fields of a struct's object, its '{' read.
func (s *schema) object(path string, t reflect.Type) error {
	fields := jsonFields(t)
	seen := map[string]bool{}
	for s.dec.More() {
		tok, err := s.dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		seen[key] = true
		f, ok := fields[key]
		if !ok {
			// A key this simbench does not know: a newer one's field.
			if err := s.skipNext(); err != nil {
				return err
			}
			continue
		}
		if err := s.value(join(path, key), f.Type); err != nil {
			return err
		}
	}
	for _, k := range s.required[t] {
		if !seen[k] {
			if err := s.add(join(path, k), "is missing"); err != nil {
				return err
			}
		}
	}
	_, err := s.dec.Token()
	return err
}

// mapValue reads a map's object, its '{' read.
func (s *schema) mapValue(path string, t reflect.Type) error {
	for s.dec.More() {
		tok, err := s.dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		if err := s.value(join(path, strconv.Quote(key)), t.Elem()); err != nil {
			return err
		}
	}
	_, err := s.dec.Token()
	return err
}

// skipNext skips the next value; skip the rest of the one tok began.
func (s *schema) skipNext() error {
	tok, err := s.dec.Token()
	if err != nil {
		return err
	}
	return s.skip(tok)
}

func (s *schema) skip(tok json.Token) error {
	d, ok := tok.(json.Delim)
	if !ok || d == '}' || d == ']' {
		return nil
	}
	for depth := 1; depth > 0; {
		tok, err := s.dec.Token()
		if err != nil {
			return err
		}
		if d, ok := tok.(json.Delim); ok {
			if d == '{' || d == '[' {
				depth++
			} else {
				depth--
			}
		}
	}
	return nil
}

// add records a problem; past the cap it stops the walk.
func (s *schema) add(path, format string, args ...any) error {
	s.problems.add(path, format, args...)
	if s.problems.full() {
		return errSchemaStop
	}
	return nil
}

// jsonFields maps a struct's JSON field names to its fields.
func jsonFields(t reflect.Type) map[string]reflect.StructField {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]reflect.StructField)
	}
	m := map[string]reflect.StructField{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		m[name] = f
	}
	fieldCache.Store(t, m)
	return m
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// want names what a value of t is, for a problem.
func want(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Float32, reflect.Float64:
		if t == answerMsType {
			return "a number or null"
		}
		return "a number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number ≥ 0"
	}
	return "a whole number"
}

// describe names a JSON token, for a problem.
func describe(tok json.Token) string {
	switch v := tok.(type) {
	case json.Delim:
		if v == '{' {
			return "an object"
		}
		return "an array"
	case string:
		if len(v) > 40 {
			v = v[:40] + "…"
		}
		return "the string " + strconv.Quote(v)
	case bool:
		return strconv.FormatBool(v)
	case json.Number:
		return string(v)
	}
	return fmt.Sprint(tok)
}
