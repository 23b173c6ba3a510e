package live

import (
	"fmt"
	"net/http"
	"time"
)

// How a live run holds an offered load the machine cannot keep: it bounds
// the calls in flight and the connections to the provider by the memory
// budget, records the calls it could not send instead of piling them up,
// and stops once it is hopelessly behind.
const (
	// LiveCallBytes is what one call in flight of a live run is reckoned
	// to cost, in bytes: the goroutines that carry it (the part's, the
	// Runner's worker, the client connection's reader and writer, the
	// server's handler) and the buffers of both ends of its connection.
	// Measured on flood-16k.toml (live/testdata) at 16,000 calls/s: a peak
	// RSS of 78 MB with 256 calls in flight, 209 MB with 1,945, about 78 KB
	// a call; rounded up.
	LiveCallBytes = 96 << 10
	// liveBudgetShare is the share of the memory budget (--max-memory)
	// that the calls in flight may take; the rest is the collectors', the
	// servers' books and the garbage collector's headroom.
	liveBudgetShare = 4
	// minLiveInFlight and maxLiveInFlight bound the calls in flight
	// whatever the budget: the fewest a run may hold (below it a small
	// budget would starve an ordinary scenario) and the most (a run with
	// no budget at all).
	minLiveInFlight = 64
	maxLiveInFlight = 1 << 16
	// GiveUpBehind is how far behind a live run may fall before it stops:
	// once the calls it could not send plus the calls due and not yet sent
	// (the arrivals' timers' lateness) amount to more than this much of
	// its offered load, in real time, it stops and is marked invalid.
	GiveUpBehind = 2 * time.Second
)

// LiveInFlight is the most calls a live run holds in flight under a memory
// budget in bytes (≤ 0: none): a quarter of the budget at LiveCallBytes
// each, within [64, 65536]. The rest of the budget is the process's own:
// about 60 MB of it whatever the load, so a budget under about 100 MB is
// passed. A part that would take the run past it is not
// sent (StrategyResult.NotSent).
func LiveInFlight(budget int64) int {
	if budget <= 0 {
		return maxLiveInFlight
	}
	return int(min(max(budget/liveBudgetShare/LiveCallBytes, minLiveInFlight), maxLiveInFlight))
}

// newTransport returns the HTTP transport of one process of a live run that
// holds at most inFlight calls at once: as many connections per host, kept
// idle between calls, so a run that falls behind waits for a connection
// instead of opening a new one for every late request.
func newTransport(inFlight int) *http.Transport {
	return &http.Transport{MaxIdleConns: inFlight, MaxIdleConnsPerHost: inFlight, MaxConnsPerHost: inFlight, IdleConnTimeout: 30 * time.Second}
}

// loadGauge is the driving goroutine's account of the work it sent: the
// calls in flight, sent and not sent, and how late the last arrival fired.
// Only the driving goroutine touches it.
type loadGauge struct {
	bound    int // the most calls in flight (LiveInFlight)
	inFlight int
	sent     int64
	notSent  int64
	late     time.Duration // the lateness of the last timer fired, real time
	began    time.Time     // when the run's load began
	stopped  string        // why the run stopped early ("" when it did not)
}

// admit says whether a part of n calls may be sent now (counting it in or
// out): it may when it fits the bound, or when nothing is in flight.
func (g *loadGauge) admit(n int) bool {
	if g.inFlight > 0 && g.inFlight+n > g.bound {
		g.notSent += int64(n)
		return false
	}
	g.inFlight += n
	g.sent += int64(n)
	return true
}

// done takes n calls out of flight.
func (g *loadGauge) done(n int) { g.inFlight -= n }

// behind returns how far behind its offered load the run is at now, in
// real time: the calls not sent at the offered rate so far (the calls sent
// and not sent per second since the load began), plus the last timer's
// lateness.
func (g *loadGauge) behind(now time.Time) time.Duration {
	b := g.late
	if g.notSent > 0 {
		elapsed := now.Sub(g.began).Seconds()
		rate := float64(g.sent+g.notSent) / elapsed
		b += time.Duration(float64(g.notSent) / rate * 1e9)
	}
	return b
}

// giveUp says whether the run is hopelessly behind at now (behind by more
// than GiveUpBehind) and, the first time it is, records why.
func (g *loadGauge) giveUp(now time.Time, vnow time.Duration) bool {
	if g.stopped != "" {
		return true
	}
	b := g.behind(now)
	if b <= GiveUpBehind {
		return false
	}
	g.stopped = fmt.Sprintf("stopped at %v of the scenario's time, %v behind its offered load (more than %v: %d calls not sent, %d sent, at most %d in flight; timers %v late): the machine cannot keep this load within --max-memory",
		vnow.Round(time.Millisecond), b.Round(time.Millisecond), GiveUpBehind, g.notSent, g.sent, g.bound, g.late.Round(time.Millisecond))
	return true
}

// notSentReason says why a run that could not send every call is invalid
// ("" when it sent them all).
func (g *loadGauge) notSentReason() string {
	if g.notSent == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d calls offered not sent (at most %d in flight, a quarter of --max-memory at %d KiB per call): the machine could not keep the offered load",
		g.notSent, g.sent+g.notSent, g.bound, LiveCallBytes>>10)
}
