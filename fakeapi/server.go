package fakeapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/bits"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/netutil"

	"github.com/simbench/simbench/spec"
)

// Paths of the accounting endpoints, on every listener.
const (
	// StatsPath answers GET with ServerStats as JSON.
	StatsPath = "/_simbench/stats"
	// ResetPath clears the accounting on POST.
	ResetPath = "/_simbench/reset"
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
)

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
}

// ServerStats is the accounting of every service on a server, as served at
// StatsPath.
type ServerStats struct {
	// Services maps service names to their accounting.
	Services map[string]Stats `json:"services"`
	// NotFound counts requests to paths no service answers.
	NotFound int64 `json:"not_found"`
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
	notFound  atomic.Int64
	metrics   *metrics // nil unless ServerConfig.Metrics
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
}

type listener struct {
	srv *http.Server
	url string
}

// Start validates cfg, listens and serves until Shutdown or Close. Every
// problem with the configuration is reported at once.
func Start(cfg ServerConfig) (*Server, error) {
	if len(cfg.Services) == 0 {
		return nil, errors.New("fakeapi: no services to serve")
	}
	if cfg.TimeScale < 0 || cfg.TimeScale > 1 {
		return nil, fmt.Errorf("fakeapi: time scale %g: want a factor in (0, 1], or 0 for real time", cfg.TimeScale)
	}
	if cfg.Warn == nil {
		cfg.Warn = os.Stderr
	}
	if cfg.Addr == "" {
		cfg.Addr = DefaultAddr
	}
	host, _, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("fakeapi: listen address %q: %w", cfg.Addr, err)
	}
	if !isLoopback(host) {
		if !cfg.AllowNonLoopback {
			return nil, fmt.Errorf("fakeapi: listen address %q: %w (fake services are refused anywhere but loopback unless AllowNonLoopback is set)", cfg.Addr, ErrNonLoopback)
		}
		fmt.Fprintf(cfg.Warn, "warning: fakeapi is listening on %s, reachable from other hosts\n", cfg.Addr)
	}
	s := &Server{cfg: cfg, start: time.Now(), byName: map[string]*service{}, quit: make(chan struct{})}
	var errs []error
	seen := map[string]bool{}
	for _, sc := range cfg.Services {
		if seen[sc.Name] {
			errs = append(errs, fmt.Errorf("fakeapi: service %q appears twice", sc.Name))
			continue
		}
		seen[sc.Name] = true
		if err := sc.LoadFiles(); err != nil {
			errs = append(errs, err)
			continue
		}
		if !cfg.PortPerService && cfg.Metrics && "/"+sc.Name == MetricsPath { // the name's other rules are spec.Config.Problems's
			errs = append(errs, fmt.Errorf("fakeapi: service %q: the name must be usable as a path segment", sc.Name))
		}
		h := fnv.New64a()
		h.Write([]byte(sc.Name))
		m, err := NewModel(sc, rand.New(rand.NewPCG(cfg.Seed, h.Sum64())))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		sv := &service{cfg: m.Config(), m: m, agentSeed: cfg.Seed ^ bits.RotateLeft64(h.Sum64(), 29)}
		sv.routes = writeRoutes(&sv.cfg)
		s.services = append(s.services, sv)
		s.byName[sc.Name] = sv
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if cfg.Metrics {
		s.metrics = newMetrics(s)
	}

	listen := func(addr string, h http.Handler) (string, error) {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return "", fmt.Errorf("fakeapi: %w", err)
		}
		url := "http://" + ln.Addr().String()
		if n := limit(cfg.MaxConns, DefaultMaxConns); n > 0 {
			ln = netutil.LimitListener(ln, n)
		}
		l := &listener{
			srv: &http.Server{
				Handler:           h,
				ReadHeaderTimeout: limit(cfg.ReadHeaderTimeout, DefaultReadHeaderTimeout),
				ReadTimeout:       limit(cfg.ReadTimeout, DefaultReadTimeout),
				IdleTimeout:       limit(cfg.IdleTimeout, DefaultIdleTimeout),
			},
			url: url,
		}
		s.listeners = append(s.listeners, l)
		s.wg.Go(func() { _ = l.srv.Serve(ln) }) // returns ErrServerClosed on Shutdown/Close
		return l.url, nil
	}
	if cfg.PortPerService {
		for _, sv := range s.services {
			u, err := listen(net.JoinHostPort(host, "0"), s.serviceHandler(sv))
			if err != nil {
				s.Close()
				return nil, err
			}
			sv.url = u
		}
	} else {
		u, err := listen(cfg.Addr, s)
		if err != nil {
			return nil, err
		}
		for _, sv := range s.services {
			sv.url = u + "/" + sv.cfg.Name
		}
	}
	return s, nil
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
	if sv.cfg.API == spec.APIOpenAI {
		return sv.url + "/v1"
	}
	return sv.url
}

