package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/simbench/simbench/fakeapi"
)

func TestServePrintsURLsAndAccounting(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan *fakeapi.Server, 1)
	var out bytes.Buffer
	cmd := &ServeCmd{Scenario: "burst-8", Addr: "127.0.0.1:0", Stdout: &out, Stderr: io.Discard, parent: ctx, ready: ready}
	done := make(chan error, 1)
	go func() { done <- cmd.Run() }()
	srv := <-ready
	name := srv.Services()[0]
	url := srv.URL(name)
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("service URL %q is not on loopback", url)
	}
	for range 3 {
		resp, err := http.Get(url + "/tools/lookup")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"serving 1 service(s) of scenario burst-8", url, srv.StatsURL(), "what the clients did:", name + ": 3 arrived"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}

func TestServeRefusesNonLoopbackWithoutFlag(t *testing.T) {
	cmd := &ServeCmd{Scenario: "burst-8", Addr: "0.0.0.0:0", Stdout: io.Discard, Stderr: io.Discard}
	err := cmd.Run()
	if err == nil || !strings.Contains(err.Error(), "--allow-non-loopback") || strings.Contains(err.Error(), "AllowNonLoopback") {
		t.Fatalf("err = %v, want the flag that allows it named", err)
	}
	var ec interface{ ExitCode() int }
	if !errors.As(err, &ec) || ec.ExitCode() != exitInvalid {
		t.Errorf("exit code for a refused address: %v", err)
	}
}

// A client that never finishes its request body must not keep Ctrl-C from
// ending serve, nor turn the stop into a failure: after --drain, serve
// closes the connection and exits 0.
func TestServeCtrlCWithSlowBodyExitsZero(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan *fakeapi.Server, 1)
	var out, errOut bytes.Buffer
	cmd := &ServeCmd{Scenario: "burst-8", Addr: "127.0.0.1:0", Drain: 50 * time.Millisecond, ReadTimeout: time.Hour,
		Stdout: &out, Stderr: &errOut, parent: ctx, ready: ready}
	done := make(chan error, 1)
	go func() { done <- cmd.Run() }()
	srv := <-ready
	host := strings.TrimPrefix(srv.URL(srv.Services()[0]), "http://")
	host, _, _ = strings.Cut(host, "/")
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// With Expect: 100-continue the server answers "100 Continue" when the
	// handler starts reading the body: then the request is surely in flight.
	fmt.Fprintf(conn, "PUT /%s/items/1 HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 100\r\n\r\n", srv.Services()[0])
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || !strings.Contains(line, "100") {
		t.Fatalf("no 100 Continue: %q, %v", line, err)
	}
	fmt.Fprint(conn, "{") // one byte of the hundred promised
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Ctrl-C with a slow body open: %v, want exit 0", err)
	}
	if !strings.Contains(errOut.String(), "closed") {
		t.Errorf("serve did not say it closed the connection left open: %q", errOut.String())
	}
}

// A second Ctrl-C ends the drain: with a request left open and an hour of
// --drain, serve still returns, exit 0, saying why it closed the connection.
func TestServeSecondCtrlCEndsTheDrain(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	again, cancelAgain := context.WithCancel(context.Background())
	ready := make(chan *fakeapi.Server, 1)
	var out, errOut bytes.Buffer
	cmd := &ServeCmd{Scenario: "burst-8", Addr: "127.0.0.1:0", Drain: time.Hour, ReadTimeout: time.Hour,
		Stdout: &out, Stderr: &errOut, parent: ctx, again: again, ready: ready}
	done := make(chan error, 1)
	go func() { done <- cmd.Run() }()
	srv := <-ready
	host := strings.TrimPrefix(srv.URL(srv.Services()[0]), "http://")
	host, _, _ = strings.Cut(host, "/")
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "PUT /%s/items/1 HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 100\r\n\r\n", srv.Services()[0])
	if line, err := bufio.NewReader(conn).ReadString('\n'); err != nil || !strings.Contains(line, "100") {
		t.Fatalf("no 100 Continue: %q, %v", line, err)
	}
	cancel()
	cancelAgain()
	if err := <-done; err != nil {
		t.Fatalf("a second Ctrl-C: %v, want exit 0", err)
	}
	if !strings.Contains(errOut.String(), "second Ctrl-C") {
		t.Errorf("serve did not say the second Ctrl-C stopped it: %q", errOut.String())
	}
}

