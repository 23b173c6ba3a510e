package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/simbench/simbench/check"
	"github.com/simbench/simbench/internal/redisproc"
	"github.com/simbench/simbench/scenarios"
)

// nginxInstall is how to install the nginx the gateway tests run.
const nginxInstall = "apt-get install nginx (or make deps, scripts/need-nginx)"

// nginxBin returns the nginx binary. Without one the test skips, saying
// what to install, except in CI (CI=true), where it fails.
func nginxBin(t *testing.T) string {
	t.Helper()
	if bin, err := exec.LookPath("nginx"); err == nil {
		return bin
	}
	if _, err := os.Stat("/usr/sbin/nginx"); err == nil {
		return "/usr/sbin/nginx" // Debian's, off a non-root PATH
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("nginx is not installed: %s", nginxInstall)
	}
	t.Skipf("nginx is not installed: %s", nginxInstall)
	return ""
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	p, err := redisproc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// startNginx runs one nginx process in the foreground on a loopback port
// of its own, with httpConf at the http level and location in its only
// location, /; everything it writes stays in a temporary folder. It
// returns the port once nginx accepts connections, and stops nginx when
// the test ends.
func startNginx(t *testing.T, bin, httpConf, location string) int {
	t.Helper()
	dir, port := t.TempDir(), freePort(t)
	conf := fmt.Sprintf(`daemon off;
master_process off;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path %[1]s/body;
  proxy_temp_path %[1]s/proxy;
  fastcgi_temp_path %[1]s/fastcgi;
  uwsgi_temp_path %[1]s/uwsgi;
  scgi_temp_path %[1]s/scgi;
  %[2]s
  server {
    listen 127.0.0.1:%[3]d;
    location / {
      %[4]s
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }
  }
}
`, dir, httpConf, port, location)
	path := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-p", dir+"/", "-e", filepath.Join(dir, "error.log"), "-c", path)
	startListening(t, cmd, port, filepath.Join(dir, "error.log"))
	return port
}

// startListening starts cmd, a server that listens on loopback port port,
// and waits (at most 30 s: a busy machine starts node slowly) until it
// accepts connections; it stops cmd when the test ends. If cmd exits
// first, the test fails with its standard error and the file log.
func startListening(t *testing.T, cmd *exec.Cmd, port int, log string) {
	t.Helper()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	for deadline := time.Now().Add(30 * time.Second); ; {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			return
		}
		select {
		case err := <-exited:
			text, _ := os.ReadFile(log)
			t.Fatalf("%s exited before listening: %v\n%s%s", cmd.Path, err, stderr.String(), text)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not listen on port %d within 30s", cmd.Path, port)
		}
	}
}

// roundRobin runs an nginx that sends requests to the replicas on ports
// in turn, and returns its port.
func roundRobin(t *testing.T, bin string, ports []int) int {
	t.Helper()
	var servers []string
	for _, p := range ports {
		servers = append(servers, fmt.Sprintf("server 127.0.0.1:%d;", p))
	}
	rr := fmt.Sprintf("upstream replicas {\n    %s\n    keepalive 32;\n  }", strings.Join(servers, "\n    "))
	return startNginx(t, bin, rr, "proxy_pass http://replicas;")
}

// limitReq is the http-level configuration of an nginx that limits each
// API key (its Authorization header) to rate with limit_req, no burst,
// and answers the excess 429.
func limitReq(rate string) string {
	return fmt.Sprintf("limit_req_zone $http_authorization zone=perkey:1m rate=%s;\n  limit_req_status 429;", rate)
}

// limitedReplica is the location of an nginx replica that limits by
// limitReq, gives its 429s a Retry-After of 1 s, and forwards to service
// api of check on port up. Its burst of 10 is a queue (no nodelay): nginx
// holds up to 10 requests of a key past the rate and sends them on one
// rate interval apart, so that a replica offered more than the rate sends
// exactly the rate on, whatever the phase of the arrivals. (With no burst
// it admits the first arrival after each interval: offered 5/3 of the rate
// at even spacing, every second arrival, 5/6 of the rate.)
func limitedReplica(up int) string {
	return fmt.Sprintf("limit_req zone=perkey burst=10;\n      add_header Retry-After 1 always;\n      proxy_pass http://127.0.0.1:%d/api/;", up)
}