// Services returns the service names in configuration order.
func (s *Server) Services() []string {
	out := make([]string, len(s.services))
	for i, sv := range s.services {
		out[i] = sv.cfg.Name
	}
	return out
}

// StatsURL returns the URL of the accounting endpoint (on the first listener).
func (s *Server) StatsURL() string { return s.listeners[0].url + StatsPath }

// Stats returns every service's accounting.
func (s *Server) Stats() ServerStats {
	st := ServerStats{Services: make(map[string]Stats, len(s.services)), NotFound: s.notFound.Load()}
	for _, sv := range s.services {
		sv.mu.Lock()
		x := sv.m.Stats()
		x.EarlyRetriesBy = make(map[string]int64, numRetryRules)
		for i, n := range sv.earlyBy {
			x.EarlyRetriesBy[retryRuleNames[i]] = n
		}
		st.Services[sv.cfg.Name] = x
		sv.mu.Unlock()
	}
	return st
}

// Reset clears every service's accounting (limiter state is kept).
func (s *Server) Reset() {
	for _, sv := range s.services {
		sv.mu.Lock()
		sv.m.ResetStats()
		sv.earlyBy = [numRetryRules]int64{}
		sv.mu.Unlock()
	}
	s.notFound.Store(0)
	if s.metrics != nil {
		s.metrics.reset()
	}
}

// Shutdown stops accepting requests, aborts hanging ones and waits for the
// rest to finish, until ctx is done; then it closes whatever is left and
// returns ctx's error.
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
	return errors.Join(errs...)
}

// Close stops the server at once, closing every connection.
func (s *Server) Close() error {
	s.quitOnce.Do(func() { close(s.quit) })
	var errs []error
	for _, l := range s.listeners {
		errs = append(errs, l.srv.Close())
	}
	s.wg.Wait()
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
	d.Requests.Reset, d.TokenQuota.Reset = s.real(d.Requests.Reset), s.real(d.TokenQuota.Reset)
	d.InputTokenQuota.Reset, d.OutputTokenQuota.Reset = s.real(d.InputTokenQuota.Reset), s.real(d.OutputTokenQuota.Reset)
	d.FirstToken = s.real(d.FirstToken)
	return d
}

// ServeHTTP serves the shared listener: accounting endpoints, then services
// by path prefix, then 404 listing the known paths.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	if p == MetricsPath && s.metrics != nil {
		s.metrics.handler.ServeHTTP(w, r)
		return
	}
	if strings.HasPrefix(p, "/_simbench/") {
		s.serveAdmin(w, r)
		return
	}
	name, rest, _ := strings.Cut(strings.TrimPrefix(p, "/"), "/")
	if sv := s.byName[name]; sv != nil && name != "" {
		s.serve(w, r, sv, "/"+rest)
		return
	}
	s.serveNotFound(w, r)
}

func (s *Server) serviceHandler(sv *service) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == MetricsPath && s.metrics != nil {
			s.metrics.handler.ServeHTTP(w, r)
			return
		}
		if strings.HasPrefix(r.URL.Path, "/_simbench/") {
			s.serveAdmin(w, r)
			return
		}
		s.serve(w, r, sv, r.URL.Path)
	})
}

func (s *Server) serveNotFound(w http.ResponseWriter, r *http.Request) {
	s.notFound.Add(1)
	var known []string
	for _, sv := range s.services {
		prefix := ""
		if !s.cfg.PortPerService {
			prefix = "/" + sv.cfg.Name
		}
		for _, k := range knownPaths(sv.cfg.API) {
			known = append(known, prefix+k)
		}
	}
	known = append(known, StatsPath, ResetPath)
	if s.metrics != nil {
		known = append(known, MetricsPath)
	}
	writeJSON(w, http.StatusNotFound, errorBody(spec.APIGeneric, 404,
		fmt.Sprintf("no service answers %s; known paths: %s", r.URL.Path, strings.Join(known, ", ")),
		map[string]any{"known": known}))
}

