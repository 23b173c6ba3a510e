package fakeapi

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/simbench/simbench/fakeapi/internal/wire"
	"github.com/simbench/simbench/spec"
)

// Routing and answering one request: the steps of serve.

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

// serve answers one request to service sv at path (within the service), in
// steps: route it, answer what needs no model, read and decode it, let
// the model decide, then answer the rejection or the admission.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, sv *service, path string) {
	c := &sv.cfg
	if wire.ErrorType(c.API, http.StatusTooManyRequests) != "" {
		w = errorTypeWriter{w, c.API} // Bedrock names its errors in a header
	}
	ep, ok := wire.RouteOf(c.API, r.Method, path)
	if !ok {
		w.Header().Set("Allow", ep.Method())
		writeJSON(w, http.StatusMethodNotAllowed, wire.ErrorBody(c.API, 405, fmt.Sprintf("%s %s is not supported; use %s", r.Method, path, ep.Method()), nil))
		return
	}
	if status, body := wire.CheckQuery(c.API, ep, r.URL.Query()); status != 0 {
		writeJSON(w, status, body) // a query the provider refuses (Azure's api-version)
		return
	}
	if s.serveAside(w, r, c, ep) {
		return
	}
	body, n, ok := readRequestBody(w, r, c)
	if !ok {
		return
	}
	in := readRequest(r, sv, ep, path, body, n)
	s.conversationRetry(&in, ep, body)
	if ep == wire.EpCountTokens {
		answerCount(w, c, &in)
		return
	}
	if s.replayWrite(w, r, sv, &in) {
		return // answered from the write's first application, without the model
	}
	rec := s.newRecord(r, sv, ep, path, body, &in)
	if ep.Generates() && in.bodyErr == nil && !in.tooLarge {
		// The fake model's answer, known before admission: its length
		// paces the generation.
		in.dec.Reply = decideCalls(&c.Agent, sv.agentSeed, &in.dec.Agent, wire.ProviderOf(c.API).CallPrefix())
		var cut bool
		in.dec.Answer, cut = answerTokens(&c.Agent, sv.agentSeed, &in.dec.Agent, &in.dec.Reply, in.dec.Output)
		in.dec.Truncated = cut && in.dec.MaxSet
		in.req.Generated = in.dec.Answer
	}
	now, d := s.decide(sv, &in)
	s.noteWrite(r, sv, &in, &d)
	arrived := s.sinceStart()
	id := strconv.FormatUint(sv.ids.Add(1), 10)
	wall := s.start.Add(time.Duration(s.epoch.Load()) + s.real(now))
	seen := s.realDecision(d) // what the client is told, in real time
	status := writeDecisionHeaders(w.Header(), c, "req_"+id, &seen, wall)
	rec.decided(arrived, &d, &seen, status)
	p := s.pending.arrive(rec, s.conns.raw(r.RemoteAddr), arrived)
	defer func() { // also when the handler aborts the connection
		s.pending.done(p)
		s.emit(rec)
	}()
	if !d.Admitted() {
		s.answerRejection(w, r, c, id, status, &d, &seen, in.bodyErr, rec)
		return
	}
	s.answerAdmission(w, r, sv, ep, path, id, status, now, wall, &d, &in.dec, rec)
}

// serveAside answers, without the model, what spends no quota: an unknown
// path (404), the model list and, for a key the service does not accept,
// token counting (401). It reports whether it answered.
func (s *Server) serveAside(w http.ResponseWriter, r *http.Request, c *ServiceConfig, ep wire.Endpoint) bool {
	switch ep {
	case wire.EpUnknown:
		s.notFound.Add(1)
		msg := fmt.Sprintf("Unknown request URL: %s %s. This fake %s service answers %s; check the base URL (the SDK appends the /v1/... path itself).",
			r.Method, r.URL.Path, c.API, strings.Join(wire.KnownPaths(c.API)[:len(wire.KnownPaths(c.API))-1], ", "))
		writeJSON(w, http.StatusNotFound, wire.ErrorBody(c.API, 404, msg, nil))
		return true
	case wire.EpModels, wire.EpCountTokens:
		// The API key is still checked.
		if !knownKey(c, apiKey(r)) {
			writeJSON(w, http.StatusUnauthorized, wire.ErrorBody(c.API, 401, rejectMessage(c, &Decision{Kind: KindUnauthorized}, nil), nil))
			return true
		}
		if ep == wire.EpModels {
			writeJSON(w, 200, wire.ModelsBody(c.API, c.ModelName, s.start))
			return true
		}
	}
	return false
}

