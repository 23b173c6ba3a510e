package fakeapi

import (
	"hash/fnv"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/simbench/simbench/fakeapi/internal/wire"
	"github.com/simbench/simbench/spec"
)

// The request log: one Record per request the model decided on, for
// graders such as `simbench check` that judge what each client did.

// Record is what the server saw of one request that reached a service's
// model: who sent it, what it was, what it was told and how it ended.
// Times are real time since the server started.
type Record struct {
	// Service is the service the request went to.
	Service string
	// Client identifies the sender: the X-Simbench-Client header when the
	// request carries one, else "key:" and the API key, else "anonymous".
	Client string
	// Key is the request's API key ("": none).
	Key string
	// Method and Path are the request's, Path within the service.
	Method, Path string
	// Model says the request asked a model for an answer (chat
	// completions, messages, responses).
	Model bool
	// Arrived is when the request reached the model; Answered when the
	// server was done with it: the answer sent (its last byte queued), the
	// rejection written, or the work stopped or finished after the client
	// left.
	Arrived, Answered time.Duration
	// Left is when the client closed the connection before the answer was
	// complete (0: it did not).
	Left time.Duration
	// Status is the HTTP status sent (0: none, for a reset or a hang).
	Status int
	// Kind is the model's decision (KindOK, KindRateLimited, ...); Admitted
	// says the request held a slot of the service.
	Kind     Kind
	Admitted bool
	// RetryAfter is the retry delay the client was told, in real time;
	// HasRetryAfter says it was told one.
	RetryAfter    time.Duration
	HasRetryAfter bool
	// DelayInBody says the 429 stated its retry delay only in its error
	// body (spec.Faults.RetryDelayBody "instead": no Retry-After header).
	DelayInBody bool
	// Daily says a spent daily quota (spec.Daily) refused the request: its
	// RetryAfter is the time to the quota's reset (on a service that does
	// not lie about it). It sits in the padding after DelayInBody, so a
	// record costs no more memory for it.
	Daily bool
	// IdempotencyKey is the Idempotency-Key header ("": none).
	IdempotencyKey string
	// Attempt is the attempt number the request declared (1 for a first
	// attempt, from x-stainless-retry-count or X-Simbench-Retry plus one);
	// 0 when it declared none.
	Attempt int
	// Identity is a hash of the client, method, path and body: attempts
	// of one call that carry no idempotency key share it.
	Identity uint64
	// Write marks a write of Resource; WriteRace one admitted while
	// another write to Resource was in flight.
	Write     bool
	Resource  string
	WriteRace bool
	// Cancelled says the client closed the connection mid-request and the
	// service stopped working on it; Wasted that the work was finished (or
	// the stream kept going) after the client had gone.
	Cancelled, Wasted bool

	// sending is when the last part of a streamed answer began to go out
	// (0: not yet), which is its Answered unless the client left: a client
	// may read it and send its next request before the server is done.
	sending time.Duration
}

// clientOf names the sender of r, whose API key is key (see Record.Client).
func clientOf(r *http.Request, key string) string {
	if c := strings.TrimSpace(r.Header.Get(ClientHeader)); c != "" {
		return c
	}
	if key != "" {
		return "key:" + key
	}
	return "anonymous"
}

// declaredAttempt is the attempt number r declares (see Record.Attempt).
func declaredAttempt(r *http.Request) int {
	for _, h := range []string{StainlessRetryHeader, RetryHeader} {
		if v := r.Header.Get(h); v != "" {
			if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n >= 0 {
				return n + 1
			}
		}
	}
	return 0
}

// identity hashes what makes two requests attempts of one call.
func identity(client, method, path string, body []byte) uint64 {
	h := fnv.New64a()
	for _, s := range []string{client, method, path} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	h.Write(body)
	return h.Sum64()
}

// newRecord starts the record of request r to sv with body, when the
// server logs requests (ServerConfig.OnRequest); nil otherwise.
func (s *Server) newRecord(r *http.Request, sv *service, ep wire.Endpoint, path string, body []byte, in *incoming) *Record {
	if s.cfg.OnRequest == nil {
		return nil
	}
	client := clientOf(r, in.req.Key)
	return &Record{
		Service: sv.cfg.Name, Client: client, Key: in.req.Key, Method: r.Method, Path: path, Model: ep.Generates(),
		IdempotencyKey: r.Header.Get(IdempotencyHeader), Attempt: declaredAttempt(r),
		Identity: identity(client, r.Method, path, body),
		Write:    in.req.Write, Resource: in.req.resource(),
	}
}

// decided fills in what the model decided for rec's request, arrived at
// real time at; seen is the decision with its delays in real time.
func (rec *Record) decided(at time.Duration, d, seen *Decision, status int) {
	if rec == nil {
		return
	}
	rec.Arrived, rec.Answered = at, at
	rec.Status, rec.Kind, rec.Admitted = status, d.Kind, d.Admitted()
	rec.RetryAfter, rec.HasRetryAfter = seen.RetryAfter, seen.HasRetryAfter
	rec.DelayInBody = d.Kind == KindRateLimited && seen.HasRetryAfter && d.RetryIn == spec.RetryDelayInstead
	rec.WriteRace = d.WriteRace
	rec.Daily = d.Daily()
	if !rec.Write {
		rec.Resource = ""
	}
}

// emit hands a finished record to ServerConfig.OnRequest.
func (s *Server) emit(rec *Record) {
	if rec != nil {
		s.cfg.OnRequest(*rec)
	}
}

// sinceStart is the real time since the server started.
func (s *Server) sinceStart() time.Duration { return time.Since(s.start) }

// rejected ends the record of a rejected request, answered at real time at.
func (rec *Record) rejected(at time.Duration) {
	if rec != nil {
		rec.Answered = at
	}
}

// left notes that the client closed the connection at real time at while
// the service kept working.
func (rec *Record) left(at time.Duration) {
	if rec != nil && rec.Left == 0 {
		rec.Left = at
	}
}

// ended ends the record of an admitted request at real time at:
// clientGone says the client left first, cancel that the work stopped.
func (rec *Record) ended(at time.Duration, clientGone, cancel bool) {
	if rec == nil {
		return
	}
	rec.Answered = at
	if clientGone {
		rec.left(at)
		rec.Cancelled, rec.Wasted = cancel, !cancel && rec.Kind == KindOK
	} else if rec.sending > 0 {
		rec.Answered = rec.sending
	}
}

// lastPart notes that the last part of rec's streamed answer goes out at
// real time at.
func (rec *Record) lastPart(at time.Duration) {
	if rec != nil {
		rec.sending = at
	}
}
