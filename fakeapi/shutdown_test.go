package fakeapi

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/simbench/simbench/spec"
)

// keepWorking is a service that, when its client leaves, finishes the
// answer for nobody: its handler outlives the connection by up to latency.
func keepWorking(latency time.Duration) []ServiceConfig {
	return []ServiceConfig{{Config: spec.Config{Name: "slow", KeepWorkingOnDisconnect: true,
		Latency: spec.Dist[time.Duration]{Value: latency}}}}
}

// An expired drain closes the connections; net/http's Close does not wait
// for the handlers, so without waiting for them the request still counted
// in flight when serve printed its summary (in_flight=1).
func TestShutdownPastDeadlineWaitsForHandlers(t *testing.T) {
	// CloseWait is only a hang guard: the handler ends 300 ms after
	// admission.
	s, err := Start(ServerConfig{Services: keepWorking(300 * time.Millisecond), CloseWait: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	_, done := inFlightRequest(t, s, &http.Client{Transport: tr}, "slow", "/x", "")
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the drain deadline has passed: close what is open at once
	if err := s.Shutdown(ctx); !errors.Is(err, context.Canceled) || errors.Is(err, ErrStillAnswering) {
		t.Fatalf("Shutdown = %v, want the context's error alone", err)
	}
	st := s.Stats().Services["slow"]
	if st.InFlight != 0 || st.Wasted != 1 || st.Completed != 0 {
		t.Errorf("after Shutdown: in_flight=%d wasted=%d completed=%d, want 0, 1, 0", st.InFlight, st.Wasted, st.Completed)
	}
	if err := <-done; err == nil {
		t.Error("the request was answered; want its connection closed")
	}
}

// Close waits for the handlers as Shutdown does.
func TestCloseWaitsForHandlers(t *testing.T) {
	s, err := Start(ServerConfig{Services: keepWorking(300 * time.Millisecond), CloseWait: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	_, done := inFlightRequest(t, s, &http.Client{Transport: tr}, "slow", "/x", "")
	if err := s.Close(); err != nil {
		t.Fatalf("Close = %v", err)
	}
	if st := s.Stats().Services["slow"]; st.InFlight != 0 || st.Wasted != 1 {
		t.Errorf("after Close: in_flight=%d wasted=%d, want 0 and 1", st.InFlight, st.Wasted)
	}
	<-done
}

// A handler that outlives CloseWait is reported, not waited for forever.
func TestShutdownReportsHandlersPastCloseWait(t *testing.T) {
	s, err := Start(ServerConfig{Services: keepWorking(300 * time.Millisecond), CloseWait: -1})
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	_, done := inFlightRequest(t, s, &http.Client{Transport: tr}, "slow", "/x", "")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = s.Shutdown(ctx)
	if !errors.Is(err, ErrStillAnswering) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Shutdown = %v, want ErrStillAnswering and the context's error", err)
	}
	<-done
	// Let the handler end before the leak check.
	eventually(t, "the handler ends", func() bool { n, _ := s.answering.running(); return n == 0 })
}
