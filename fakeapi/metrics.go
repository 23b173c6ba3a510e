package fakeapi

import (
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// MetricsPath serves the Prometheus metrics when ServerConfig.Metrics is
// set, on every listener.
const MetricsPath = "/metrics"

// LatencyBuckets are the upper bounds, in seconds, of the latency
// histogram: 5 ms doubling to about 82 s.
var LatencyBuckets = prometheus.ExponentialBuckets(0.005, 2, 15)

// metrics exports a server's accounting to Prometheus. The counters and
// the gauges are read from the server's Stats at scrape time, so they are
// the stats endpoint's numbers exactly (and drop to 0 on a reset, which
// Prometheus reads as a counter reset): every number of Stats and
// ServerStats is exported (see statFields). The latency histogram is
// observed as admitted requests end.
type metrics struct {
	s        *Server
	reg      *prometheus.Registry
	handler  http.Handler
	latency  *prometheus.HistogramVec
	admitted *prometheus.Desc
	limited  *prometheus.Desc
	inFlight *prometheus.Desc
	arrived  *prometheus.Desc
	notFound *prometheus.Desc
	stats    []statField
}

// statField is a number of Stats, or a map of them, exported as a metric
// of the same name: simbench_fakeapi_NAME_total for a counter (a name in
// seconds, ending _s, as NAME_seconds_total), simbench_fakeapi_NAME for a
// gauge; a map's keys are the values of its label.
type statField struct {
	index int
	desc  *prometheus.Desc
	gauge bool
}

// statNamed are the Stats fields exported under names of their own (see
// newMetrics), or not at all: the service (a label), the timeline and the
// split by API key (a key is a secret, not a label value).
var statNamed = map[string]bool{"service": true, "timeline": true, "arrived": true, "accepted": true, "rate_limited_by": true, "in_flight": true, "keys": true}

// statGauges are the Stats numbers that are not counters.
var statGauges = map[string]bool{"peak_concurrency": true}

// statLabels name the label of each map of Stats.
var statLabels = map[string]string{"errors": "class", "early_retries_by": "rule"}

// statMetricName is the metric of the Stats field whose JSON name is name.
func statMetricName(name string, gauge bool) string {
	if base, ok := strings.CutSuffix(name, "_s"); ok {
		name = base + "_seconds"
	}
	if !gauge {
		name += "_total"
	}
	return prometheus.BuildFQName("simbench", "fakeapi", name)
}

// statFields lists the Stats fields exported by name (every number and
// map of numbers not in statNamed).
func statFields() []statField {
	t := reflect.TypeFor[Stats]()
	var fs []statField
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if statNamed[name] {
			continue
		}
		labels := []string{"service"}
		switch f.Type.Kind() {
		case reflect.Int, reflect.Int64, reflect.Float64:
		case reflect.Map:
			labels = append(labels, statLabels[name])
		default:
			panic("fakeapi: Stats." + f.Name + " has no metric")
		}
		gauge := statGauges[name]
		fs = append(fs, statField{index: i, gauge: gauge,
			desc: prometheus.NewDesc(statMetricName(name, gauge), "Per service: "+name+" of GET "+StatsPath+".", labels, nil)})
	}
	return fs
}

// limitLabels are the values of the limit label of
// simbench_fakeapi_limited_total: the Stats.RateLimitedBy keys, and
// overload for 529/503 answers (Stats.Errors["overloaded"]).
var limitLabels = []string{"rps", "rpm", "tpm", "concurrency", "overload"}