func (s *Server) serveAdmin(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == StatsPath && r.Method == http.MethodGet:
		b, err := json.MarshalIndent(s.Stats(), "", "  ")
		if err != nil {
			writeJSON(w, 500, errorBody(spec.APIGeneric, 500, err.Error(), nil))
			return
		}
		writeJSON(w, 200, append(b, '\n'))
	case r.URL.Path == ResetPath && r.Method == http.MethodPost:
		if status, msg := s.authorizeReset(apiKey(r)); status != 0 {
			writeJSON(w, status, errorBody(spec.APIGeneric, status, msg, nil))
			return
		}
		s.Reset()
		writeJSON(w, 200, []byte(`{"ok":true}`+"\n"))
	case r.URL.Path == StatsPath || r.URL.Path == ResetPath:
		writeJSON(w, http.StatusMethodNotAllowed, errorBody(spec.APIGeneric, 405, "use GET "+StatsPath+" or POST "+ResetPath, nil))
	default:
		s.serveNotFound(w, r)
	}
}

// authorizeReset decides whether a reset with key may go ahead: always when
// no service configures keys, else only with one of the keys some service
// accepts. It returns 0, or the status and message of the refusal.
func (s *Server) authorizeReset(key string) (status int, msg string) {
	keyed := false
	for _, sv := range s.services {
		for _, k := range sv.cfg.Keys {
			if k.Key == key {
				return 0, ""
			}
			keyed = true
		}
	}
	switch {
	case !keyed:
		return 0, ""
	case key == "":
		return http.StatusUnauthorized, "resetting the accounting needs an API key of one of the services (Authorization: Bearer KEY or x-api-key: KEY)"
	}
	return http.StatusForbidden, "resetting the accounting needs an API key of one of the services; this key is none of them"
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body) //nolint:errcheck // the client may be gone; nothing to do
}

// apiKey returns the key from Authorization: Bearer KEY or x-api-key.
func apiKey(r *http.Request) string {
	if a := r.Header.Get("Authorization"); a != "" {
		if k, ok := strings.CutPrefix(a, "Bearer "); ok {
			return strings.TrimSpace(k)
		}
		return ""
	}
	return r.Header.Get("X-Api-Key")
}

// readBody reads at most limit bytes; n is limit+1 when the body is longer.
func readBody(r *http.Request, limit int64) (body []byte, n int64, err error) {
	if r.Body == nil {
		return nil, 0, nil
	}
	body, err = io.ReadAll(io.LimitReader(r.Body, limit+1))
	return body, int64(len(body)), err
}

// Headers that tell the server what a request is (see the README).
const (
	// WriteHeader marks a request as a write: its value names the resource
	// written ("1" or "true": the body's "resource" field, else the path).
	// Only writes can race; PUT, PATCH and DELETE on a tool path, and
	// requests to ServiceConfig.WritePaths, are writes without it; provider
	// endpoints never are.
	WriteHeader = "X-Simbench-Write"
	// RetryHeader marks a retry for early-retry accounting, as the official
	// SDKs' x-stainless-retry-count does: a number above 0 is a retry.
	RetryHeader = "X-Simbench-Retry"
	// StainlessRetryHeader is the retry count the OpenAI and Anthropic SDKs
	// send with every attempt (0 on the first).
	StainlessRetryHeader = "X-Stainless-Retry-Count"
	// IdempotencyHeader is the idempotency key some clients send; attempts
	// repeating one key are one request and its retries.
	IdempotencyHeader = "Idempotency-Key"
)

