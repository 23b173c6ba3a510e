package trace

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzReader feeds arbitrary bytes to the reader: it never panics, and it
// either reads records or stops with a *Error naming the input and line.
func FuzzReader(f *testing.F) {
	f.Add([]byte(`{"scenario":"x","strategy":"s","seed":1}` + "\n" + `{"session":1,"turn":2,"call":"c","service":"api","attempt":1,"start":0.5,"end":0.75,"outcome":"success","status":200}` + "\n"))
	f.Add([]byte("{\"start\":1e400}\n"))
	f.Add([]byte("not json\n"))
	f.Add([]byte("{\"call\":\"\\u00e9\\ud800\"}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReader(bytes.NewReader(data), "fuzz.jsonl")
		for r.Next() {
			_ = r.Record()
		}
		if err := r.Err(); err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Name != "fuzz.jsonl" || e.Line < 1 {
				t.Fatalf("error %v does not name the input and a line", err)
			}
		}
	})
}
