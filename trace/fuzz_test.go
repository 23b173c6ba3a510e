package trace

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzReader feeds arbitrary bytes to the reader: it never panics, every
// record it returns passes Check, and each bad line is a *Error naming the
// input and a line after the last one, skipped (Skip) to read on.
func FuzzReader(f *testing.F) {
	f.Add([]byte(`{"scenario":"x","strategy":"s","seed":1}` + "\n" + `{"session":1,"turn":2,"call":"c","service":"api","attempt":1,"start":0.5,"end":0.75,"outcome":"success","status":200}` + "\n"))
	f.Add([]byte("{\"start\":1e400}\n"))
	f.Add([]byte("not json\n"))
	f.Add([]byte("{\"call\":\"\\u00e9\\ud800\"}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReader(bytes.NewReader(data), "fuzz.jsonl")
		last := 0
		for {
			for r.Next() {
				if err := r.Record().Check(); err != nil {
					t.Fatalf("Next returned a record Check refuses: %v", err)
				}
			}
			err := r.Err()
			if err == nil {
				break
			}
			var e *Error
			if !errors.As(err, &e) || e.Name != "fuzz.jsonl" || e.Line < 1 || e.Line <= last {
				t.Fatalf("error %v does not name the input and a line after %d", err, last)
			}
			last = e.Line
			if !r.Skip() {
				break
			}
		}
	})
}
