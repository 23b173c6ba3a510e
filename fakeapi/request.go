package fakeapi

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/simbench/simbench/fakeapi/internal/wire"
)

// maxRounds bounds the clients whose model rounds a server counts; past
// it the counts start again (a repeat across the restart may then count
// as early).
const maxRounds = 1 << 16

// conversationRetry narrows the early-retry identity of in, a request to
// endpoint ep with body that names its client (X-Simbench-Client) and
// marks no retry, once that client has asked a model (a conversation of
// an agent runtime, which sends tool calls in parallel): a model request
// begins a new round and is early only when it repeats a rate-limited
// request's body; a tool call is early only when it repeats one of the
// same method, path and body in the same round. So the next round's model
// request, and the same tool call in the next round, are not retries of a
// 429 the model was handed. A client that never asks a model keeps the
// rule of one request at a time.
func (s *Server) conversationRetry(in *incoming, ep wire.Endpoint, body []byte) {
	if in.how != byClient {
		return
	}
	s.roundsMu.Lock()
	n, asked := s.rounds[in.req.Client]
	if ep.Generates() {
		if s.rounds == nil || len(s.rounds) >= maxRounds {
			s.rounds = map[string]uint64{}
		}
		s.rounds[in.req.Client], asked = n+1, true
	}
	s.roundsMu.Unlock()
	if !asked {
		return
	}
	id := strconv.FormatUint(identity("", in.req.Method, in.req.Path, body), 16)
	if ep.Generates() {
		in.req.Client += "|model:" + id
	} else {
		in.req.Client += "|round:" + strconv.FormatUint(n, 10) + ":" + id
	}
}

// What a request is: a retry or not, and a write of which resource.

// Headers that tell the server what a request is (see docs/serve-and-check.md).
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
	// AmzSDKRequestHeader is the attempt the AWS SDKs send with every
	// request, "attempt=N; max=M" (N is 1 on the first).
	AmzSDKRequestHeader = "Amz-Sdk-Request"
)

// amzAttempt reads the attempt number of an amz-sdk-request header value
// ("attempt=2; max=3"); ok is false when it names none.
func amzAttempt(v string) (n int, ok bool) {
	for f := range strings.SplitSeq(v, ";") {
		if a, found := strings.CutPrefix(strings.TrimSpace(f), "attempt="); found {
			n, err := strconv.Atoi(a)
			return n, err == nil && n > 0
		}
	}
	return 0, false
}

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
//   - With amz-sdk-request (the AWS SDKs' "attempt=N; max=M"), attempt 2
//     and later are marked retries as above, attempt 1 a first attempt.
//   - With only X-Simbench-Client, the client says it sends one request at a
//     time: any request before its latest delay has elapsed is early; once
//     it has asked a model, only a repeat within its model round (see
//     conversationRetry).
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
	if v := r.Header.Get(AmzSDKRequestHeader); v != "" {
		if n, ok := amzAttempt(v); ok {
			if n > 1 {
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
func writeOf(r *http.Request, ep wire.Endpoint, path string, body []byte, dec *wire.Decoded, routes []writeRoute) (bool, string) {
	if ep != wire.EpGeneric {
		return false, ""
	}
	rt := matchRoute(routes, path)
	if rt != nil {
		if k := rt.key(r, path, body); k != "" {
			return true, k
		}
	}
	res := path
	if dec.HasResource && dec.Resource != "" {
		res = dec.Resource
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