// gatewayOffer is the rate the gateway tests offer, as a multiple of the
// declared one: enough that each of three replicas behind round robin is
// offered more than the rate.
const gatewayOffer = 5

// checkGateway runs check on scenario with --gateway at port gw (check's
// services on port up) for d, and returns its report.
func checkGateway(t *testing.T, scenario string, up, gw int, d time.Duration) *check.Report {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := &CheckCmd{Scenario: scenario, Gateway: fmt.Sprintf("http://127.0.0.1:%d", gw), Offer: gatewayOffer,
		Duration: positiveDuration(d), JSON: true, Stdout: &out, Stderr: &errOut}
	cmd.Addr, cmd.Drain, cmd.MaxConns = fmt.Sprintf("127.0.0.1:%d", up), 5*time.Second, 1024
	cmd.ReadHeaderTimeout, cmd.ReadTimeout, cmd.IdleTimeout = 5*time.Second, 30*time.Second, time.Minute
	runErr := cmd.Run()
	var rep check.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("check printed no JSON report (%v; run: %v):\n%s\n%s", err, runErr, out.String(), errOut.String())
	}
	return &rep
}

// gatewayLine returns the report's line of check c.
func gatewayLine(t *testing.T, rep *check.Report, c string) check.Line {
	t.Helper()
	for _, l := range rep.Lines {
		if l.Check == c {
			return l
		}
	}
	t.Fatalf("no %s line in %+v", c, rep.Lines)
	return check.Line{}
}

// TestCheckGatewayNginxReplicas grades real nginx gateways whose
// limit_req promises key sk-gateway 20 requests per second
// (testdata/gateway/limits.toml: 1200/min over 5 s windows, 100 requests
// each), with check offering 5× that for 6 s so that the gateway, not the
// load, is the limit.
//
// One replica sends a key's requests on at least 1/20 s apart (limit_req,
// its burst a queue), so a 5 s window holds at most floor(5 × 20) + 1 =
// 101 of them at nginx: 1.01×; the hop to the upstream moves each by its
// own delay, and a window there can hold those sent on over 5 s plus that
// delay's spread: up to 200 ms of spread adds 4 more, 1.05×, the rule's
// bound. Three replicas behind round robin each get 5/3 of the rate, more
// than they send on, and each sends the full rate: 3×, however busy the
// machine, as long as the load offers each replica the rate; the test
// asks for more than 2×, which holds down to 2/5 of the rate offered, and
// less than 4×, which three replicas cannot reach (3 × 1.05 at most).
func TestCheckGatewayNginxReplicas(t *testing.T) {
	bin := nginxBin(t)
	const scenario = "testdata/gateway/limits.toml"
	t.Run("one", func(t *testing.T) {
		t.Parallel()
		up := freePort(t)
		gw := startNginx(t, bin, limitReq("20r/s"), limitedReplica(up))
		rep := checkGateway(t, scenario, up, gw, 6*time.Second)
		l := gatewayLine(t, rep, check.CheckGatewayRPM)
		if l.Verdict != check.Pass || l.Value > 1.05 || l.Value < 0.5 {
			t.Errorf("one nginx replica: %+v; want PASS at about 1× (at most 1.05×)", l)
		}
		if ra := gatewayLine(t, rep, check.CheckGatewayRetryAfter); ra.Verdict != check.Pass {
			t.Errorf("nginx with add_header Retry-After always: %+v; want PASS", ra)
		}
		t.Logf("%s: %s", l.Check, l.Figure)
	})
	t.Run("three", func(t *testing.T) {
		t.Parallel()
		up := freePort(t)
		var replicas []int
		for range 3 {
			replicas = append(replicas, startNginx(t, bin, limitReq("20r/s"), limitedReplica(up)))
		}
		gw := roundRobin(t, bin, replicas)
		rep := checkGateway(t, scenario, up, gw, 6*time.Second)
		l := gatewayLine(t, rep, check.CheckGatewayRPM)
		if l.Verdict != check.Fail || l.Value <= 2 || l.Value >= 4 {
			t.Errorf("three nginx replicas behind round robin: %+v; want FAIL at about 3× (above 2×, below 4×)", l)
		}
		t.Logf("%s: %s", l.Check, l.Figure)
	})
}

