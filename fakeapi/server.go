package fakeapi

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/bits"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/simbench/simbench/fakeapi/internal/wire"
	"github.com/simbench/simbench/spec"
	"golang.org/x/net/netutil"
)

// DefaultAddr is where Start listens when ServerConfig.Addr is empty: a free
// port on the IPv4 loopback.
const DefaultAddr = "127.0.0.1:0"

// Defaults of the connection limits in ServerConfig, used when a field is 0.
const (
	// DefaultReadHeaderTimeout is how long a client may take to send a
	// request's headers.
	DefaultReadHeaderTimeout = 5 * time.Second
	// DefaultReadTimeout is how long a client may take to send a whole
	// request, headers and body.
	DefaultReadTimeout = 30 * time.Second
	// DefaultIdleTimeout is how long a keep-alive connection may wait for
	// its next request before the server closes it.
	DefaultIdleTimeout = 60 * time.Second
	// DefaultMaxConns is how many connections each listener serves at once;
	// further clients wait in the kernel's accept queue.
	DefaultMaxConns = 1024
	// DefaultCloseWait is how long Shutdown (past its deadline) and Close
	// wait for the requests still being answered once their connections
	// are closed: a service that keeps working on a disconnect finishes
	// its answer for nobody first.
	DefaultCloseWait = time.Second
)

// ErrStillAnswering is returned (wrapped) by Shutdown and Close when
// requests were still being answered CloseWait after their connections
// were closed: Stats may then count them as in flight.
var ErrStillAnswering = errors.New("requests still being answered")

// ErrNonLoopback is returned (wrapped) by Start for a listen address that
// is not loopback when ServerConfig.AllowNonLoopback is not set.
var ErrNonLoopback = errors.New("not a loopback address")

// ServerConfig configures Start.
type ServerConfig struct {
	// Services are the services to serve; names must be unique.
	Services []ServiceConfig
	// Addr is the listen address ("": DefaultAddr). With PortPerService only
	// its host is used and each service gets a free port.
	Addr string
	// AllowNonLoopback must be set to listen on anything but a loopback
	// address; Start then prints a warning to Warn.
	AllowNonLoopback bool
	// PortPerService gives each service its own listener, serving at the
	// root; otherwise all share one listener under the prefix /NAME.
	PortPerService bool
	// Seed seeds each service's model; a service's stream depends only on
	// Seed and its name.
	Seed uint64
	// Warn receives warnings (nil: os.Stderr).
	Warn io.Writer
	// Clock, when set, returns the time since the epoch that the models see,
	// instead of the monotonic time since Start. Latencies still elapse in
	// real time. Tests use it to control rate limiting exactly.
	Clock func() time.Duration
	// ReadHeaderTimeout, ReadTimeout and IdleTimeout bound how long a
	// client may take to send a request's headers, to send the whole
	// request, and to send the next request on a kept-alive connection;
	// the server closes the connection after that (0: the Default*
	// constants; negative: no limit).
	ReadHeaderTimeout, ReadTimeout, IdleTimeout time.Duration
	// MaxConns bounds the connections each listener serves at once;
	// further clients wait to be accepted (0: DefaultMaxConns; negative: no
	// bound).
	MaxConns int
	// CloseWait bounds how long Shutdown, past its deadline, and Close wait
	// for the requests still being answered after their connections are
	// closed, so that Stats counts every request as finished (0:
	// DefaultCloseWait; negative: no wait).
	CloseWait time.Duration
	// TimeScale, when in (0, 1), plays the services faster than life: the
	// models run in the scenario's own time (real time ÷ TimeScale), with
	// the limits and latencies as configured, while latencies elapse and
	// advertised delays and resets are sent multiplied by TimeScale. A live
	// run at 0.01 thus plays ten minutes in six seconds without scaling any
	// limit up (0 or 1: real time). Ignored when Clock is set.
	TimeScale float64
	// Metrics serves Prometheus metrics at MetricsPath on every listener:
	// per service, the requests arrived, admitted and limited (by which
	// limit), those in flight, and a latency histogram.
	Metrics bool
	// OnRequest, when set, receives the Record of every request that
	// reached a service's model, once the server is done with it (token
	// counting and the model list are not recorded). It is called from
	// the requests' goroutines, concurrently: it must be safe for
	// concurrent use, and should return quickly.
	OnRequest func(Record)
}

