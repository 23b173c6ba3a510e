package fakeapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/simbench/simbench/spec"
)

// FuzzServeRequest sends arbitrary requests through the server's handler
// (without a socket) and checks that every response is well formed: a known
// status, a JSON body, and an error object on every failure. Seeds live in
// testdata/fuzz/FuzzServeRequest.
func FuzzServeRequest(f *testing.F) {
	s, err := Start(ServerConfig{Services: []ServiceConfig{
		{Config: spec.Config{Name: "llm", RPM: 1000, TPM: 5000, MaxBodyBytes: 512, Keys: []spec.Key{{Key: "sk-1"}, {Key: "sk-2", TPM: 100}}}},
		{Config: spec.Config{Name: "claude", Headers: spec.HeadersAnthropic, RPS: 50}},
		{Config: spec.Config{Name: "tool", Headers: spec.HeadersNone, MaxConcurrent: 1}},
	}})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Shutdown(ctx) //nolint:errcheck // nothing is in flight
	})
	f.Fuzz(func(t *testing.T, method, path, key, tokens string, body []byte) {
		req := &http.Request{
			Method: method, URL: &url.URL{Path: path}, Header: http.Header{},
			Body: io.NopCloser(bytes.NewReader(body)), Host: "127.0.0.1",
		}
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		if tokens != "" {
			req.Header.Set(TokensHeader, tokens)
		}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		switch rec.Code {
		case 200, 400, 401, 404, 405, 413, 429:
		default:
			t.Fatalf("%s %q: status %d", method, path, rec.Code)
		}
		if ct := rec.Header().Get("Content-Type"); rec.Code == 200 && strings.HasPrefix(ct, "text/event-stream") {
			if b := rec.Body.String(); !strings.HasPrefix(b, "data: ") && !strings.HasPrefix(b, "event: ") {
				t.Fatalf("%s %q: a stream that is not server-sent events: %q", method, path, b)
			}
			return
		} else if ct != "application/json" {
			t.Fatalf("content type %q", ct)
		}
		var v map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
			t.Fatalf("%s %q: body is not a JSON object: %q", method, path, rec.Body.Bytes())
		}
		if _, hasErr := v["error"]; (rec.Code != 200) != hasErr {
			t.Fatalf("status %d with body %q", rec.Code, rec.Body.Bytes())
		}
	})
}