// TestCheckGatewayNginxRetryAfter puts an nginx that limits nothing in
// front of an upstream that answers 429 with a Retry-After above 10
// requests per second (testdata/gateway/upstream-limited.toml), offered
// 50 per second: an nginx that passes headers on passes the upstream's
// 429s on whole, and one that hides Retry-After and retry-after-ms is
// named as dropping it.
func TestCheckGatewayNginxRetryAfter(t *testing.T) {
	bin := nginxBin(t)
	for _, tt := range []struct {
		name, hide string
		want       check.Verdict
	}{
		{"passes", "", check.Pass},
		{"drops", "proxy_hide_header Retry-After;\n      proxy_hide_header retry-after-ms;\n      ", check.Fail},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			up := freePort(t)
			gw := startNginx(t, bin, "", tt.hide+fmt.Sprintf("proxy_pass http://127.0.0.1:%d/api/;", up))
			rep := checkGateway(t, "testdata/gateway/upstream-limited.toml", up, gw, 1500*time.Millisecond)
			l := gatewayLine(t, rep, check.CheckUpstream429)
			if l.Verdict != tt.want || (tt.want == check.Fail) != strings.Contains(l.Figure, "drops the upstream's Retry-After") {
				t.Errorf("%+v; want %s", l, tt.want)
			}
			t.Logf("%s: %s", l.Check, l.Figure)
		})
	}
}

// TestCheckGatewayBadInput: check --gateway refuses, before serving, a
// scenario with no [check.gateway] table, a client command, an offer that
// would not make the gateway the limit, and a URL that is not one.
func TestCheckGatewayBadInput(t *testing.T) {
	for _, tt := range []struct {
		name, scenario, gateway string
		offer                   float64
		command                 []string
		want                    string
	}{
		{"no table", "tier3", "http://127.0.0.1:1", 5, nil, "scenario tier3 declares no gateway limits; add a [check.gateway] table"},
		{"command", "testdata/gateway/limits.toml", "http://127.0.0.1:1", 5, []string{"--", "true"}, `sends the load itself; give no client command (got "true")`},
		{"offer", "testdata/gateway/limits.toml", "http://127.0.0.1:1", 1, nil, "--offer 1: want a multiple of the declared rate above 1"},
		{"url", "testdata/gateway/limits.toml", "127.0.0.1:8080", 5, nil, `--gateway "127.0.0.1:8080": want the gateway's base URL`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			cmd := &CheckCmd{Scenario: tt.scenario, Gateway: tt.gateway, Offer: tt.offer, Command: tt.command, Stdout: &out, Stderr: &errOut}
			err := cmd.Run()
			var coded codedError
			if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.As(err, &coded) || coded.code != exitInvalid {
				t.Errorf("Run = %v; want invalid input saying %q", err, tt.want)
			}
			if out.Len() > 0 {
				t.Errorf("printed a report:\n%s", out.String())
			}
		})
	}
}

