package fakeapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/simbench/simbench/spec"
)

// scrape GETs url and parses the Prometheus text exposition.
func scrape(t *testing.T, c *http.Client, url string) map[string]*dto.MetricFamily {
	t.Helper()
	res, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("GET %s: %d", url, res.StatusCode)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// value returns the sample of family name whose labels include want, and
// whether there is one.
func value(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		for k, v := range want {
			found := false
			for _, l := range m.GetLabel() {
				if l.GetName() == k && l.GetValue() == v {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

// TestMetricsMatchStats drives a server with real requests, some rate
// limited by different limits, then checks that every counter at /metrics
// equals the stats endpoint's number.
func TestMetricsMatchStats(t *testing.T) {
	var clk manualClock
	s, c := startServer(t, ServerConfig{Clock: clk.now, Metrics: true, Services: []ServiceConfig{
		{Config: spec.Config{Name: "llm", RPS: 2, TPM: 100_000}},
		{Config: spec.Config{Name: "tool", RPM: 3}},
	}})
	for range 5 {
		do(t, c, "POST", s.URL("llm")+"/v1/chat/completions", chatBody)
		do(t, c, "GET", s.URL("tool")+"/items", "")
	}
	fams := scrape(t, c, s.MetricsURL())
	var st ServerStats
	res, err := c.Get(s.StatsURL())
	if err != nil {
		t.Fatal(err)
	}
	err = json.NewDecoder(res.Body).Decode(&st)
	res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	limitedAny := map[string]float64{}
	for _, svc := range []string{"llm", "tool"} {
		x := st.Services[svc]
		lbl := map[string]string{"service": svc}
		for name, want := range map[string]int64{
			"simbench_fakeapi_arrived_total":      x.Arrived,
			"simbench_fakeapi_admitted_total":     x.Accepted,
			"simbench_fakeapi_in_flight_requests": int64(x.InFlight),
			"simbench_fakeapi_latency_seconds":    x.Accepted, // every admitted request has ended
		} {
			if got, ok := value(fams, name, lbl); !ok || got != float64(want) {
				t.Errorf("%s{service=%q} = %v (present %v), stats say %d", name, svc, got, ok, want)
			}
		}
		for _, l := range limitLabels {
			want := x.RateLimitedBy[l]
			if l == "overload" {
				want = x.Errors["overloaded"]
			}
			got, ok := value(fams, "simbench_fakeapi_limited_total", map[string]string{"service": svc, "limit": l})
			if !ok || got != float64(want) {
				t.Errorf("limited_total{service=%q,limit=%q} = %v (present %v), stats say %d", svc, l, got, ok, want)
			}
			limitedAny[svc+"/"+l] = got
		}
	}
	// The run must have exercised what it checks.
	if limitedAny["llm/rps"] != 3 || limitedAny["tool/rpm"] != 2 {
		t.Errorf("limited = %v, want 3 rps 429s on llm and 2 rpm 429s on tool", limitedAny)
	}

	// A reset clears the counters and the histogram alike.
	req, _ := http.NewRequest("POST", strings.TrimSuffix(s.StatsURL(), StatsPath)+ResetPath, nil)
	res, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	fams = scrape(t, c, s.MetricsURL())
	for _, name := range []string{"simbench_fakeapi_admitted_total", "simbench_fakeapi_latency_seconds"} {
		if got, ok := value(fams, name, map[string]string{"service": "llm"}); !ok || got != 0 {
			t.Errorf("after a reset %s = %v (present %v), want 0", name, got, ok)
		}
	}
}

// TestMetricsOffByDefault checks that /metrics is no endpoint unless asked
// for, and that a service may then be called metrics.
func TestMetricsOffByDefault(t *testing.T) {
	s, c := startServer(t, ServerConfig{Services: []ServiceConfig{{Config: spec.Config{Name: "api"}}}})
	if s.MetricsURL() != "" || s.MetricsHandler() != nil {
		t.Fatal("metrics served without ServerConfig.Metrics")
	}
	if r := do(t, c, "GET", strings.TrimSuffix(s.StatsURL(), StatsPath)+MetricsPath, ""); r.status != 404 {
		t.Fatalf("GET /metrics: %d, want 404", r.status)
	}
	if _, err := Start(ServerConfig{Metrics: true, Services: []ServiceConfig{{Config: spec.Config{Name: "metrics"}}}}); err == nil {
		t.Fatal("a service named metrics was accepted on the shared listener beside /metrics")
	}
}

// TestMetricsPerServicePort checks /metrics on a service's own listener.
func TestMetricsPerServicePort(t *testing.T) {
	s, c := startServer(t, ServerConfig{Metrics: true, PortPerService: true, Services: []ServiceConfig{{Config: spec.Config{Name: "a"}}, {Config: spec.Config{Name: "b"}}}})
	do(t, c, "GET", s.URL("b")+"/x", "")
	fams := scrape(t, c, s.URL("a")+MetricsPath)
	if got, _ := value(fams, "simbench_fakeapi_admitted_total", map[string]string{"service": "b"}); got != 1 {
		t.Errorf("admitted_total{service=b} = %v on a's listener, want 1", got)
	}
}

// TestMetricsCarryEveryStat drives a server into 429s, early retries,
// writes applied twice and unknown paths, then holds every number of the
// stats endpoint's JSON — read as JSON, not through Stats — to the metric
// of its name: a field added to Stats without a metric fails it.
func TestMetricsCarryEveryStat(t *testing.T) {
	var clk manualClock
	s, c := startServer(t, ServerConfig{Clock: clk.now, Metrics: true, Services: []ServiceConfig{
		{Config: spec.Config{Name: "llm", RPS: 2, TPM: 100_000}},
		{Config: spec.Config{Name: "store"}},
	}})
	for range 3 {
		do(t, c, "POST", s.URL("llm")+"/v1/chat/completions", chatBody, "X-Stainless-Retry-Count", "0")
	}
	// A marked retry before the delay the 429 gave: early.
	do(t, c, "POST", s.URL("llm")+"/v1/chat/completions", chatBody, "X-Stainless-Retry-Count", "1")
	for range 2 {
		do(t, c, "PUT", s.URL("store")+"/tools/save", `{"q":1}`, "Idempotency-Key", "w1")
	}
	res, err := c.Get(strings.TrimSuffix(s.StatsURL(), StatsPath) + "/no-such-service/x")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()

	fams := scrape(t, c, s.MetricsURL())
	res, err = c.Get(s.StatsURL())
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Services map[string]map[string]json.RawMessage `json:"services"`
		NotFound float64                               `json:"not_found"`
	}
	err = json.NewDecoder(res.Body).Decode(&st)
	res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := value(fams, "simbench_fakeapi_not_found_total", nil); !ok || got != st.NotFound || got != 1 {
		t.Errorf("not_found_total = %v (present %v), stats say %v, want 1", got, ok, st.NotFound)
	}
	// The metric of each JSON name, and a map's label.
	named := map[string]string{"arrived": "arrived_total", "accepted": "admitted_total", "in_flight": "in_flight_requests",
		"rate_limited_by": "limited_total", "peak_concurrency": "peak_concurrency",
		"cancelled_work_s": "cancelled_work_seconds_total", "wasted_work_s": "wasted_work_seconds_total"}
	labels := map[string]string{"rate_limited_by": "limit", "errors": "class", "early_retries_by": "rule"}
	metricOf := func(key string) string {
		if n, ok := named[key]; ok {
			return "simbench_fakeapi_" + n
		}
		return "simbench_fakeapi_" + key + "_total"
	}
	seen := map[string]float64{}
	for svc, fields := range st.Services {
		for key, raw := range fields {
			if key == "service" || key == "timeline" {
				continue
			}
			var n float64
			if json.Unmarshal(raw, &n) == nil {
				got, ok := value(fams, metricOf(key), map[string]string{"service": svc})
				if !ok || got != n {
					t.Errorf("%s{service=%q} = %v (present %v), stats' %s say %v", metricOf(key), svc, got, ok, key, n)
				}
				seen[svc+"/"+key] = n
				continue
			}
			var m map[string]float64
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Errorf("stats' %s of %s is neither a number nor a map of numbers: %s", key, svc, raw)
				continue
			}
			for k, n := range m {
				got, ok := value(fams, metricOf(key), map[string]string{"service": svc, labels[key]: k})
				if !ok || got != n {
					t.Errorf("%s{service=%q,%s=%q} = %v (present %v), stats' %s say %v", metricOf(key), svc, labels[key], k, got, ok, key, n)
				}
			}
		}
	}
	// The run must have exercised what it checks.
	if seen["llm/early_retries"] != 1 || seen["llm/rate_limited"] != 2 || seen["store/writes_applied_twice"] != 1 {
		t.Errorf("early retries %v, 429s %v, writes applied twice %v; want 1, 2 and 1",
			seen["llm/early_retries"], seen["llm/rate_limited"], seen["store/writes_applied_twice"])
	}
}