func newMetrics(s *Server) *metrics {
	const ns, sub = "simbench", "fakeapi"
	m := &metrics{
		s:   s,
		reg: prometheus.NewRegistry(),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "latency_seconds",
			Help:    "Time admitted requests took from arrival to the end of their response, in the scenario's seconds.",
			Buckets: LatencyBuckets}, []string{"service"}),
		arrived: prometheus.NewDesc(prometheus.BuildFQName(ns, sub, "arrived_total"),
			"Requests that reached a service's model (GET "+StatsPath+": arrived).", []string{"service"}, nil),
		admitted: prometheus.NewDesc(prometheus.BuildFQName(ns, sub, "admitted_total"),
			"Requests admitted, including those that later fail, hang or reset (GET "+StatsPath+": accepted).", []string{"service"}, nil),
		limited: prometheus.NewDesc(prometheus.BuildFQName(ns, sub, "limited_total"),
			"Requests refused by a limit: rps, rpm, tpm, concurrency, itpm, otpm, rpd or tpd (429s, GET "+StatsPath+": rate_limited_by), or overload (529/503, errors.overloaded).",
			[]string{"service", "limit"}, nil),
		inFlight: prometheus.NewDesc(prometheus.BuildFQName(ns, sub, "in_flight_requests"),
			"Requests in flight now (GET "+StatsPath+": in_flight).", []string{"service"}, nil),
		notFound: prometheus.NewDesc(prometheus.BuildFQName(ns, sub, "not_found_total"),
			"Requests to paths no service answers (GET "+StatsPath+": not_found).", nil, nil),
		stats: statFields(),
	}
	for _, sv := range s.services {
		m.latency.WithLabelValues(sv.cfg.Name) // export empty histograms from the start
	}
	m.reg.MustRegister(m, m.latency)
	m.handler = promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
	return m
}

// Describe implements prometheus.Collector for the scrape-time metrics.
func (m *metrics) Describe(ch chan<- *prometheus.Desc) {
	ch <- m.arrived
	ch <- m.admitted
	ch <- m.limited
	ch <- m.inFlight
	ch <- m.notFound
	for _, f := range m.stats {
		ch <- f.desc
	}
}

// Collect implements prometheus.Collector: one reading of the server's
// accounting.
func (m *metrics) Collect(ch chan<- prometheus.Metric) {
	st := m.s.Stats()
	ch <- prometheus.MustNewConstMetric(m.notFound, prometheus.CounterValue, float64(st.NotFound))
	for name, x := range st.Services {
		ch <- prometheus.MustNewConstMetric(m.arrived, prometheus.CounterValue, float64(x.Arrived), name)
		ch <- prometheus.MustNewConstMetric(m.admitted, prometheus.CounterValue, float64(x.Accepted), name)
		for _, l := range limitLabels {
			n := x.RateLimitedBy[l]
			if l == "overload" {
				n = x.Errors[KindOverloaded.String()]
			}
			ch <- prometheus.MustNewConstMetric(m.limited, prometheus.CounterValue, float64(n), name, l)
		}
		ch <- prometheus.MustNewConstMetric(m.inFlight, prometheus.GaugeValue, float64(x.InFlight), name)
		v := reflect.ValueOf(x)
		for _, f := range m.stats {
			kind := prometheus.CounterValue
			if f.gauge {
				kind = prometheus.GaugeValue
			}
			switch fv := v.Field(f.index); fv.Kind() {
			case reflect.Map:
				for it := fv.MapRange(); it.Next(); {
					ch <- prometheus.MustNewConstMetric(f.desc, kind, float64(it.Value().Int()), name, it.Key().String())
				}
			case reflect.Float64:
				ch <- prometheus.MustNewConstMetric(f.desc, kind, fv.Float(), name)
			default:
				ch <- prometheus.MustNewConstMetric(f.desc, kind, float64(fv.Int()), name)
			}
		}
	}
}

// observe records the latency of an admitted request that arrived at
// (models' time) and has now ended.
func (m *metrics) observe(sv *service, arrived time.Duration) {
	m.latency.WithLabelValues(sv.cfg.Name).Observe((m.s.now() - arrived).Seconds())
}

// reset clears the latency histogram along with the accounting.
func (m *metrics) reset() {
	m.latency.Reset()
	for _, sv := range m.s.services {
		m.latency.WithLabelValues(sv.cfg.Name)
	}
}

// MetricsHandler returns the handler of MetricsPath, or nil when
// ServerConfig.Metrics is not set; mount it elsewhere to serve the metrics
// on another address.
func (s *Server) MetricsHandler() http.Handler {
	if s.metrics == nil {
		return nil
	}
	return s.metrics.handler
}

// MetricsURL returns the URL of the metrics endpoint on the first listener,
// or "" when ServerConfig.Metrics is not set.
func (s *Server) MetricsURL() string {
	if s.metrics == nil {
		return ""
	}
	return s.listeners[0].url + MetricsPath
}
