package scenarios

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/spec"
)

// MaxProcesses bounds workload.processes: each process is a scheduler of
// its own, held in the simulator's memory (and, in a live run, an OS
// process of its own).
const MaxProcesses = 1024

// The quota modes, as written in scenario files (Quota.Mode).
const (
	// QuotaFull gives every process the services' full published limits:
	// N processes together may offer N times what the key allows.
	QuotaFull = "full"
	// QuotaSplit gives every process its even part of the limits, limit ÷ N
	// (request bursts at least 1): the fleet stays within the key's limit,
	// but a busy process cannot use what idle ones leave.
	QuotaSplit = "split"
	// QuotaShared makes every process take each attempt's requests and
	// tokens from one bucket per service and limit that all of them share
	// (sched/quota: a Redis-backed bucket, optionally through leases), on
	// top of its own buckets at the full limit.
	QuotaShared = "shared"
)

// DefaultQuotaRTT is the round trip to the shared quota store (Redis) that
// the simulator models when a strategy's quota sets no rtt: a loopback
// Redis's.
const DefaultQuotaRTT = 200 * time.Microsecond

// MinQuotaRTT is the shortest round trip to the shared quota store a
// scenario may set: 10 µs, well under a loopback Redis's 0.1–0.2 ms. A
// process waiting on an empty shared bucket polls it once a round trip,
// so a shorter one costs simulation time without modelling anything real.
const MinQuotaRTT = 10 * time.Microsecond

// DefaultQuotaTimeout bounds each round trip to the shared quota store
// when a strategy's quota sets no timeout: 50 ms, a store on the same
// network (sched/quota's DefaultTimeout, 250 ms, is chosen for one up to
// 100 ms away; a scenario whose live fleet reaches its Redis across such
// a distance sets timeout = "250ms").
const DefaultQuotaTimeout = 50 * time.Millisecond

// DefaultQuotaProbeEvery is how often, while the shared store is
// unreachable, a process tries it again when a strategy's quota sets no
// probe_every: sched/quota's DefaultProbeEvery, 1 s.
const DefaultQuotaProbeEvery = time.Second

// The policies of a shared quota while its store is unreachable, as
// written in scenario files (Quota.Fallback): sched/quota's Failover
// policies.
const (
	// FallbackLocal admits calls against a local bucket holding limit ÷
	// processes (quota.FallbackLocal).
	FallbackLocal = "local"
	// FallbackClosed refuses credit: every call waiting for it ends
	// overloaded (quota.FailClosed).
	FallbackClosed = "closed"
)

// The kinds of a simulated store outage (Quota.Outage).
const (
	// OutageDown is a store that is gone (its server stopped): each round
	// trip reaching it during the outage is refused, one round trip (at
	// most the timeout) after it was sent.
	OutageDown = "down"
	// OutageHung is a store that answers nothing (a frozen server, a
	// partition): each round trip reaching it during the outage ends at
	// the timeout.
	OutageHung = "hung"
)