// readRequestBody reads the request's body, at most one byte past the
// service's MaxBodyBytes (n tells how much came). It reports false when
// there is no request to answer: the client went away before sending it,
// or sent it too slowly (ReadTimeout, answered 408); the connection is
// closed either way.
func readRequestBody(w http.ResponseWriter, r *http.Request, c *ServiceConfig) (body []byte, n int64, ok bool) {
	body, n, err := readBody(r, c.MaxBodyBytes)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			w.Header().Set("Connection", "close")
			writeJSON(w, http.StatusRequestTimeout, wire.ErrorBody(c.API, http.StatusRequestTimeout, "the request body did not arrive within the read timeout", nil))
		}
		return nil, 0, false
	}
	return body, n, true
}

// incoming is what the server read from a request.
type incoming struct {
	// req is what the model decides on.
	req Request
	// how is the rule that identified the request as a retry or not.
	how retryRule
	// dec is the decoded body; bodyErr says why it did not decode (the
	// request is then Malformed).
	dec     wire.Decoded
	bodyErr error
	// tooLarge says the body is past the service's MaxBodyBytes (it is not
	// decoded).
	tooLarge bool
}

// readRequest turns an HTTP request with body (n bytes read) to endpoint ep
// of sv into what the model decides on.
func readRequest(r *http.Request, sv *service, ep wire.Endpoint, path string, body []byte, n int64) incoming {
	c := &sv.cfg
	in := incoming{req: Request{Method: r.Method, Path: path, Key: apiKey(r), Bytes: n}, tooLarge: n > c.MaxBodyBytes}
	in.req.Client, in.req.Retry, in.how = retryIdentity(r, in.req.Key)
	if !in.tooLarge {
		in.dec, in.bodyErr = wire.DecodeRequest(c.API, ep, body, r.Header.Get(TokensHeader), r.Header.Get(OutputTokensHeader), c.OutputTokens)
		in.req.Malformed = in.bodyErr != nil
	}
	in.req.Tokens, in.req.OutputTokens = in.dec.Input, in.dec.Output
	in.req.Write, in.req.Resource = writeOf(r, ep, path, body, &in.dec, sv.routes)
	return in
}

// answerCount answers a token-counting request, which spends no quota.
func answerCount(w http.ResponseWriter, c *ServiceConfig, in *incoming) {
	if in.bodyErr != nil || in.tooLarge {
		msg := "Request body too large."
		if in.bodyErr != nil {
			msg = in.bodyErr.Error()
		}
		writeJSON(w, 400, wire.ErrorBody(c.API, 400, msg, nil))
		return
	}
	writeJSON(w, 200, []byte(fmt.Sprintf(`{"input_tokens":%d}`+"\n", in.dec.Input)))
}

// decide lets sv's model decide on the request at the models' time now,
// and counts an early retry by the rule that identified it.
func (s *Server) decide(sv *service, in *incoming) (now time.Duration, d Decision) {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	now = s.now()
	d = sv.m.Arrive(now, in.req)
	if d.EarlyRetry {
		sv.earlyBy[in.how]++
	}
	return now, d
}

// settle settles admitted request d's output tokens at out, once the
// answer is known (Model.SettleOutput).
func (s *Server) settle(sv *service, d *Decision, out int64) {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	sv.m.SettleOutput(s.now(), d.ID, out)
}

// writeDecisionHeaders adds to h the headers every answer to a decision
// carries: the request id (requestID, as x-request-id and, for the
// Anthropic style, request-id) and the service's rate-limit headers for
// seen, the decision with its delays in real time (Decision.Answer); wall
// is the time of the decision. It returns the answer's HTTP status.
func writeDecisionHeaders(h http.Header, c *ServiceConfig, requestID string, seen *Decision, wall time.Time) int {
	h.Set("X-Request-Id", requestID)
	wire.ProviderOf(c.API).SetRequestID(h, requestID)
	return seen.Answer(c.API, c.Headers, wall, h)
}