// retryIdentity returns the early-retry identity and mark of a request:
//
//   - With an Idempotency-Key, the identity is the API key plus that key,
//     and the request is a marked retry: it is early only if an earlier
//     attempt with the same key was rate limited and told to wait past now.
//   - With x-stainless-retry-count (or X-Simbench-Retry), a count above 0 is
//     a marked retry of the API key plus X-Simbench-Client, early only when
//     every rate-limited request of that identity still owed a retry was
//     told to wait past now, so parallel callers that each honour their own
//     delay never count; 0 is a first attempt, never early.
//   - With only X-Simbench-Client, the client says it sends one request at a
//     time: any request before its latest delay has elapsed is early.
//   - With none of these, the request is a first attempt.
//
// how names the rule, for Stats.EarlyRetriesBy.
func retryIdentity(r *http.Request, key string) (client string, mark RetryMark, how retryRule) {
	client = key + "|" + r.Header.Get(ClientHeader)
	if k := r.Header.Get(IdempotencyHeader); k != "" {
		return client + "|idempotency:" + k, RetryMarked, byIdempotencyKey
	}
	for _, h := range []string{StainlessRetryHeader, RetryHeader} {
		if v := r.Header.Get(h); v != "" {
			if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n > 0 {
				return client, RetryMarked, byRetryCount
			}
			return client, RetryFresh, byRetryCount
		}
	}
	if r.Header.Get(ClientHeader) != "" {
		return client, RetryUnknown, byClient
	}
	return client, RetryFresh, byRetryCount
}

// retryRule is how a request was identified as a retry or not.
type retryRule uint8

const (
	byIdempotencyKey retryRule = iota
	byRetryCount
	byClient
	numRetryRules
)

// retryRuleNames are the keys of Stats.EarlyRetriesBy.
var retryRuleNames = [numRetryRules]string{"idempotency_key", "retry_count", "client"}

// writeOf says whether a request to endpoint ep is a write and of which
// resource: one with WriteHeader, a PUT, PATCH or DELETE, or any request on
// or below one of routes (ServiceConfig.WriteRoutes and WritePaths) on a
// tool path. A route's declared resource key (WriteRoute.ResourceFrom)
// names the resource when the request carries it.
func writeOf(r *http.Request, ep endpoint, path string, body []byte, dec *decoded, routes []writeRoute) (bool, string) {
	if ep != epGeneric {
		return false, ""
	}
	rt := matchRoute(routes, path)
	if rt != nil {
		if k := rt.key(r, path, body); k != "" {
			return true, k
		}
	}
	res := path
	if dec.hasResource && dec.resource != "" {
		res = dec.resource
	}
	switch v := strings.TrimSpace(r.Header.Get(WriteHeader)); strings.ToLower(v) {
	case "", "0", "false", "no":
	case "1", "true", "yes":
		return true, res
	default:
		return true, v
	}
	switch r.Method {
	case http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true, res
	}
	if rt != nil {
		return true, res
	}
	return false, ""
}