// Server serves fake services over HTTP. Its methods are safe for
// concurrent use.
type Server struct {
	cfg   ServerConfig
	start time.Time
	// epoch is how long after start the models' time begins (SetEpoch).
	epoch     atomic.Int64
	services  []*service
	byName    map[string]*service
	listeners []*listener
	quit      chan struct{}
	quitOnce  sync.Once
	wg        sync.WaitGroup
	// answering counts the handlers running, which Shutdown and Close
	// wait for.
	answering active
	notFound  atomic.Int64
	metrics   *metrics // nil unless ServerConfig.Metrics
	// rounds counts the model requests of each client that names itself
	// and marks no retries (see conversationRetry; guarded by roundsMu).
	roundsMu sync.Mutex
	rounds   map[string]uint64
	// pending holds the logged requests in flight, conns the connections
	// they came on (see pendingSet; only while the server logs requests).
	pending pendingSet
	conns   conns
}

type service struct {
	cfg ServiceConfig // defaults applied
	url string
	ids atomic.Uint64
	mu  sync.Mutex
	m   *Model
	// earlyBy counts early retries by the rule that identified them
	// (guarded by mu).
	earlyBy [numRetryRules]int64
	// agentSeed seeds the fake model's tool calls (see AgentConfig).
	agentSeed uint64
	// routes are the service's write routes (WriteRoutes, WritePaths).
	routes []writeRoute
	// keys remembers writes by idempotency key (guarded by mu).
	keys writeKeys
}

type listener struct {
	srv *http.Server
	url string
}

// Start validates cfg, listens and serves until Shutdown or Close. Every
// problem with the configuration is reported at once.
func Start(cfg ServerConfig) (*Server, error) {
	cfg, host, err := checkServerConfig(cfg)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, start: time.Now(), byName: map[string]*service{}, quit: make(chan struct{})}
	if err := s.addServices(); err != nil {
		return nil, err
	}
	if cfg.Metrics {
		s.metrics = newMetrics(s)
	}
	if err := s.listenAll(host); err != nil {
		return nil, err
	}
	return s, nil
}

// checkServerConfig returns cfg with its defaults (Warn, Addr) and the
// host it listens on, or what is wrong with its server-wide settings. A
// listen address beyond loopback, when allowed, is warned about.
func checkServerConfig(cfg ServerConfig) (ServerConfig, string, error) {
	if len(cfg.Services) == 0 {
		return cfg, "", errors.New("fakeapi: no services to serve")
	}
	if cfg.TimeScale < 0 || cfg.TimeScale > 1 {
		return cfg, "", fmt.Errorf("fakeapi: time scale %g: want a factor in (0, 1], or 0 for real time", cfg.TimeScale)
	}
	if cfg.Warn == nil {
		cfg.Warn = os.Stderr
	}
	if cfg.Addr == "" {
		cfg.Addr = DefaultAddr
	}
	host, _, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return cfg, "", fmt.Errorf("fakeapi: listen address %q: %w", cfg.Addr, err)
	}
	if !isLoopback(host) {
		if !cfg.AllowNonLoopback {
			return cfg, "", fmt.Errorf("fakeapi: listen address %q: %w (fake services are refused anywhere but loopback unless AllowNonLoopback is set)", cfg.Addr, ErrNonLoopback)
		}
		fmt.Fprintf(cfg.Warn, "warning: fakeapi is listening on %s, reachable from other hosts\n", cfg.Addr)
	}
	return cfg, host, nil
}

// addServices builds a model for every configured service, reporting every
// problem at once: a name given twice or unusable as a path segment, files
// that do not load, a configuration the model refuses.
func (s *Server) addServices() error {
	var errs []error
	seen := map[string]bool{}
	for _, sc := range s.cfg.Services {
		if seen[sc.Name] {
			errs = append(errs, fmt.Errorf("fakeapi: service %q appears twice", sc.Name))
			continue
		}
		seen[sc.Name] = true
		if err := sc.LoadFiles(); err != nil {
			errs = append(errs, err)
			continue
		}
		if !s.cfg.PortPerService && s.cfg.Metrics && "/"+sc.Name == MetricsPath { // the name's other rules are spec.Config.Problems's
			errs = append(errs, fmt.Errorf("fakeapi: service %q: the name must be usable as a path segment", sc.Name))
		}
		sv, err := newService(sc, s.cfg.Seed)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		s.services = append(s.services, sv)
		s.byName[sc.Name] = sv
	}
	return errors.Join(errs...)
}

