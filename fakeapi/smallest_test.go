package fakeapi

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/simbench/simbench/spec"
)

// Each API style answers its own smallest request with a 200 (a load that
// counts admissions must be admitted when there is room), and a service
// that does not exist has none.
func TestSmallestRequestIsAnswered(t *testing.T) {
	for _, api := range spec.APIStyles {
		s, c := startServer(t, ServerConfig{Services: []ServiceConfig{{Config: spec.Config{Name: "svc", API: api}}}})
		path, body, ok := s.SmallestRequest("svc")
		if !ok {
			t.Fatalf("%s: no smallest request", api)
		}
		resp, err := c.Post(s.URL("svc")+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: POST %q %s answered %d: %s", api, path, body, resp.StatusCode, got)
		}
	}
	if _, _, ok := (&Server{}).SmallestRequest("none"); ok {
		t.Error("a service that does not exist has a smallest request")
	}
}
