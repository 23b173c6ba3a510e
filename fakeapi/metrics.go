package fakeapi

import (
	"net/http"
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
// the in-flight gauge are read from the models at scrape time, so they are
// the stats endpoint's numbers exactly (and drop to 0 on a reset, which
// Prometheus reads as a counter reset). The latency histogram is observed
// as admitted requests end.
type metrics struct {
	s        *Server
	reg      *prometheus.Registry
	handler  http.Handler
	latency  *prometheus.HistogramVec
	admitted *prometheus.Desc
	limited  *prometheus.Desc
	inFlight *prometheus.Desc
	arrived  *prometheus.Desc
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
			"Requests refused by a limit: rps, rpm, tpm, concurrency, itpm or otpm (429s, GET "+StatsPath+": rate_limited_by), or overload (529/503, errors.overloaded).",
			[]string{"service", "limit"}, nil),
		inFlight: prometheus.NewDesc(prometheus.BuildFQName(ns, sub, "in_flight_requests"),
			"Requests in flight now (GET "+StatsPath+": in_flight).", []string{"service"}, nil),
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
}

// Collect implements prometheus.Collector: one reading of every model's
// accounting.
func (m *metrics) Collect(ch chan<- prometheus.Metric) {
	for _, sv := range m.s.services {
		sv.mu.Lock()
		x := sv.m.Stats()
		sv.mu.Unlock()
		name := sv.cfg.Name
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