// Quota says how a strategy's processes divide the services' limits when
// Workload.Processes > 1: each process has its own scheduler, and the
// services' limits belong to the key all of them use.
type Quota struct {
	// Mode is QuotaFull, QuotaSplit or QuotaShared (QuotaFull when unset).
	Mode string
	// RTT is the modelled round trip of one operation on the shared store
	// (QuotaShared only; DefaultQuotaRTT when unset): a process's request
	// for credit is answered one RTT per store operation it needs (plus the
	// wait the store gives), its calls waiting in their queue meanwhile.
	RTT time.Duration
	// Lease is how long a grant of the shared bucket stays valid
	// (QuotaShared only; quota.Shared.TTL; 0: no leases, each grant exactly
	// what one call needs). A process reserves a grant sized to its recent
	// rate × Lease and spends it locally, without round trips, returning
	// what it did not use.
	Lease time.Duration
	// LeaseMax is the largest slice a lease may hold, as a fraction of the
	// bucket's burst, in (0, 1] (with Lease > 0; 0 when unset: see
	// LeaseShare).
	LeaseMax float64
	// Timeout bounds each round trip to the shared store (QuotaShared
	// only; quota.Failover.Timeout; DefaultQuotaTimeout when unset): a
	// round trip longer than Timeout fails at Timeout, and the process
	// switches to Fallback until a probe succeeds.
	Timeout time.Duration `json:",omitempty"`
	// ProbeEvery is how often a process whose store is unreachable tries
	// it again, with a real operation (QuotaShared only;
	// quota.Failover.ProbeEvery; DefaultQuotaProbeEvery when unset).
	ProbeEvery time.Duration `json:",omitempty"`
	// Fallback is what a process does while the store is unreachable:
	// FallbackLocal or FallbackClosed (QuotaShared only; FallbackLocal
	// when unset).
	Fallback string `json:",omitempty"`
	// OutageAt and OutageFor make the simulated store unreachable from
	// OutageAt for OutageFor (QuotaShared only; OutageFor 0: no outage):
	// every operation reaching it then fails, as Outage says.
	OutageAt  time.Duration `json:",omitempty"`
	OutageFor time.Duration `json:",omitempty"`
	// Outage is how the store fails during the outage: OutageDown or
	// OutageHung (OutageDown when unset; "" without an outage).
	Outage string `json:",omitempty"`
}

// OutageEnd returns when the simulated store's outage ends (OutageAt +
// OutageFor; 0 without an outage).
func (q *Quota) OutageEnd() time.Duration {
	if q.OutageFor <= 0 {
		return 0
	}
	return q.OutageAt + q.OutageFor
}

// Shares returns the workload's process weights normalised to sum to 1:
// ProcessShares, or even shares when it is unset. Processes ≤ 1 gives [1].
func (w *Workload) Shares() []float64 {
	n := max(w.Processes, 1)
	out := make([]float64, n)
	if len(w.ProcessShares) != n {
		for i := range out {
			out[i] = 1 / float64(n)
		}
		return out
	}
	var sum float64
	for _, s := range w.ProcessShares {
		sum += s
	}
	for i, s := range w.ProcessShares {
		out[i] = s / sum
	}
	return out
}

// ProcessSessions returns how many of the closed model's sessions each
// process runs: Sessions apportioned by Shares with the largest-remainder
// rule (ties to the lower process), so the counts add up to Sessions and
// each is within one of its exact share.
func (w *Workload) ProcessSessions() []int {
	shares := w.Shares()
	counts := make([]int, len(shares))
	rem := make([]int, len(shares))
	left := w.Sessions
	frac := make([]float64, len(shares))
	for i, s := range shares {
		exact := s * float64(w.Sessions)
		counts[i] = int(exact)
		frac[i] = exact - float64(counts[i])
		left -= counts[i]
		rem[i] = i
	}
	slices.SortStableFunc(rem, func(a, b int) int { return cmp.Compare(frac[b], frac[a]) })
	for i := 0; left > 0; i = (i + 1) % len(rem) {
		counts[rem[i]]++
		left--
	}
	return counts
}

// SessionProcesses returns, for each closed-model session in order, the
// process that runs it: process p gets ProcessSessions()[p] sessions,
// interleaved so that every process's sessions spread evenly over the
// session order (and so over the ramp). Process p's k-th session sits at
// (k + ½) ÷ count_p of the way through; ties go to the lower process.
func (w *Workload) SessionProcesses() []int {
	counts := w.ProcessSessions()
	type slot struct{ p, k int }
	slots := make([]slot, 0, w.Sessions)
	for p, n := range counts {
		for k := range n {
			slots = append(slots, slot{p, k})
		}
	}
	slices.SortFunc(slots, func(a, b slot) int {
		// (2a.k+1)/count_a against (2b.k+1)/count_b, in integers.
		l, r := int64(2*a.k+1)*int64(counts[b.p]), int64(2*b.k+1)*int64(counts[a.p])
		return cmp.Or(cmp.Compare(l, r), cmp.Compare(a.p, b.p))
	})
	out := make([]int, len(slots))
	for i, s := range slots {
		out[i] = s.p
	}
	return out
}

