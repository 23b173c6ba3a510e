package sim

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/redis/go-redis/v9"

	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sched/quota"
)

// DefaultRendezvousWait is how long a fleet member waits at the
// rendezvous for the others before it gives up (MemberOptions.Wait).
const DefaultRendezvousWait = 5 * time.Minute

// rendezvousLead is how far after the last member's arrival the members
// start: time for every member to read the start and sleep until it.
const rendezvousLead = 500 * time.Millisecond

// MemberOptions adjust one member's part of a live fleet run whose members
// run as processes of their own, on one host or many (RunMember).
type MemberOptions struct {
	// LiveOptions are the run's settings, the same for every member:
	// time scale, shares, quota mode, strategies, seed, duration.
	// Processes is ignored (Of is the fleet's size); Redis is required,
	// the server of the rendezvous and, in quota mode "shared", of the
	// quota.
	LiveOptions
	// Member is this member's index, from 0, of Of members (Of ≥ 1).
	Member, Of int
	// BaseURL is the provider's base URL (a `simbench serve` of the same
	// scenario, one listener with each service under /NAME).
	BaseURL string
	// RunID tells this run's rendezvous from another's on the same Redis
	// (""; the scenario's name and digest, the seed and Of, which two
	// fleets of the same scenario started at once must not share).
	RunID string
	// Rendezvous is the redis:// URL of the Redis the members meet at
	// ("": Redis).
	Rendezvous string
	// Wait bounds the wait at the rendezvous (0: DefaultRendezvousWait).
	Wait time.Duration
}

// Member is what one fleet member measured: its results (each strategy's
// figures for its own process, Results.Fleet naming it) and each
// strategy's latency histograms, which report --merge pools.
type Member struct {
	Results *results.Results
	Hists   []MemberHists
}

// MemberHists are one strategy's latency histograms from one member:
// every finished turn's latency (Turn), the turns answered in full
// (OKTurn) and every tool call's (Call), as HdrHistograms of nanoseconds
// at HDRSignificantDigits, the layout the run recorded them in, so
// members merge bucket for bucket.
type MemberHists struct {
	Strategy           string
	Turn, OKTurn, Call *hdrhistogram.Histogram
}

// RunMember runs member opts.Member of opts.Of of a live fleet: the
// sessions (or the open-model turns) of its process only, with the
// production Runner, against the provider at opts.BaseURL. Each strategy's
// run starts when every member has arrived at its rendezvous on Redis (no
// coordinator: each member counts itself in with INCR, the last one
// writes a start time on Redis's clock, rendezvousLead ahead, and every
// member sleeps until it). The results hold this member's figures only;
// the provider's own accounting (early retries, write races, its share of
// wasted work) is the provider's to report. When ctx ends first, it
// returns what was measured with Partial set, and ctx.Err().
func RunMember(ctx context.Context, sc *scenarios.Scenario, opts MemberOptions) (*Member, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	lo := opts.LiveOptions
	lo.Processes = opts.Of
	if len(lo.Shares) == 0 && sc.Workload.Processes == opts.Of {
		lo.Shares = sc.Workload.ProcessShares // the scenario's fleet, member by member
	}
	if err := lo.Validate(sc); err != nil {
		return nil, err
	}
	sc, err := lo.Apply(sc)
	if err != nil {
		return nil, err
	}
	fo, err := lo.fleetFor(sc)
	if err != nil {
		return nil, err
	}
	meet := cmp.Or(opts.Rendezvous, opts.Redis)
	if err := pingRedis(meet); err != nil {
		return nil, fmt.Errorf("sim: the rendezvous's Redis does not answer: %w; start it, or give its URL (--redis, --rendezvous)", err)
	}
	if fo.anyShared && meet != opts.Redis {
		if err := pingRedis(opts.Redis); err != nil && !lo.AllowRedisFallback {
			return nil, fmt.Errorf("sim: the shared quota's Redis does not answer: %w; start it, or allow the member to run on its local share (--redis-fallback)", err)
		}
	}
	ro, err := quota.ParseURL(meet)
	if err != nil {
		return nil, err
	}
	rdb := quota.NewClient(ro)
	defer rdb.Close()
	f := lo.TimeScale
	if f <= 0 {
		f = 1
	}
	runID := opts.RunID
	if runID == "" {
		runID = fmt.Sprintf("%s-%.12s-%d-of-%d", sc.Name, ScenarioDigest(sc), sc.Seed, opts.Of)
	}
	ms := &memberSetup{index: opts.Member, n: opts.Of, baseURL: strings.TrimSuffix(opts.BaseURL, "/"), runID: runID, rdb: rdb, wait: opts.Wait}
	if ms.wait <= 0 {
		ms.wait = DefaultRendezvousWait
	}
	ls := &liveSetup{orig: sc, sc: Scale(sc, f), f: f, progress: lo.Progress, trace: lo.Trace, maxTurnCalls: maxTurnCalls(lo.budget()), member: ms}
	res := &results.Results{
		Scenario: sc.Name, Description: sc.Description, Seed: sc.Seed, SimbenchVersion: lo.version(),
		ScenarioDigest: ScenarioDigest(sc), DurationS: sc.Duration.Seconds(), Mode: "live", TimeScale: f, Limits: LimitsOf(sc),
		Events: EventSpans(sc), Fleet: &results.FleetMember{Member: opts.Member, Of: opts.Of, RunID: runID},
	}
	m := &Member{Results: res}
	var own [][]string
	for i := range ls.sc.Strategies {
		st := &ls.sc.Strategies[i]
		if lo.Trace != nil {
			if err := lo.Trace.Header(TraceHeader(sc, st.Name, "live")); err != nil {
				return nil, err
			}
		}
		lr, err := runLiveStrategy(ctx, ls, st, fo.forStrategy(st))
		if lr != nil {
			res.Strategies = append(res.Strategies, lr.result)
			res.Events = append(res.Events, lr.fallbacks...)
			m.Hists = append(m.Hists, MemberHists{Strategy: st.Name, Turn: lr.m.turnLat.full(), OKTurn: lr.m.okTurnLat.full(), Call: lr.m.callLat.full()})
			own = append(own, strategyReasons(lr.invalid, lr.fallbacks, lo.AllowRedisFallback))
		}
		if err != nil {
			if ctx.Err() != nil {
				res.Partial = true
				break
			}
			return nil, err
		}
	}
	markInvalid(res, commonReasons(sc, f), own)
	if res.Partial {
		for i := range res.Strategies {
			res.Strategies[i].Partial = true
		}
		return m, ctx.Err()
	}
	return m, nil
}