// serve answers one request to service sv at path (within the service).
func (s *Server) serve(w http.ResponseWriter, r *http.Request, sv *service, path string) {
	c := &sv.cfg
	ep, ok := route(c.API, r.Method, path)
	if !ok {
		w.Header().Set("Allow", ep.method())
		writeJSON(w, http.StatusMethodNotAllowed, errorBody(c.API, 405, fmt.Sprintf("%s %s is not supported; use %s", r.Method, path, ep.method()), nil))
		return
	}
	switch ep {
	case epUnknown:
		s.notFound.Add(1)
		msg := fmt.Sprintf("Unknown request URL: %s %s. This fake %s service answers %s; check the base URL (the SDK appends the /v1/... path itself).",
			r.Method, r.URL.Path, c.API, strings.Join(knownPaths(c.API)[:len(knownPaths(c.API))-1], ", "))
		writeJSON(w, http.StatusNotFound, errorBody(c.API, 404, msg, nil))
		return
	case epModels, epCountTokens:
		// Answered without the model, so they spend no quota; the API key
		// is still checked.
		if !knownKey(c, apiKey(r)) {
			writeJSON(w, http.StatusUnauthorized, errorBody(c.API, 401, rejectMessage(c.Name, &Decision{Kind: KindUnauthorized}, nil), nil))
			return
		}
		if ep == epModels {
			writeJSON(w, 200, modelsBody(c.API, c.ModelName, s.start))
			return
		}
	}
	body, n, err := readBody(r, c.MaxBodyBytes)
	if err != nil {
		// The client went away before sending its request, or sent it too
		// slowly (ReadTimeout): the connection is closed either way.
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			w.Header().Set("Connection", "close")
			writeJSON(w, http.StatusRequestTimeout, errorBody(c.API, http.StatusRequestTimeout, "the request body did not arrive within the read timeout", nil))
		}
		return
	}
	req := Request{Method: r.Method, Path: path, Key: apiKey(r), Bytes: n}
	var how retryRule
	req.Client, req.Retry, how = retryIdentity(r, req.Key)
	var bodyErr error
	var dec decoded
	if n <= c.MaxBodyBytes {
		dec, bodyErr = decodeRequest(ep, body, r.Header.Get(TokensHeader), r.Header.Get(OutputTokensHeader), c.OutputTokens)
		req.Malformed = bodyErr != nil
	}
	if ep == epCountTokens {
		// Counting tokens spends no quota.
		if bodyErr != nil || n > c.MaxBodyBytes {
			msg := "Request body too large."
			if bodyErr != nil {
				msg = bodyErr.Error()
			}
			writeJSON(w, 400, errorBody(c.API, 400, msg, nil))
			return
		}
		writeJSON(w, 200, []byte(fmt.Sprintf(`{"input_tokens":%d}`+"\n", dec.input)))
		return
	}
	req.Tokens, req.OutputTokens = dec.input, dec.output
	req.Write, req.Resource = writeOf(r, ep, path, body, &dec, sv.routes)

	sv.mu.Lock()
	now := s.now()
	d := sv.m.Arrive(now, req)
	if d.EarlyRetry {
		sv.earlyBy[how]++
	}
	sv.mu.Unlock()

	id := strconv.FormatUint(sv.ids.Add(1), 10)
	wall := s.start.Add(time.Duration(s.epoch.Load()) + s.real(now))
	seen := s.realDecision(d) // what the client is told, in real time
	h := w.Header()
	h.Set("X-Request-Id", "req_"+id)
	if c.API == spec.APIAnthropic {
		h.Set("Request-Id", "req_"+id)
	}
	status := seen.Answer(c.API, c.Headers, wall, h)
	if !d.Admitted() {
		if d.Latency > 0 && !s.hold(r.Context(), seen.Latency) {
			return // the client left during a stall
		}
		extra := map[string]any{"kind": d.Kind.String()}
		if d.Kind == KindRateLimited || d.Kind == KindTooLarge && d.Limit == LimitTPM {
			extra["limit"] = d.Limit.String()
			if d.HasRetryAfter {
				extra["retry_after_ms"] = RoundUp(seen.RetryAfter, time.Millisecond).Milliseconds()
			}
		}
		if c.API == spec.APIAnthropic {
			extra["request_id"] = "req_" + id
		}
		writeJSON(w, status, errorBody(c.API, status, rejectMessage(c.Name, &d, bodyErr), extra))
		return
	}
	if s.metrics != nil {
		// Runs after the request ended in the model, also when the
		// handler panics to abort the connection.
		defer s.metrics.observe(sv, now)
	}

	model := dec.model
	if model == "" {
		model = c.ModelName
	}
	if d.Kind == KindOK && ep.generates() {
		prefix := "call"
		if ep == epMessages {
			prefix = "toolu"
		}
		dec.reply = c.Agent.decide(sv.agentSeed, &dec.agent, prefix)
	}
	if d.Kind == KindOK && dec.stream {
		s.stream(w, r.Context(), sv, &d, streamBody(ep, id, model, wall, d.Tokens-dec.output, dec.output, &dec))
		return
	}
	if !s.await(r.Context(), sv, &d) {
		return
	}
	switch d.Kind {
	case KindOK:
		writeJSON(w, 200, okBody(ep, c.Name, path, id, model, wall, d.Tokens-dec.output, dec.output, &dec))
	case KindServerError:
		extra := map[string]any{"kind": d.Kind.String()}
		if c.API == spec.APIAnthropic {
			extra["request_id"] = "req_" + id
		}
		writeJSON(w, status, errorBody(c.API, status, rejectMessage(c.Name, &d, nil), extra))
	case KindConflict:
		extra := map[string]any{"kind": d.Kind.String()}
		if c.API == spec.APIAnthropic {
			extra["request_id"] = "req_" + id
		}
		writeJSON(w, status, errorBody(c.API, status, rejectMessage(c.Name, &d, nil), extra))
	case KindReset:
		panic(http.ErrAbortHandler) // closes the connection without a response
	}
}

// hold waits d of real time before a rejection is answered (a stall holds
// every answer until it ends); shutting down answers at once. It returns
// false when the client went away first.
func (s *Server) hold(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-s.quit:
	case <-ctx.Done():
		return false
	}
	return true
}

