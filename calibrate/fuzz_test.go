package calibrate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/simbench/simbench/scenarios"
)

// FuzzReadFile feeds arbitrary bytes to every trace format's reader: none
// panics, and whatever is read either is refused with an error or fits a
// scenario that holds exactly the tables meant and loads: calibrate never
// writes a scenario that does not load.
func FuzzReadFile(f *testing.F) {
	f.Add([]byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"a","spanId":"b","name":"execute_tool x","startTimeUnixNano":"1","endTimeUnixNano":"2000000","attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"execute_tool"}}]}]}]}]}`), uint8(0))
	f.Add([]byte("ts,dur,svc,code\n0,120,api,200\n1,130,api,429\n"), uint8(2))
	f.Add([]byte(`{"session":1,"turn":1,"call":"c","service":"api","attempt":1,"start":0,"end":0.2,"outcome":"success"}`+"\n"), uint8(1))
	f.Add([]byte(`{"simbench_trace":1,"strategy":"a","limits":{"a\"\n=":{"rpm":60}}}`+"\n"+`{"turn":1,"service":"a\"\n=","tool":"[x]","start":0,"end":0.2,"outcome":"rate_limited","tokens":99999999}`+"\n"+
		`{"turn":2,"service":"a\"\n=","tool":"[x]","start":3e7,"end":3e7,"outcome":"success","limit_requests":1e15}`+"\n"), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, format uint8) {
		dir := t.TempDir()
		path := filepath.Join(dir, "trace")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		c := New(Options{})
		formats := []Format{FormatAuto, FormatSimbench, FormatCSV, FormatOTel}
		opts := ReadOptions{Format: formats[int(format)%len(formats)]}
		if opts.Format == FormatCSV {
			opts.CSVColumns = map[string]string{"start": "ts", "latency_ms": "dur", "service": "svc", "status": "code", "tokens": "tok", "tool": "tool"}
		}
		if err := c.ReadFile(path, opts); err != nil {
			return
		}
		r, err := c.Fit()
		if err != nil {
			return
		}
		toml, files := r.Scenario("fuzz")
		if err := checkKeys(toml, r); err != nil {
			t.Fatalf("%v\n%s", err, toml)
		}
		for _, f := range files {
			if err := os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if len(toml) > scenarios.MaxFileBytes {
			return // WriteScenario refuses it, with exit 2
		}
		if _, err := scenarios.Parse(filepath.Join(dir, "fuzz.toml"), toml); err != nil {
			t.Fatalf("accepted traces give a scenario that does not load: %v\n%s", err, toml)
		}
	})
}