// answerRejection answers request id, which the model rejected at once,
// with status, after the stall it arrived in, if any (nothing, when the
// client leaves first); seen is d with its delays in real time, bodyErr
// why the body did not decode, rec its record (nil: none).
func (s *Server) answerRejection(w http.ResponseWriter, r *http.Request, c *ServiceConfig, id string, status int, d, seen *Decision, bodyErr error, rec *Record) {
	if d.Latency > 0 && !s.hold(r.Context(), seen.Latency) {
		rec.rejected(s.sinceStart())
		return // the client left during a stall
	}
	// Before the answer goes out: a client cannot act on it any earlier.
	rec.rejected(s.sinceStart())
	writeJSON(w, status, rejectionBody(c, id, status, d, seen, bodyErr))
}

// answerAdmission answers admitted request id after its latency: the fake
// model's answer (streamed on request; its output tokens settled on the
// limiters at once, since the fake knows its length when it admits it),
// a server error or a conflict with
// status, or a connection reset; it ends the request in the model and in
// rec (nil: the server logs no requests).
func (s *Server) answerAdmission(w http.ResponseWriter, r *http.Request, sv *service, ep wire.Endpoint, path, id string, status int, now time.Duration, wall time.Time, d *Decision, dec *wire.Decoded, rec *Record) {
	c := &sv.cfg
	if s.metrics != nil {
		// Runs after the request ended in the model, also when the
		// handler panics to abort the connection.
		defer s.metrics.observe(sv, now)
	}
	model := dec.Model
	if model == "" {
		model = c.ModelName
	}
	out := dec.Output
	if d.Kind == KindOK && ep.Generates() {
		out = dec.Answer
		s.settle(sv, d, out)
	}
	if d.Kind == KindOK && dec.Stream {
		groups, n := wire.StreamBody(c.API, ep, id, model, wall, d.Tokens-dec.Output, out, dec)
		s.stream(w, r.Context(), sv, d, rec, groups, n)
		return
	}
	if !s.await(r.Context(), sv, d, rec) {
		return
	}
	switch d.Kind {
	case KindOK:
		writeJSON(w, 200, wire.OKBody(c.API, ep, c.Name, path, id, model, wall, d.Tokens-dec.Output, out, dec))
	case KindServerError, KindConflict:
		writeJSON(w, status, wire.ErrorBody(c.API, status, rejectMessage(c, d, nil), errorExtra(c.API, d.Kind, "req_"+id)))
	case KindReset:
		panic(http.ErrAbortHandler) // closes the connection without a response
	}
}

// errorTypeWriter adds, as an answer's status is written, the header in
// which API style api names an error (wire.ErrorType: Bedrock's
// x-amzn-ErrorType).
type errorTypeWriter struct {
	http.ResponseWriter
	api spec.APIStyle
}

// WriteHeader sets the error-type header of status, then writes it.
func (w errorTypeWriter) WriteHeader(status int) {
	if t := wire.ErrorType(w.api, status); t != "" {
		w.Header().Set(wire.ErrorTypeHeader, t)
	}
	w.ResponseWriter.WriteHeader(status)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w errorTypeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// jsonContentType is the Content-Type of every JSON answer, one slice for
// all of them (net/http only reads a header's values), which spares each
// answer an allocation and a check of the key.
var jsonContentType = []string{"application/json"}

// writeJSON answers status with body, a JSON document.
func writeJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h["Content-Type"] = jsonContentType
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body) //nolint:errcheck // the client may be gone; nothing to do
}

// apiKey returns the key from Authorization: Bearer KEY, else from
// x-api-key (Anthropic), api-key (Azure OpenAI) or x-goog-api-key (the
// Gemini API); an AWS Signature Version 4 Authorization gives its access
// key id (Bedrock), its signature unchecked.
func apiKey(r *http.Request) string {
	if a := r.Header.Get("Authorization"); a != "" {
		if k, ok := strings.CutPrefix(a, "Bearer "); ok {
			return strings.TrimSpace(k)
		}
		if _, cred, ok := strings.Cut(a, "Credential="); ok {
			// AWS Signature Version 4: the access key id, unverified.
			id, _, _ := strings.Cut(cred, "/")
			return id
		}
		return ""
	}
	for _, h := range [...]string{"X-Api-Key", "Api-Key", "X-Goog-Api-Key"} {
		if k := r.Header.Get(h); k != "" {
			return k
		}
	}
	return ""
}

// readBody reads at most limit bytes; n is limit+1 when the body is longer.
func readBody(r *http.Request, limit int64) (body []byte, n int64, err error) {
	if r.Body == nil {
		return nil, 0, nil
	}
	body, err = io.ReadAll(io.LimitReader(r.Body, limit+1))
	return body, int64(len(body)), err
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