func TestServePrintsTheBaseURLsTheSDKsExpect(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan *fakeapi.Server, 1)
	var out bytes.Buffer
	cmd := &ServeCmd{Scenario: "multi-agent", Addr: "127.0.0.1:0", Stdout: &out, Stderr: io.Discard, parent: ctx, ready: ready}
	done := make(chan error, 1)
	go func() { done <- cmd.Run() }()
	<-ready // the summary is printed before the server is handed over
	printed := out.String()
	_, rest, ok := strings.Cut(printed, "ANTHROPIC_BASE_URL=")
	base, _, _ := strings.Cut(rest, ")")
	if !ok || !strings.HasPrefix(base, "http://127.0.0.1:") || strings.HasSuffix(base, "/v1") {
		t.Fatalf("no usable ANTHROPIC_BASE_URL in:\n%s", printed)
	}
	for _, want := range []string{"x-stainless-retry-count", fakeapi.WriteHeader} {
		if !strings.Contains(printed, want) {
			t.Errorf("output lacks %q:\n%s", want, printed)
		}
	}
	call := func(path string) (int, string) {
		resp, err := http.Post(base+path, "application/json", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	// The SDK appends /v1/messages (and /v1/messages/count_tokens) itself.
	if status, body := call("/v1/messages/count_tokens"); status != 200 || !strings.Contains(body, "input_tokens") {
		t.Errorf("count_tokens at the printed base URL: %d %s", status, body)
	}
	if status, body := call("/v1/v1/messages"); status != 404 || !strings.Contains(body, "/v1/v1/messages") {
		t.Errorf("doubled path: %d %s", status, body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestServeMetricsMatchStats drives serve --metrics with real requests,
// some of them rate limited, and checks that the counters scraped from
// /metrics equal the stats endpoint's numbers.
func TestServeMetricsMatchStats(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan *fakeapi.Server, 1)
	var out bytes.Buffer
	cmd := &ServeCmd{Scenario: "burst-8", Addr: "127.0.0.1:0", Metrics: true, Stdout: &out, Stderr: io.Discard, parent: ctx, ready: ready}
	done := make(chan error, 1)
	go func() { done <- cmd.Run() }()
	srv := <-ready
	name := srv.Services()[0]
	var wg sync.WaitGroup
	for range 12 { // a burst of 12 on a bucket of 5: some are limited
		wg.Go(func() {
			resp, err := http.Get(srv.URL(name) + "/tools/geocode")
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		})
	}
	wg.Wait()

	var st fakeapi.ServerStats
	resp, err := http.Get(srv.StatsURL())
	if err != nil {
		t.Fatal(err)
	}
	err = json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	resp, err = http.Get(srv.MetricsURL())
	if err != nil {
		t.Fatal(err)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	// sample finds the sample of a family with the given labels.
	sample := func(fam string, labels ...string) *dto.Metric {
		for _, m := range fams[fam].GetMetric() {
			match := 0
			for _, l := range m.GetLabel() {
				for i := 0; i+1 < len(labels); i += 2 {
					if l.GetName() == labels[i] && l.GetValue() == labels[i+1] {
						match++
					}
				}
			}
			if match == len(labels)/2 {
				return m
			}
		}
		t.Fatalf("no %s%v in the scrape", fam, labels)
		return nil
	}
	x := st.Services[name]
	if got := sample("simbench_fakeapi_admitted_total", "service", name).GetCounter().GetValue(); got != float64(x.Accepted) {
		t.Errorf("admitted_total = %v, stats accepted = %d", got, x.Accepted)
	}
	limited := 0.0
	for _, l := range []string{"rps", "rpm", "tpm", "concurrency"} {
		got := sample("simbench_fakeapi_limited_total", "service", name, "limit", l).GetCounter().GetValue()
		if got != float64(x.RateLimitedBy[l]) {
			t.Errorf("limited_total{limit=%q} = %v, stats say %d", l, got, x.RateLimitedBy[l])
		}
		limited += got
	}
	if got := sample("simbench_fakeapi_limited_total", "service", name, "limit", "overload").GetCounter().GetValue(); got != float64(x.Errors["overloaded"]) {
		t.Errorf("limited_total{limit=overload} = %v, stats say %d", got, x.Errors["overloaded"])
	}
	if limited == 0 || limited != float64(x.RateLimited) {
		t.Errorf("%v requests limited in the scrape, stats say %d (want some)", limited, x.RateLimited)
	}
	if got := sample("simbench_fakeapi_in_flight_requests", "service", name).GetGauge().GetValue(); got != float64(x.InFlight) {
		t.Errorf("in_flight_requests = %v, stats say %d", got, x.InFlight)
	}
	// Every client has its answer, so every admitted request has ended.
	if got := sample("simbench_fakeapi_latency_seconds", "service", name).GetHistogram().GetSampleCount(); got != uint64(x.Accepted) {
		t.Errorf("latency_seconds_count = %d, stats accepted = %d", got, x.Accepted)
	}
	if !strings.Contains(out.String(), srv.MetricsURL()) {
		t.Errorf("serve did not print the metrics URL:\n%s", out.String())
	}
}

// TestServeAppliesEvents: serve lists a scenario's events and its services
// follow them, timed from the start: an outage from 0 refuses every
// request with 503 while it lasts.
func TestServeAppliesEvents(t *testing.T) {
	dir := t.TempDir()
	file := dir + "/outage.toml"
	src := `duration = "1h"
[workload]
sessions = 1
calls = [ { tool = "lookup" } ]
[services.api]
[tools.lookup]
service = "api"
[[strategy]]
name = "s"
[[events]]
service = "api"
at = "0s"
for = "1h"
outage = true
`
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan *fakeapi.Server, 1)
	var out bytes.Buffer
	cmd := &ServeCmd{Scenario: file, Addr: "127.0.0.1:0", Stdout: &out, Stderr: io.Discard, parent: ctx, ready: ready}
	done := make(chan error, 1)
	go func() { done <- cmd.Run() }()
	srv := <-ready
	for range 3 {
		resp, err := http.Post(srv.URL("api")+"/tools/lookup", "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 503 {
			t.Errorf("status %d during the outage, want 503", resp.StatusCode)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if want := "event on api from 0s to 1h0m0s after start: outage 503"; !strings.Contains(out.String(), want) {
		t.Errorf("output lacks %q:\n%s", want, out.String())
	}
}