// check refuses member settings no run can take.
func (o *MemberOptions) check() error {
	bad := func(format string, a ...any) error {
		return badOption{fmt.Errorf("sim: "+format, a...)}
	}
	switch {
	case o.Of < 1 || o.Of > scenarios.MaxProcesses:
		return bad("a fleet of %d members: want 1 to %d", o.Of, scenarios.MaxProcesses)
	case o.Member < 0 || o.Member >= o.Of:
		return bad("member %d of %d: members are numbered 0 to %d", o.Member, o.Of, o.Of-1)
	case !strings.HasPrefix(o.BaseURL, "http://") && !strings.HasPrefix(o.BaseURL, "https://"):
		return bad("provider URL %q: want http://host:port, the address `simbench serve` prints", o.BaseURL)
	case o.Redis == "":
		return bad("a fleet member needs the Redis its members meet at (redis://host:port)")
	}
	return nil
}

// memberSetup is a fleet member's part of a live run: its index of n, the
// provider's base URL, and the Redis its members meet at.
type memberSetup struct {
	index, n int
	baseURL  string
	runID    string
	rdb      *redis.Client
	wait     time.Duration
}

// key is the Redis key of the rendezvous (and prefix of the shared quota)
// of strategy st's run.
func (m *memberSetup) key(st string) string {
	return "simbench/fleet/" + m.runID + "/" + st
}

// errRendezvous is wrapped by a rendezvous that the other members did not
// all reach in time.
var errRendezvous = errors.New("the fleet's members did not all arrive")

// meet counts this member in at strategy st's rendezvous and returns the
// start every member of its round agreed on, on this host's clock. Members
// arrive in rounds of n: the k-th arrival is in round (k-1)/n, so a run
// started again with the same run id meets afresh; the last of a round
// writes the round's start on Redis's clock (TIME), and each member maps
// it to its own by the offset it measures to Redis.
func (m *memberSetup) meet(ctx context.Context, st string) (time.Time, error) {
	key := m.key(st) + "/arrived"
	k, err := m.rdb.Incr(ctx, key).Result()
	if err != nil {
		return time.Time{}, fmt.Errorf("sim: rendezvous at %s: %w", key, err)
	}
	m.rdb.Expire(ctx, key, time.Hour)
	round := (k - 1) / int64(m.n)
	offset, err := redisOffset(ctx, m.rdb)
	if err != nil {
		return time.Time{}, err
	}
	if k%int64(m.n) == 0 {
		start := time.Now().Add(-offset).Add(rendezvousLead) // on Redis's clock
		if err := m.rdb.Set(ctx, m.startKey(st, round), start.UnixNano(), time.Hour).Err(); err != nil {
			return time.Time{}, fmt.Errorf("sim: rendezvous at %s: %w", m.startKey(st, round), err)
		}
	}
	return m.awaitStart(ctx, st, round, offset)
}

// startKey is the Redis key of the start of strategy st's round.
func (m *memberSetup) startKey(st string, round int64) string {
	return m.key(st) + "/start/" + strconv.FormatInt(round, 10)
}

// awaitStart waits, at most m.wait, for the start of strategy st's round
// to be written and returns it on this host's clock (offset: this host's
// clock ahead of Redis's).
func (m *memberSetup) awaitStart(ctx context.Context, st string, round int64, offset time.Duration) (time.Time, error) {
	key, startKey := m.key(st)+"/arrived", m.startKey(st, round)
	deadline := time.Now().Add(m.wait)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		v, err := m.rdb.Get(ctx, startKey).Int64()
		if err == nil {
			return time.Unix(0, v).Add(offset), nil
		}
		if !errors.Is(err, redis.Nil) {
			return time.Time{}, fmt.Errorf("sim: rendezvous at %s: %w", startKey, err)
		}
		if time.Now().After(deadline) {
			got, _ := m.rdb.Get(ctx, key).Int64()
			return time.Time{}, fmt.Errorf("sim: strategy %q: %w: %d of %d at %s after %v (start the others with the same --member …/%d, --redis and run id)",
				st, errRendezvous, got-round*int64(m.n), m.n, key, m.wait, m.n)
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-tick.C:
		}
	}
}

// redisOffset returns how far this host's clock is ahead of the clock of
// the Redis rdb talks to, measured at the midpoint of a TIME round trip.
func redisOffset(ctx context.Context, rdb *redis.Client) (time.Duration, error) {
	before := time.Now()
	t, err := rdb.Time(ctx).Result()
	if err != nil {
		return 0, fmt.Errorf("sim: Redis TIME: %w", err)
	}
	mid := before.Add(time.Since(before) / 2)
	return mid.Sub(t), nil
}
