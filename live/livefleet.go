package live

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/simbench/simbench/internal/collect"
	"github.com/simbench/simbench/internal/redisproc"
	"github.com/simbench/simbench/internal/setup"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sched"
	"github.com/simbench/simbench/sched/quota"
	"github.com/simbench/simbench/sim"
)

// QuotaMode says, with the values of a scenario's quota.mode, how the
// processes of a live run with LiveOptions.Processes above 1 share each
// service's limits (one API key behind all of them).
// It applies to the limits a strategy's scheduler enforces (its token
// buckets): a strategy without them paces nothing in any mode.
type QuotaMode string

const (
	// QuotaFull configures every process with the service's full limits,
	// as if each had the key to itself: together they offer N times them.
	QuotaFull QuotaMode = scenarios.QuotaFull
	// QuotaSplit gives every process the limits ÷ N (rates and bursts):
	// never above the limit, but what an idle process leaves is wasted.
	QuotaSplit QuotaMode = scenarios.QuotaSplit
	// QuotaShared keeps every process's own limits at the full figures and
	// shares one quota through Redis (sched/quota: leased grants, and the
	// strategy's failover: by default a 50 ms round-trip timeout and a
	// local share of limit ÷ N while Redis is unreachable, both times
	// scaled by the time scale).
	QuotaShared QuotaMode = scenarios.QuotaShared
)

// forStrategy returns the fleet settings for strategy st: the mode
// LiveOptions.Quota gave, else the strategy's own quota.mode.
func (fo *fleetOptions) forStrategy(st *scenarios.Strategy) *fleetOptions {
	if fo.explicit {
		return fo
	}
	own := *fo
	own.mode = QuotaMode(st.Quota.Mode)
	if own.mode == "" {
		own.mode = QuotaFull
	}
	return &own
}

// fleetOptions are LiveOptions' process settings, checked.
type fleetOptions struct {
	n      int
	shares []float64 // normalized, len n
	mode   QuotaMode
	redis  string // URL
	// explicit is set when LiveOptions.Quota chose the mode for every
	// strategy; otherwise each strategy's scenario quota.mode does.
	explicit bool
	// anyShared is set when some strategy shares its quota through Redis.
	anyShared bool
	// processes is set when the fleet's members run as OS processes
	// (LiveOptions.Worker), which meet at a rendezvous on the Redis at meet
	// (redis, unless it does not answer and the run may go on without it).
	processes bool
	meet      string
}

func (o *LiveOptions) fleet() (fleetOptions, error) {
	fo := fleetOptions{n: max(o.Processes, 1), mode: o.Quota, redis: o.Redis, explicit: o.Quota != ""}
	if o.Processes < 0 {
		return fo, fmt.Errorf("live: %d processes: need at least 1", o.Processes)
	}
	switch fo.mode {
	case "":
		fo.mode = QuotaFull
	case QuotaFull, QuotaSplit, QuotaShared:
	default:
		return fo, fmt.Errorf("live: quota mode %q: want %q, %q or %q", o.Quota, QuotaFull, QuotaSplit, QuotaShared)
	}
	if len(o.Shares) != 0 && len(o.Shares) != fo.n {
		return fo, fmt.Errorf("live: %d shares for %d processes", len(o.Shares), fo.n)
	}
	var sum float64
	for _, s := range o.Shares {
		if !(s >= 0) || math.IsInf(s, 0) {
			return fo, fmt.Errorf("live: process share %v: want a finite number ≥ 0", s)
		}
		sum += s
	}
	if len(o.Shares) > 0 && sum == 0 {
		return fo, fmt.Errorf("live: process shares add up to 0")
	}
	fo.shares = make([]float64, fo.n)
	for i := range fo.shares {
		if len(o.Shares) == 0 {
			fo.shares[i] = 1 / float64(fo.n)
		} else {
			fo.shares[i] = o.Shares[i] / sum
		}
	}
	return fo, nil
}