// knownKey reports whether key is one the service accepts (any key when it
// configures none).
func knownKey(c *ServiceConfig, key string) bool {
	if len(c.Keys) == 0 {
		return true
	}
	for _, k := range c.Keys {
		if k.Key == key {
			return true
		}
	}
	return false
}

// providerStatus is the status a provider style sends for a rejection: an
// OpenAI-style service answers a request too large for its token limit with
// 429 (type tokens) and an overload with 503, as OpenAI does; the rest is
// the model's status.
func providerStatus(api spec.APIStyle, d *Decision) int {
	if api != spec.APIOpenAI {
		return d.Status
	}
	switch {
	case d.Kind == KindTooLarge && d.Limit == LimitTPM:
		return http.StatusTooManyRequests
	case d.Kind == KindOverloaded:
		return http.StatusServiceUnavailable
	}
	return d.Status
}

// end ends an admitted request in the model: Cancel (the service stopped
// working on it) or Finish, clientGone saying whether anyone read it.
func (s *Server) end(sv *service, d *Decision, clientGone, cancel bool) {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if cancel {
		sv.m.Cancel(s.now(), d.ID)
	} else {
		sv.m.Finish(s.now(), d.ID, clientGone)
	}
}

// stream sends an admitted request's response as server-sent events: the
// headers and first events after the time to first byte, the rest spread
// over the remaining latency. When the service paces generation
// (Decision.FirstToken), the first group goes at the time to first token
// and the rest evenly over the time the output tokens take, at the drawn
// tokens per second. A client gone before the first byte is handled as in
// await; one gone mid-stream finishes the request with its tokens counted
// as wasted.
func (s *Server) stream(w http.ResponseWriter, ctx context.Context, sv *service, d *Decision, groups [][]byte) {
	end := func(gone, cancel bool) { s.end(sv, d, gone, cancel) }
	first, step := streamPace(sv.cfg.Generation.Enabled(), sv.cfg.Faults.SlowFirstByte.Delay, d, len(groups))
	rc := http.NewResponseController(w)
	t := time.NewTimer(s.real(first))
	defer t.Stop()
	for i, g := range groups {
		if i > 0 && step == 0 {
			// No time between groups: send on without a timer.
			if ctx.Err() != nil {
				end(true, false)
				return
			}
		} else {
			select {
			case <-t.C:
			case <-ctx.Done():
				if i > 0 {
					end(true, false)
					return
				}
				if !sv.cfg.KeepWorkingOnDisconnect {
					end(true, true)
					return
				}
				// The service keeps generating the whole answer.
				<-t.C
				time.Sleep(s.real(step * time.Duration(len(groups)-1)))
				end(true, false)
				return
			}
		}
		if i == 0 {
			h := w.Header()
			h.Set("Content-Type", "text/event-stream; charset=utf-8")
			h.Set("Cache-Control", "no-cache")
			w.WriteHeader(200)
		}
		_, err := w.Write(g)
		if err == nil {
			err = rc.Flush()
		}
		if err != nil {
			end(true, false)
			return
		}
		if step > 0 {
			t.Reset(s.real(step))
		}
	}
	end(ctx.Err() != nil, false)
}

// streamPace returns when the first of n groups of a streamed answer goes,
// and the time between the groups after it, in the models' time: with
// paced generation, the first at Decision.FirstToken and the rest spread
// over the generation time; otherwise after the slow first byte (if any)
// and one n-th of the rest of the latency, the rest spread the same way.
func streamPace(paced bool, slowFirstByte time.Duration, d *Decision, n int) (first, step time.Duration) {
	if paced {
		if n > 1 {
			step = (d.Latency - d.FirstToken) / time.Duration(n-1)
		}
		return d.FirstToken, step
	}
	base := d.Latency
	if d.SlowFirstByte {
		slow := min(slowFirstByte, base)
		base, first = base-slow, slow
	}
	step = base / time.Duration(n)
	return first + step, step
}