// decodeProcesses reads workload.processes and workload.process_shares.
func (d *decoder) decodeProcesses(t *table, w *Workload) {
	w.Processes = 1
	if n, ok := t.integer("processes", 1, MaxProcesses, "each process is a scheduler of its own"); ok {
		w.Processes = int(n)
	}
	shares, ok := t.numbers("process_shares", MaxWeight)
	if !ok {
		return
	}
	switch {
	case !t.has("processes"):
		w.Processes = len(shares)
		if len(shares) > MaxProcesses {
			t.add("process_shares", "has %d weights; there may be at most %d processes (each process is a scheduler of its own)", len(shares), MaxProcesses)
			return
		}
	case len(shares) != w.Processes:
		t.add("process_shares", "has %d weights for %d processes; give one weight per process", len(shares), w.Processes)
		return
	}
	w.ProcessShares = shares
}

// numbers returns an array of numbers above 0 and at most hi.
func (t *table) numbers(k string, hi float64) ([]float64, bool) {
	v, ok := t.get(k)
	if !ok {
		return nil, false
	}
	arr, ok := v.([]any)
	if !ok || len(arr) == 0 {
		t.add(k, "wants a non-empty array of numbers, like %s = [3, 1, 1], got %s", k, describe(v))
		return nil, false
	}
	out := make([]float64, 0, len(arr))
	for i, e := range arr {
		key := t.key(k) + "[" + strconv.Itoa(i) + "]"
		f, isNum := t.d.number(key, e)
		switch {
		case !isNum:
			ok = false
		case f <= 0:
			t.d.add(key, "is %s; a weight must be greater than 0", spec.ShowAmount(f))
			ok = false
		case f > hi:
			t.d.add(key, "is %s; a weight may be at most %s, so that a sum of weights stays exact", spec.ShowAmount(f), spec.ShowAmount(hi))
			ok = false
		default:
			out = append(out, f)
		}
	}
	return out, ok
}

// decodeQuota reads a strategy's quota table.
func (d *decoder) decodeQuota(sc *Scenario, s *Strategy, t *table) {
	defer t.finish()
	q := &s.Quota
	q.Mode = enum(t, "mode", QuotaFull, QuotaFull, QuotaSplit, QuotaShared)
	if !t.has("mode") {
		t.add("mode", "is required; write mode = \"full\", \"split\" or \"shared\"")
	}
	q.RTT = DefaultQuotaRTT
	if rtt, ok := t.duration("rtt"); ok {
		q.RTT = rtt
		if rtt < MinQuotaRTT {
			t.add("rtt", "is %v; a round trip to a shared store takes at least %v (a loopback Redis about 0.1–0.2 ms), and shorter ones only make the simulation poll an empty bucket more often: 1ns made 5 virtual seconds take over a minute", rtt, MinQuotaRTT)
		}
	}
	q.Lease, _ = t.duration("lease")
	if f, ok := t.fraction("lease_max"); ok {
		if f == 0 {
			t.add("lease_max", "is 0; it is the largest slice as a fraction of the burst, so keep it in (0, 1]")
		}
		q.LeaseMax = f
	}
	d.decodeFailover(sc, t, q)
	if q.Mode != QuotaShared {
		for _, k := range []string{"rtt", "lease", "lease_max", "timeout", "probe_every", "fallback", "outage_at", "outage_for", "outage"} {
			if t.has(k) {
				t.add(k, "only applies with mode = \"shared\"; remove it or change the mode")
			}
		}
	}
	if t.has("lease_max") && q.Lease == 0 {
		t.add("lease_max", "only applies with a lease; add lease = \"250ms\" or remove lease_max")
	}
	if q.Mode == QuotaSplit && !s.TokenBucket {
		t.add("mode", "\"split\" divides the token buckets' limits, so it needs token_bucket = true in the strategy")
	}
	if q.Mode == QuotaSplit && s.TokenBucket {
		splitAboveFloor(sc, t)
	}
	if q.Mode == QuotaShared && !s.TokenBucket {
		t.add("mode", "\"shared\" shares the token buckets' limits (as sched.WithQuota does), so it needs token_bucket = true in the strategy")
	}
	if q.Mode != QuotaShared {
		*q = Quota{Mode: q.Mode, Lease: q.Lease, LeaseMax: q.LeaseMax}
	}
}

