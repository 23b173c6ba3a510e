package calibrate

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzReadFile feeds arbitrary bytes to every trace format's reader: none
// panics, and whatever is read, Fit either fits or says why it cannot.
func FuzzReadFile(f *testing.F) {
	f.Add([]byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"a","spanId":"b","name":"execute_tool x","startTimeUnixNano":"1","endTimeUnixNano":"2000000","attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"execute_tool"}}]}]}]}]}`), uint8(0))
	f.Add([]byte("ts,dur,svc,code\n0,120,api,200\n1,130,api,429\n"), uint8(2))
	f.Add([]byte(`{"session":1,"turn":1,"call":"c","service":"api","attempt":1,"start":0,"end":0.2,"outcome":"success"}`+"\n"), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, format uint8) {
		path := filepath.Join(t.TempDir(), "trace")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		c := New(Options{})
		formats := []Format{FormatAuto, FormatSimbench, FormatCSV, FormatOTel}
		opts := ReadOptions{Format: formats[int(format)%len(formats)]}
		if opts.Format == FormatCSV {
			opts.CSVColumns = map[string]string{"start": "ts", "latency_ms": "dur", "service": "svc", "status": "code"}
		}
		if err := c.ReadFile(path, opts); err != nil {
			return
		}
		_, _ = c.Fit()
	})
}