// TestCheckGatewayOwnClient: with a client of its own driving the gateway
// (here the test, straight at the service, 30 requests of key sk-gateway
// at once where testdata/gateway/upstream-limited.toml declares 10 per 1 s
// window, then the test ends the wait as Ctrl-C would), check adds the
// gateway lines from what reached the upstream: 30 in a window, 3× (FAIL),
// and NOT MEASURED for the gateway's answers, which it did not see.
func TestCheckGatewayOwnClient(t *testing.T) {
	up := freePort(t)
	var out, errOut bytes.Buffer
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	cmd := &CheckCmd{Scenario: "testdata/gateway/upstream-limited.toml", JSON: true, Stdout: &out, Stderr: &errOut, parent: ctx}
	cmd.Addr, cmd.Drain = fmt.Sprintf("127.0.0.1:%d", up), 5*time.Second
	done := make(chan error, 1)
	go func() { done <- cmd.Run() }()
	url := fmt.Sprintf("http://127.0.0.1:%d/api/v1/chat/completions", up)
	for deadline := time.Now().Add(30 * time.Second); ; {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", up)); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("check did not listen within 30s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	var wg sync.WaitGroup
	for range 30 {
		wg.Go(func() {
			req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
			req.Header.Set("Authorization", "Bearer sk-gateway")
			req.Header.Set("Content-Type", "application/json")
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	stop() // as Ctrl-C: grade what came
	<-done
	var rep check.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("no JSON report (%v):\n%s\n%s", err, out.String(), errOut.String())
	}
	// All 30 within a window is 3×; a machine slow enough to spread them
	// over more than a second lowers it, but not to 1.05× (11 in a second).
	if l := gatewayLine(t, &rep, check.CheckGatewayRPM); l.Verdict != check.Fail || l.Value > 3 {
		t.Errorf("30 requests at once where 10 per 1s window were declared: %+v; want FAIL, at most 3×", l)
	}
	for _, c := range []string{check.CheckGatewayRetryAfter, check.CheckUpstream429} {
		if l := gatewayLine(t, &rep, c); l.Verdict != check.NotMeasured {
			t.Errorf("%s without check's own load: %+v; want NOT MEASURED", c, l)
		}
	}
}

func TestParseExpect(t *testing.T) {
	keys, window, err := parseExpect([]string{"sk-a:rpm=600,tpm=40000", "sk-b:rpm=5/s,window=10s"})
	want := []scenarios.GatewayKey{{Key: "sk-a", RPM: 600, TPM: 40000}, {Key: "sk-b", RPM: 300}}
	if err != nil || !reflect.DeepEqual(keys, want) || window != 10*time.Second {
		t.Errorf("parseExpect = %+v, %v, %v; want %+v, 10s", keys, window, err, want)
	}
	for _, tt := range []struct{ give, want string }{
		{"sk-a", "want KEY:rpm=N,tpm=N"},
		{"sk-a:rpm=0", "a limit must be above 0"},
		{"sk-a:rpm=lots", "rpm=lots is not a rate"},
		{"sk-a:rps=5", `unknown limit "rps"`},
		{"sk-a:window=1m", "declares no limit"},
		{"sk-a:rpm=5,window=0s", "want a duration of at least 1ms"},
	} {
		if _, _, err := parseExpect([]string{tt.give}); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parseExpect(%q) = %v; want an error saying %q", tt.give, err, tt.want)
		}
	}
	for _, give := range [][]string{{"sk-a:rpm=1", "sk-a:rpm=2"}, {"sk-a:rpm=1,window=1s", "sk-b:rpm=1,window=2s"}} {
		if _, _, err := parseExpect(give); err == nil {
			t.Errorf("parseExpect(%q) = nil; want an error", give)
		}
	}
	// --expect replaces the table's keys and keeps its service and ratio.
	sc, err := openScenario("testdata/gateway/limits.toml")
	if err != nil {
		t.Fatal(err)
	}
	g, err := (&CheckCmd{Expect: []string{"sk-x:rpm=60"}}).gateway(sc)
	if err != nil || g.Service != "api" || g.Window != 5*time.Second || g.MaxRatio != 1.05 || len(g.Keys) != 1 || g.Keys[0].Key != "sk-x" {
		t.Errorf("gateway with --expect = %+v, %v; want service api, the table's 5s window and 1.05, key sk-x alone", g, err)
	}
	if sc.Check.Gateway.Keys[0].Key != "sk-gateway" {
		t.Errorf("--expect changed the scenario's table: %+v", sc.Check.Gateway)
	}
}