// newService returns the service sc describes, its model and its fake
// model's tool calls seeded from seed and the service's name alone.
func newService(sc ServiceConfig, seed uint64) (*service, error) {
	h := fnv.New64a()
	h.Write([]byte(sc.Name))
	m, err := NewModel(sc, rand.New(rand.NewPCG(seed, h.Sum64())))
	if err != nil {
		return nil, err
	}
	sv := &service{cfg: m.Config(), m: m, agentSeed: seed ^ bits.RotateLeft64(h.Sum64(), 29)}
	sv.routes = writeRoutes(&sv.cfg)
	return sv, nil
}

// listenAll starts the listeners on host and sets every service's URL: one
// free port per service with PortPerService, else one listener at
// ServerConfig.Addr serving each service under /NAME.
func (s *Server) listenAll(host string) error {
	if !s.cfg.PortPerService {
		u, err := s.listen(s.cfg.Addr, s)
		if err != nil {
			return err
		}
		for _, sv := range s.services {
			sv.url = u + "/" + sv.cfg.Name
		}
		return nil
	}
	for _, sv := range s.services {
		u, err := s.listen(net.JoinHostPort(host, "0"), s.serviceHandler(sv))
		if err != nil {
			s.Close()
			return err
		}
		sv.url = u
	}
	return nil
}

// listen serves h on a new listener at addr, within the connection limits
// of ServerConfig, and returns its base URL.
func (s *Server) listen(addr string, h http.Handler) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("fakeapi: %w", err)
	}
	url := "http://" + ln.Addr().String()
	if s.cfg.OnRequest != nil {
		ln = connsListener{Listener: ln, conns: &s.conns}
	}
	if n := limit(s.cfg.MaxConns, DefaultMaxConns); n > 0 {
		ln = netutil.LimitListener(ln, n)
	}
	l := &listener{
		srv: &http.Server{
			Handler:           s.track(h),
			ReadHeaderTimeout: limit(s.cfg.ReadHeaderTimeout, DefaultReadHeaderTimeout),
			ReadTimeout:       limit(s.cfg.ReadTimeout, DefaultReadTimeout),
			IdleTimeout:       limit(s.cfg.IdleTimeout, DefaultIdleTimeout),
		},
		url: url,
	}
	s.listeners = append(s.listeners, l)
	s.wg.Go(func() { _ = l.srv.Serve(ln) }) // returns ErrServerClosed on Shutdown/Close
	return l.url, nil
}

