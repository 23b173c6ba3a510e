package check

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/simbench/simbench/scenarios"
)

// Load is the load check sends a gateway: every declared key's requests at
// Offer times the key's declared rate, for Duration.
type Load struct {
	// URL is where the requests go: the gateway's URL for the model
	// endpoint of the upstream service (…/v1/chat/completions for an
	// OpenAI-style one).
	URL string
	// Body is each request's JSON body.
	Body []byte
	// Keys are the keys to send, with their declared limits.
	Keys []scenarios.GatewayKey
	// Offer is the offered rate as a multiple of each key's declared RPM
	// (a key with TPM only is sent at DefaultTPMOnlyRate per second).
	Offer float64
	// Duration is how long to send for.
	Duration time.Duration
	// MaxInFlight bounds the requests awaiting an answer at once (0:
	// DefaultLoadInFlight); past it a request is sent when one returns.
	MaxInFlight int
}

// DefaultLoadInFlight is the most requests a Load keeps awaiting an answer
// at once unless it says otherwise.
const DefaultLoadInFlight = 256

// DefaultTPMOnlyRate is the requests per second a Load sends a key that
// declares no RPM.
const DefaultTPMOnlyRate = 10

// LoadGrace is how long the requests a Load still awaits when its sending
// ends may take to be answered; then they are cancelled (status 0), so a
// gateway that hangs does not hold check.
const LoadGrace = 30 * time.Second

// Drive sends l's requests, each with its key as a bearer token and an
// Idempotency-Key of its own, and returns what each got back, with how
// long the sending lasted. It returns early when ctx ends; the requests
// then in flight are cancelled (status 0), as are those still awaited
// LoadGrace after the sending ended.
func Drive(ctx context.Context, l Load) ([]Sent, time.Duration) {
	reqCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	limit := l.MaxInFlight
	if limit <= 0 {
		limit = DefaultLoadInFlight
	}
	slots := make(chan struct{}, limit)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: limit, MaxConnsPerHost: limit}}
	defer client.CloseIdleConnections()
	var (
		mu   sync.Mutex
		sent []Sent
		wg   sync.WaitGroup
	)
	start := time.Now()
	var senders sync.WaitGroup
	for ki, k := range l.Keys {
		rate := l.Offer * k.RPM / 60
		if k.RPM <= 0 {
			rate = DefaultTPMOnlyRate
		}
		senders.Go(func() {
			for i := 0; ; i++ {
				at := start.Add(time.Duration(float64(i) / rate * float64(time.Second)))
				if at.Sub(start) >= l.Duration {
					return
				}
				select {
				case <-ctx.Done():
					return
				case <-time.After(time.Until(at)):
				}
				select {
				case <-ctx.Done():
					return
				case slots <- struct{}{}:
				}
				tag := fmt.Sprintf("simbench-gateway-%d-%d", ki, i)
				wg.Go(func() {
					defer func() { <-slots }()
					s := send(reqCtx, client, l, k.Key, tag)
					s.At = at.Sub(start)
					mu.Lock()
					sent = append(sent, s)
					mu.Unlock()
				})
			}
		})
	}
	senders.Wait()
	ran := time.Since(start)
	grace := time.AfterFunc(LoadGrace, cancel)
	defer grace.Stop()
	wg.Wait()
	return sent, ran
}

// send sends one request of key, tagged tag, and reads its answer.
func send(ctx context.Context, client *http.Client, l Load, key, tag string) Sent {
	s := Sent{Key: key, Tag: tag}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.URL, bytes.NewReader(l.Body))
	if err != nil {
		return s
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Idempotency-Key", tag)
	resp, err := client.Do(req)
	if err != nil {
		return s
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	s.Status = resp.StatusCode
	s.RetryAfter, s.RetryAfterMs = resp.Header.Get("Retry-After"), resp.Header.Get("Retry-After-Ms")
	return s
}