// procTally is one process's figures as the run goes (under liveRun.mu).
type procTally struct {
	// begun counts the turns begun; ended those that ended within the
	// duration (the rest are unfinished).
	begun, ended, good, limited int64
	// failed counts its turns that ended failed within the duration;
	// calls its tool calls decided within it, attempts every attempt of
	// its tool calls (as the collector counts them).
	failed, calls, attempts int64
	// store is its shared quota's store (nil unless quota mode "shared"),
	// redis the store's primary: every operation it sent to Redis
	// (reservations, settlements, refunds, failed ones too) is one of the
	// process's quota round trips, as every operation sent to the
	// simulated store is one in virtual time (storeConn.trip).
	store *quota.Failover
	redis *quota.Redis
	// shared is its shared quota (nil unless quota mode "shared"): the
	// grants' lifetime and largest slice it sizes them with.
	shared    *quota.Shared
	answered  *collect.Histogram
	fallbacks int
	fallbackS float64
	downSince time.Duration // scenario time of the last switch to the fallback; -1: up
}

// startRedis returns the URL of the Redis a shared-quota run uses: the one
// given, or one started from PATH for the run (stopped by the returned func).
func startRedis(fo *fleetOptions, allowFallback bool) (stop func(), err error) {
	if !(fo.anyShared || fo.processes) || fo.n < 2 {
		return func() {}, nil
	}
	if fo.redis != "" {
		err := pingRedis(fo.redis)
		if err != nil && !allowFallback {
			return nil, fmt.Errorf("live: the shared quota's Redis does not answer: %w; start it, or allow the processes to run on local shares (--redis-fallback)", err)
		}
		if err == nil || !fo.processes {
			fo.meet = fo.redis
			return func() {}, nil
		}
		// The quota's Redis is gone and the processes may run on local
		// shares: they still need a Redis to meet at.
	}
	s, err := redisproc.Start(0)
	if err != nil {
		return nil, fmt.Errorf("live: a shared quota, or a fleet of processes (their rendezvous), needs a redis-server (or --redis URL): %w", err)
	}
	if fo.redis == "" {
		fo.redis = s.URL()
	}
	fo.meet = s.URL()
	return s.Stop, nil
}

// fleetRunners starts one Runner per process with the quota mode's limits,
// each shared-quota Runner with its own Redis connection, and returns a
// func that closes them and their connections.
func (l *liveRun) fleetRunners(cfg sched.Config, execFor func(p int) sched.Executor, fo *fleetOptions) (func(), error) {
	var closers []func()
	closeAll := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	l.procs = make([]procTally, fo.n)
	key := fmt.Sprintf("%s/%s/%d", l.sc.Name, l.st.Name, time.Now().UnixNano())
	if l.quotaKey != "" {
		key = l.quotaKey
	}
	for p := range fo.n {
		l.procs[p] = procTally{answered: collect.NewHistogram(), downSince: -1}
		if l.member != 0 && l.member != p+1 {
			l.runners = append(l.runners, nil) // another member's: it runs elsewhere
			continue
		}
		pc := cfg
		var opts []sched.RunnerOption
		switch {
		case fo.mode == QuotaSplit && fo.n > 1:
			pc.Services = sim.SplitServices(cfg.Services, fo.n)
		case fo.mode == QuotaShared && fo.n > 1:
			ro, err := quota.ParseURL(fo.redis)
			if err != nil {
				closeAll()
				return nil, fmt.Errorf("live: --redis: %w", err)
			}
			redisproc.Quiet()
			rdb := quota.NewClient(ro)
			rs := &quota.Redis{Client: rdb, Holder: "p" + strconv.Itoa(p+1), HolderTTL: 2 * time.Second}
			fail := sim.NewFailover(rs, l.st.Quota, fo.n, l.f, func(e quota.Event) { l.quotaSwitch(p, e) })
			closers = append(closers, func() { fail.Close(); rdb.Close() }) // a probe in flight ends first
			sh := sim.NewSharedQuota(fail, key, cfg, l.st.Quota, fo.n, l.f)
			opts = append(opts, sched.WithQuota(sh))
			l.procs[p].store, l.procs[p].redis, l.procs[p].shared = fail, rs, sh
		}
		pc.Rand = setup.Stream(l.sc.Seed, "strategy/"+l.st.Name+"/p"+strconv.Itoa(p))
		if p == 0 {
			pc.Rand = cfg.Rand // one process draws as a run of one does
		}
		r, err := sched.NewRunner(pc, execFor(p), opts...)
		if err != nil {
			closeAll()
			return nil, err
		}
		l.runners = append(l.runners, r)
		closers = append(closers, func() { r.Close() })
	}
	return closeAll, nil
}