// limit is v, def when v is 0, and 0 (no limit, as net/http reads it) when
// v is negative.
func limit[T int | time.Duration](v, def T) T {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// URL returns the base URL of the named service ("" if there is none). For
// an openai-style service the SDK's base URL is URL + "/v1"; an
// anthropic-style service's SDK base URL is URL itself.
func (s *Server) URL(service string) string {
	if sv := s.byName[service]; sv != nil {
		return sv.url
	}
	return ""
}

// SDKBaseURL returns the base URL an official SDK takes for the named
// service, as Summary prints it: URL + "/v1" for an openai-style service
// (the OpenAI SDKs append /chat/completions, /responses, ...), URL itself
// for an anthropic-style one (the Anthropic SDKs append /v1/messages), and
// URL for a generic service. It is "" if there is no such service.
func (s *Server) SDKBaseURL(service string) string {
	sv := s.byName[service]
	if sv == nil {
		return ""
	}
	base, _ := wire.ProviderOf(sv.cfg.API).SDK(sv.url)
	return base
}

// SDKEnv returns the prefix of the environment variables the official SDK
// of the named service's API style reads ("OPENAI" for OPENAI_BASE_URL and
// OPENAI_API_KEY, "ANTHROPIC"), or "" when it has none or there is no such
// service.
func (s *Server) SDKEnv(service string) string {
	sv := s.byName[service]
	if sv == nil {
		return ""
	}
	_, env := wire.ProviderOf(sv.cfg.API).SDK(sv.url)
	return env
}

// SmallestRequest returns the smallest model request the named service's
// API style answers: its path below the service's URL ("" for a generic
// service, whose every path is a tool's) and JSON body; ok is false if
// there is no such service.
func (s *Server) SmallestRequest(service string) (path, body string, ok bool) {
	sv := s.byName[service]
	if sv == nil {
		return "", "", false
	}
	path, body = wire.ProviderOf(sv.cfg.API).SmallestRequest()
	return path, body, true
}

// Services returns the service names in configuration order.
func (s *Server) Services() []string {
	out := make([]string, len(s.services))
	for i, sv := range s.services {
		out[i] = sv.cfg.Name
	}
	return out
}

// Shutdown stops accepting requests, aborts hanging ones and waits for the
// rest to finish, until ctx is done; then it closes whatever is left,
// waits (at most ServerConfig.CloseWait) for the requests still being
// answered to end, and returns ctx's error. When Shutdown returns without
// ErrStillAnswering, every request has ended and Stats counts none in
// flight.
func (s *Server) Shutdown(ctx context.Context) error {
	s.quitOnce.Do(func() { close(s.quit) })
	var errs []error
	for _, l := range s.listeners {
		if err := l.srv.Shutdown(ctx); err != nil {
			errs = append(errs, err)
			l.srv.Close()
		}
	}
	s.wg.Wait()
	errs = append(errs, s.awaitHandlers())
	return errors.Join(errs...)
}

// Close stops the server at once, closing every connection, and waits (at
// most ServerConfig.CloseWait) for the requests still being answered to
// end.
func (s *Server) Close() error {
	s.quitOnce.Do(func() { close(s.quit) })
	var errs []error
	for _, l := range s.listeners {
		errs = append(errs, l.srv.Close())
	}
	s.wg.Wait()
	errs = append(errs, s.awaitHandlers())
	return errors.Join(errs...)
}

// SetEpoch makes the models' time (and so the services' timed events)
// count from t instead of from Start, so a driver can align it with the
// start of its run. Call it before sending requests: a later epoch makes
// the models' time stand still until it catches up. Ignored when
// ServerConfig.Clock is set.
func (s *Server) SetEpoch(t time.Time) {
	s.epoch.Store(int64(t.Sub(s.start)))
}

// Epoch returns the instant the models' time counts from: Start's, or
// the last SetEpoch's. A fixed window's edges fall a whole number of
// windows after it (in the scenario's time, at ServerConfig.TimeScale).
func (s *Server) Epoch() time.Time {
	return s.start.Add(time.Duration(s.epoch.Load()))
}

// now is the models' time.
func (s *Server) now() time.Duration {
	if s.cfg.Clock != nil {
		return s.cfg.Clock()
	}
	since := max(time.Since(s.start)-time.Duration(s.epoch.Load()), 0)
	if s.scaled() {
		return time.Duration(float64(since) / s.cfg.TimeScale)
	}
	return since
}

// scaled reports whether the models run faster than real time.
func (s *Server) scaled() bool {
	return s.cfg.Clock == nil && s.cfg.TimeScale > 0 && s.cfg.TimeScale != 1
}

// real turns a duration of the models' time into real time.
func (s *Server) real(d time.Duration) time.Duration {
	if !s.scaled() {
		return d
	}
	return time.Duration(float64(d) * s.cfg.TimeScale)
}

// realDecision is d with the delays a client sees in real time.
func (s *Server) realDecision(d Decision) Decision {
	d.RetryAfter, d.Wait, d.Latency = s.real(d.RetryAfter), s.real(d.Wait), s.real(d.Latency)
	d.FirstToken = s.real(d.FirstToken)
	for _, q := range d.quotas() {
		q.Reset = s.real(q.Reset)
	}
	d.DailyQuota.Reset = s.real(d.DailyQuota.Reset)
	return d
}

// API returns the API style of the named service (spec.APIGeneric for a
// name the server does not serve).
func (s *Server) API(service string) spec.APIStyle {
	if sv := s.byName[service]; sv != nil {
		return sv.cfg.API
	}
	return spec.APIGeneric
}
