package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

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
	if err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("err = %v", err)
	}
	var ec interface{ ExitCode() int }
	if !errors.As(err, &ec) || ec.ExitCode() != exitInvalid {
		t.Errorf("exit code for a refused address: %v", err)
	}
}
