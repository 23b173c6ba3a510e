package httptool_test

import (
	"context"
	"errors"
	. "github.com/simbench/simbench/sched/httptool"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/simbench/simbench/sched"
)

// TestExecuteCancelReachesServer runs a real server on loopback and checks
// that cancelling the caller's context ends the request at the server too:
// the connection closes, so the handler's context is cancelled.
func TestExecuteCancelReachesServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	started := make(chan struct{})
	serverSaw := make(chan error, 1)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Reading the body to its end lets net/http watch the connection
		// and cancel r.Context() when the client goes.
		_, _ = io.Copy(io.Discard, r.Body)
		once.Do(func() { close(started) })
		<-r.Context().Done()
		serverSaw <- r.Context().Err()
	})}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	transport := &http.Transport{}
	defer func() {
		transport.CloseIdleConnections()
		if err := srv.Close(); err != nil {
			t.Error(err)
		}
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve = %v, want http.ErrServerClosed", err)
		}
	}()

	tool := &Tool{
		Client: &http.Client{Transport: transport},
		Build:  PostJSON("http://"+ln.Addr().String()+"/tool", nil),
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan sched.Outcome, 1)
	go func() { done <- tool.Execute(ctx, testCall, 1) }()

	// The timeouts below only keep a broken build from hanging the test;
	// nothing is asserted about how long anything takes.
	select {
	case <-started:
	case <-time.After(30 * time.Second):
		t.Fatal("the request never reached the server")
	}
	cancel()
	got := <-done
	if got.Class != sched.ClassCancelled || got.Err != context.Canceled {
		t.Errorf("Execute = class %v, Err %v; want cancelled, context.Canceled", got.Class, got.Err)
	}
	select {
	case err := <-serverSaw:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("server saw the request end with %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Error("the server never saw the request's context end")
	}
}