// LeaseShare is the largest slice a lease of one of n processes may hold,
// as a fraction of the bucket's burst: LeaseMax, or 1 ÷ n when it is unset,
// so that the slices cannot hold more than an even part of the burst. It
// is resolved for the fleet that runs, not when the scenario is read: a
// run with another process count (--processes) gets its own even part.
func (q Quota) LeaseShare(n int) float64 {
	if q.LeaseMax > 0 {
		return q.LeaseMax
	}
	return 1 / float64(max(n, 1))
}

// decodeFailover reads a shared quota's failover keys (timeout,
// probe_every, fallback) and its simulated store outage (outage_at,
// outage_for, outage).
func (d *decoder) decodeFailover(sc *Scenario, t *table, q *Quota) {
	q.Timeout = DefaultQuotaTimeout
	if v, ok := t.duration("timeout"); ok {
		if v <= 0 {
			t.add("timeout", "is %v; a round trip needs a timeout above 0 (sched/quota's default is %v)", v, DefaultQuotaTimeout)
		}
		q.Timeout = v
	}
	q.ProbeEvery = DefaultQuotaProbeEvery
	if v, ok := t.duration("probe_every"); ok {
		if v <= 0 {
			t.add("probe_every", "is %v; a process whose store is unreachable tries it again this often, so it must be above 0", v)
		}
		q.ProbeEvery = v
	}
	q.Fallback = enum(t, "fallback", FallbackLocal, FallbackLocal, FallbackClosed)
	at, hasAt := t.duration("outage_at")
	dur, hasFor := t.duration("outage_for")
	switch {
	case hasAt && !hasFor:
		t.add("outage_at", "needs outage_for, how long the store stays unreachable")
	case hasFor && !hasAt:
		t.add("outage_for", "needs outage_at, when the store becomes unreachable")
	case hasAt && hasFor:
		q.OutageAt, q.OutageFor = at, dur
		if dur <= 0 {
			t.add("outage_for", "is %v; an outage lasts more than 0 (leave outage_at and outage_for out for none)", dur)
		}
		if sc.Duration > 0 && at+dur > sc.Duration {
			t.add("outage_for", "makes the outage end at %v, after the run's duration %v; it must end by the end of the run", at+dur, sc.Duration)
		}
	}
	if t.has("outage") && !hasAt && !hasFor {
		t.add("outage", "only applies with an outage; add outage_at and outage_for or remove outage")
	}
	q.Outage = enum(t, "outage", OutageDown, OutageDown, OutageHung)
	if q.OutageFor <= 0 {
		q.Outage = ""
	}
}

// splitAboveFloor reports, at the quota's mode, a service whose request or
// token rate divided among the workload's processes falls below the
// scheduler's floor (see SplitBelowFloor).
func splitAboveFloor(sc *Scenario, t *table) {
	if msg := SplitBelowFloor(sc, max(sc.Workload.Processes, 1), 1); msg != "" {
		t.add("mode", "%s", msg)
	}
}

// SplitBelowFloor says which service of sc, its rates divided by the time
// scale f (as a live run plays them) and among n processes (quota mode
// "split"), would give each process a request or token rate below the
// scheduler's floor, sched.MinRatePerMinute (one a day), which every
// process's scheduler refuses; "" when none would.
func SplitBelowFloor(sc *Scenario, n int, f float64) string {
	for i := range sc.Services {
		svc := &sc.Services[i]
		for _, r := range []struct {
			what string
			rate float64
		}{{"requests", svc.RequestsPerMinuteLimit() / f}, {"tokens", svc.TokensPerMinute / f}} {
			if each := r.rate / float64(n); r.rate > 0 && each < sched.MinRatePerMinute {
				return fmt.Sprintf("\"split\" gives each of the %d processes %.3g %s a minute of service %q (%.3g ÷ %d), below the scheduler's floor of one a day (%.3g a minute); raise the service's limit or use fewer processes",
					n, each, r.what, svc.Name, r.rate, n, sched.MinRatePerMinute)
			}
		}
	}
	return ""
}