// redisPingTimeout bounds the check that a given Redis answers before a
// shared-quota run starts.
const redisPingTimeout = 2 * time.Second

// pingRedis checks that the Redis at url answers PING.
func pingRedis(url string) error {
	ro, err := quota.ParseURL(url)
	if err != nil {
		return err
	}
	redisproc.Quiet()
	c := quota.NewClient(ro)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), redisPingTimeout)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("%s: %w", url, err)
	}
	return nil
}

// fallbackReason says why a strategy whose processes spent the spans on
// their local shares did not measure a shared quota ("" when none did).
func fallbackReason(spans []results.EventSpan) string {
	if len(spans) == 0 {
		return ""
	}
	var s float64
	for _, e := range spans {
		s += e.EndS - e.StartS
	}
	return fmt.Sprintf("processes ran %.1f s (scenario time, summed over %d periods) on local shares while Redis was unreachable, so the shared quota was not measured throughout (allow it with --redis-fallback)", s, len(spans))
}

// quotaSwitch records a process's switch to or from its local share.
func (l *liveRun) quotaSwitch(p int, e quota.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := &l.procs[p]
	now := l.vnow()
	if e.Down {
		t.fallbacks++
		t.downSince = now
		return
	}
	if t.downSince >= 0 {
		l.endFallback(p, now)
	}
}

// endFallback closes process p's fallback period at now. Only its part
// within the run counts (from 0 to the scenario's duration): a switch
// made while the process connected before the start, or while its last
// turns drained after the end, spends none of the run on the fallback.
func (l *liveRun) endFallback(p int, now time.Duration) {
	t := &l.procs[p]
	runEnd := time.Duration(float64(l.sc.Duration) / l.f)
	from, to := min(max(t.downSince, 0), runEnd), min(max(now, 0), runEnd)
	if to > from {
		t.fallbackS += (to - from).Seconds()
		l.fallbacks = append(l.fallbacks, results.EventSpan{Service: "*", Kind: "quota-fallback", StartS: from.Seconds(), EndS: to.Seconds(),
			Label: fmt.Sprintf("%s: process p%d on a local share (Redis unreachable)", l.st.Name, p+1)})
	}
	t.downSince = -1
}

// processResults returns the per-process figures (nil for one process).
func (l *liveRun) processResults(fo *fleetOptions) []results.ProcessResult {
	if fo.n < 2 {
		return nil
	}
	end := l.vnow()
	window := l.sc.Duration.Seconds()
	if l.f > 0 {
		window /= l.f
	}
	var out []results.ProcessResult
	for p := range fo.n {
		if l.member != 0 && l.member != p+1 {
			continue // another member reports its own
		}
		t := &l.procs[p]
		if t.downSince >= 0 {
			l.endFallback(p, end)
		}
		out = append(out, results.ProcessResult{Name: "p" + strconv.Itoa(p+1), Share: setup.Round6(fo.shares[p]), Turns: t.ended, FailedTurns: t.failed,
			UnfinishedTurns: t.begun - t.ended, Calls: t.calls, Attempts: t.attempts, GoodputPerS: setup.Round6(float64(t.good) / window), RateLimited: t.limited,
			AnswerLatencyMs: t.answered.AnswerSummary(uint64(t.ended)), QuotaFallbacks: t.fallbacks, QuotaFallbackS: setup.Round6(t.fallbackS)})
		if t.redis != nil {
			out[len(out)-1].QuotaRoundTrips = t.redis.RoundTrips()
			out[len(out)-1].QuotaUnanswered = t.store.Stats().PrimaryErrors
		}
	}
	return out
}