// await waits out an admitted request's latency and ends it in the model.
// It returns false when there is no response to write: the client went away
// (Cancel, or Finish with clientGone when the service keeps working), or a
// hanging request was aborted by shutdown.
func (s *Server) await(ctx context.Context, sv *service, d *Decision) bool {
	end := func(gone, cancel bool) { s.end(sv, d, gone, cancel) }
	if d.Kind == KindHang {
		select {
		case <-ctx.Done():
			end(true, true)
			return false
		case <-s.quit:
			end(true, true)
			panic(http.ErrAbortHandler)
		}
	}
	if d.Latency > 0 {
		t := time.NewTimer(s.real(d.Latency))
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			if !sv.cfg.KeepWorkingOnDisconnect {
				end(true, true)
				return false
			}
			<-t.C
			end(true, false)
			return false
		}
	}
	end(ctx.Err() != nil, false)
	return ctx.Err() == nil || d.Kind != KindOK
}

// Summary writes one line per service: its base URL, the SDK base URL for
// provider styles (OpenAI SDKs take URL+"/v1"; Anthropic SDKs take URL
// itself, since they append /v1/messages), and its API keys; then the
// stats URL.
func (s *Server) Summary(w io.Writer) {
	for _, sv := range s.services {
		fmt.Fprintf(w, "%-12s %s", sv.cfg.Name, sv.url)
		switch base := s.SDKBaseURL(sv.cfg.Name); sv.cfg.API {
		case spec.APIOpenAI:
			fmt.Fprintf(w, "  (openai SDK base URL: %s, OPENAI_BASE_URL=%s)", base, base)
		case spec.APIAnthropic:
			fmt.Fprintf(w, "  (anthropic SDK base URL: %s, ANTHROPIC_BASE_URL=%s)", base, base)
		}
		if len(sv.cfg.Keys) > 0 {
			keys := make([]string, len(sv.cfg.Keys))
			for i, k := range sv.cfg.Keys {
				keys[i] = k.Key
			}
			fmt.Fprintf(w, "  keys: %s", strings.Join(keys, ", "))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "stats        %s\n", s.StatsURL())
	if s.metrics != nil {
		fmt.Fprintf(w, "metrics      %s\n", s.MetricsURL())
	}
}

// WriteStats writes a human-readable accounting summary, one block per
// service in name order.
func WriteStats(w io.Writer, st ServerStats) {
	names := make([]string, 0, len(st.Services))
	for n := range st.Services {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		x := st.Services[n]
		fmt.Fprintf(w, "%s: %d arrived, %d accepted, %d completed, %d rate limited (rps %d, rpm %d, tpm %d, concurrency %d)\n",
			n, x.Arrived, x.Accepted, x.Completed, x.RateLimited,
			x.RateLimitedBy["rps"], x.RateLimitedBy["rpm"], x.RateLimitedBy["tpm"], x.RateLimitedBy["concurrency"])
		if _, ok := x.RateLimitedBy["itpm"]; ok {
			fmt.Fprintf(w, "  rate limited by input tokens per minute %d\n", x.RateLimitedBy["itpm"])
		}
		if _, ok := x.RateLimitedBy["otpm"]; ok {
			fmt.Fprintf(w, "  rate limited by output tokens per minute %d\n", x.RateLimitedBy["otpm"])
		}
		fmt.Fprintf(w, "  early retries %d, cancelled by client %d, wasted %d (%.3fs, %d tokens), write races %d, peak concurrency %d\n",
			x.EarlyRetries, x.CancelledByClient, x.Wasted, x.WastedWorkS, x.WastedTokens, x.WriteRaces, x.PeakConcurrency)
		if x.Conflicts > 0 {
			fmt.Fprintf(w, "  write conflicts (409) %d\n", x.Conflicts)
		}
		if x.EarlyRetries > 0 && len(x.EarlyRetriesBy) > 0 {
			fmt.Fprintf(w, "  early retries identified by idempotency key %d, retry count %d, client header %d\n",
				x.EarlyRetriesBy["idempotency_key"], x.EarlyRetriesBy["retry_count"], x.EarlyRetriesBy["client"])
		}
		var errs []string
		for _, k := range errorKinds {
			if v := x.Errors[k.String()]; v > 0 {
				errs = append(errs, fmt.Sprintf("%s %d", k, v))
			}
		}
		if len(errs) > 0 {
			fmt.Fprintf(w, "  errors: %s\n", strings.Join(errs, ", "))
		}
	}
	if st.NotFound > 0 {
		fmt.Fprintf(w, "not found: %d\n", st.NotFound)
	}
}
