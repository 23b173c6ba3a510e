package live

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/redis/go-redis/v9"

	"github.com/simbench/simbench/internal/setup"
	"github.com/simbench/simbench/results"
	"github.com/simbench/simbench/scenarios"
	"github.com/simbench/simbench/sched/quota"
	"github.com/simbench/simbench/sim"
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
	// Checkpoint, when set, is given what the member has measured after
	// each strategy (the strategies still to run listed in
	// Results.Fleet.Missing), for the caller to write (WriteMember): a
	// member killed later leaves those figures behind. An error ends the
	// run.
	Checkpoint func(*Member) error
}

// Member is what one fleet member measured: its results (each strategy's
// figures for its own process, Results.Fleet naming it) and each
// strategy's latency histograms, which report --merge pools.
type Member struct {
	// Results are this member's own figures, in the results.json layout;
	// Results.Fleet says which member of how many it is and which
	// strategies it did not get to.
	Results *results.Results
	// Hists holds one entry per strategy measured, in run order.
	Hists []MemberHists
}

// MemberHists are one strategy's latency histograms from one member:
// every finished turn's latency (Turn), the turns answered in full
// (OKTurn) and every tool call's (Call), as HdrHistograms of nanoseconds
// at HDRSignificantDigits, the layout the run recorded them in, so
// members merge bucket for bucket.
type MemberHists struct {
	// Strategy is the scenario strategy's name the histograms belong to.
	Strategy string
	// Turn, OKTurn and Call are the latencies, in nanoseconds, of every
	// finished turn, of the turns answered in full, and of every tool call.
	Turn, OKTurn, Call *hdrhistogram.Histogram
}

// RunMember runs member opts.Member of opts.Of of a live fleet: the
// sessions (or the open-model turns) of its process only, with the
// production Runner, against the provider at opts.BaseURL. Each strategy's
// run starts when every member has arrived at its rendezvous on Redis (no
// coordinator: each member holds its index's place there, the last to see
// every place held by a live member writes a start time on Redis's clock,
// rendezvousLead ahead, and every member sleeps until it; see
// memberSetup.meet). The results hold this member's figures only;
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
	rdb, err := memberRedis(&opts, fo.anyShared)
	if err != nil {
		return nil, err
	}
	defer rdb.Close()
	f := lo.TimeScale
	if f <= 0 {
		f = 1
	}
	ms := newMemberSetup(&opts, sc, rdb)
	ls := &liveSetup{orig: sc, sc: setup.Scale(sc, f), f: f, progress: lo.Progress, trace: lo.Trace, maxTurnCalls: sim.MaxTurnCalls(lo.Budget()), inFlight: LiveInFlight(lo.Budget()), member: ms}
	res := newLiveResults(sc, &lo, f)
	res.Fleet = &results.FleetMember{Member: opts.Member, Of: opts.Of, RunID: ms.runID}
	mr := &memberRun{sc: sc, f: f, ls: ls, res: res, m: &Member{Results: res}}
	stopAlive := ms.keepAlive()
	defer stopAlive()
	for i := range ls.sc.Strategies {
		st := &ls.sc.Strategies[i]
		if lo.Trace != nil {
			if err := lo.Trace.Header(sim.TraceHeader(sc, st.Name, "live")); err != nil {
				return nil, err
			}
		}
		lr, err := runLiveStrategy(ctx, ls, st, fo.forStrategy(st))
		if lr != nil {
			res.Strategies = append(res.Strategies, lr.result)
			res.Events = append(res.Events, lr.fallbacks...)
			mr.m.Hists = append(mr.m.Hists, MemberHists{Strategy: st.Name, Turn: lr.m.TurnLat.Full(), OKTurn: lr.m.OkTurnLat.Full(), Call: lr.m.CallLat.Full()})
			mr.own = append(mr.own, strategyReasons(lr.invalid, lr.fallbacks, lo.AllowRedisFallback))
		}
		if err != nil {
			if ctx.Err() != nil {
				res.Partial = true
				return mr.done(i + 1), ctx.Err()
			}
			if len(res.Strategies) == 0 {
				return nil, err
			}
			// What was measured before the failure (a rendezvous the
			// others did not reach) is the member's to keep.
			return mr.done(i + 1), err
		}
		if opts.Checkpoint != nil && i+1 < len(ls.sc.Strategies) {
			if err := opts.Checkpoint(mr.done(i + 1)); err != nil {
				return nil, err
			}
		}
	}
	return mr.done(len(ls.sc.Strategies)), nil
}

// memberRedis checks that the Redis the members meet at answers, and the
// shared quota's when the fleet shares one (anyShared) and it is another
// (unless the options allow a fallback), and returns a client of the
// first. The caller closes it.
func memberRedis(opts *MemberOptions, anyShared bool) (*redis.Client, error) {
	meet := cmp.Or(opts.Rendezvous, opts.Redis)
	if err := pingRedis(meet); err != nil {
		return nil, fmt.Errorf("live: the rendezvous's Redis does not answer: %w; start it, or give its URL (--redis, --rendezvous)", err)
	}
	if anyShared && meet != opts.Redis {
		if err := pingRedis(opts.Redis); err != nil && !opts.AllowRedisFallback {
			return nil, fmt.Errorf("live: the shared quota's Redis does not answer: %w; start it, or allow the member to run on its local share (--redis-fallback)", err)
		}
	}
	ro, err := quota.ParseURL(meet)
	if err != nil {
		return nil, err
	}
	return quota.NewClient(ro), nil
}

// newMemberSetup returns this member's side of the rendezvous on rdb: its
// run's id (the options', or one made of the scenario's name, digest and
// seed and the fleet's size) and how long it waits for the others.
func newMemberSetup(opts *MemberOptions, sc *scenarios.Scenario, rdb *redis.Client) *memberSetup {
	runID := opts.RunID
	if runID == "" {
		runID = fmt.Sprintf("%s-%.12s-%d-of-%d", sc.Name, sim.ScenarioDigest(sc), sc.Seed, opts.Of)
	}
	ms := &memberSetup{index: opts.Member, n: opts.Of, baseURL: strings.TrimSuffix(opts.BaseURL, "/"), runID: runID, rdb: rdb, wait: opts.Wait}
	if ms.wait <= 0 {
		ms.wait = DefaultRendezvousWait
	}
	return ms
}

// memberRun is one member's run under way: its scenario (options applied)
// at time scale f, the results and histograms measured so far, and each
// strategy's own reasons to be invalid.
type memberRun struct {
	sc  *scenarios.Scenario
	f   float64
	ls  *liveSetup
	res *results.Results
	m   *Member
	own [][]string
}

// done returns what was measured up to strategy next (the strategies from
// next on missing), marked as the end of a run marks it.
func (mr *memberRun) done(next int) *Member {
	r := *mr.res
	r.Strategies = slices.Clone(mr.res.Strategies)
	fl := *mr.res.Fleet
	fl.Missing = nil
	for _, st := range mr.ls.sc.Strategies[next:] {
		if r.Strategy(st.Name) == nil {
			fl.Missing = append(fl.Missing, st.Name)
		}
	}
	r.Fleet = &fl
	markInvalid(&r, commonReasons(mr.sc, mr.f), mr.own)
	if r.Partial {
		for i := range r.Strategies {
			r.Strategies[i].Partial = true
		}
	}
	return &Member{Results: &r, Hists: slices.Clone(mr.m.Hists)}
}

// check refuses member settings no run can take.
func (o *MemberOptions) check() error {
	bad := func(format string, a ...any) error {
		return badOption{fmt.Errorf("live: "+format, a...)}
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
	// launch tells this process's arrivals from those of an earlier (or a
	// duplicate) member with the same index ("": drawn at the first
	// meeting); ttl is how long an arrival it stops refreshing holds its
	// place (0: arrivalTTL).
	launch string
	ttl    time.Duration
}

// arrivalTTL is how long a member's arrival at a rendezvous outlives its
// last refresh (a waiting member refreshes it every poll): a member that
// died waiting holds its place no longer, and one that still holds its
// place after this long is alive.
const arrivalTTL = 10 * time.Second

// meetPoll is how often a member waiting at a rendezvous asks Redis
// whether the others have come.
const meetPoll = 5 * time.Millisecond

// key is the Redis key of the rendezvous (and prefix of the shared quota)
// of strategy st's run.
func (m *memberSetup) key(st string) string {
	return "simbench/fleet/" + m.runID + "/" + st
}

// startKey is the Redis key of the start of the last meeting at strategy
// st's rendezvous (what a launcher that gave its fleet a run id of its
// own waits for).
func (m *memberSetup) startKey(st string) string {
	return m.key(st) + "/start"
}

// meetKeys are the Redis keys of strategy st's rendezvous, as meetScript
// takes them: the starts by launch, the last start, the members' acks,
// each member's place, each member's liveness (aliveKey), then the
// members that have met at an earlier rendezvous of the run (joinedKey).
func (m *memberSetup) meetKeys(st string) []string {
	k := m.key(st)
	keys := []string{k + "/met", m.startKey(st), k + "/ack"}
	for i := range m.n {
		keys = append(keys, k+"/member/"+strconv.Itoa(i))
	}
	for i := range m.n {
		keys = append(keys, m.aliveKey(i))
	}
	return append(keys, m.joinedKey())
}

// aliveKey is the Redis key member i keeps while its process runs
// (keepAlive): gone, the member has died.
func (m *memberSetup) aliveKey(i int) string {
	return "simbench/fleet/" + m.runID + "/alive/" + strconv.Itoa(i)
}

// joinedKey is the Redis hash of the members (by index) that have met at
// a rendezvous of the run: one of them whose aliveKey is gone has died,
// and the later rendezvous start without it.
func (m *memberSetup) joinedKey() string {
	return "simbench/fleet/" + m.runID + "/joined"
}

// keepAlive holds this member's aliveKey, refreshing it every quarter of
// the arrival TTL, until the returned func is called, which deletes it (a
// member that ends is not waited for).
func (m *memberSetup) keepAlive() (stop func()) {
	if m.launch == "" {
		m.launch = rand.Text()
	}
	key, ttl := m.aliveKey(m.index), m.arrivalTTL()
	ctx, cancel := context.WithCancel(context.Background())
	set := func() {
		c, done := context.WithTimeout(ctx, ttl/4)
		defer done()
		_ = m.rdb.Set(c, key, m.launch, ttl).Err()
	}
	set()
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(ttl / 4)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				set()
			}
		}
	}()
	return func() {
		cancel()
		<-finished
		c, done := context.WithTimeout(context.Background(), 2*time.Second)
		defer done()
		_ = m.rdb.Del(c, key).Err()
	}
}

// arrivalTTL returns how long an arrival outlives its last refresh.
func (m *memberSetup) arrivalTTL() time.Duration {
	if m.ttl > 0 {
		return m.ttl
	}
	return arrivalTTL
}

// errRendezvous is wrapped by a rendezvous that the other members did not
// all reach in time.
var errRendezvous = errors.New("the fleet's members did not all arrive")

// errDuplicateMember is wrapped by a rendezvous where another live member
// holds this member's index.
var errDuplicateMember = errors.New("another member has this member's index")

// meetScript is one poll of a member at a rendezvous. KEYS: the starts by
// launch (hash), the last start, the acks by launch (hash), then each
// member's place (member i at KEYS[4+i], holding its launch, expiring
// unless refreshed), each member's liveness (at KEYS[4+n+i]), and the
// members that met before (hash by index). A member that met before and
// whose liveness is gone has died: the meeting does not wait for it. ARGV: index, launch, TTL of a place (ms), and the
// start (ns since the epoch, a string) if this poll completes the meeting.
// A member takes its place (or refreshes it); with every place taken it
// acks the launches it sees, and once every one of them has acked the same
// list, the meeting is complete: each launch gets the start and the places
// are freed for the next launch. A place held by a member that died never
// acks, so it keeps the others waiting until it expires, never starts
// them. Returns {"start", ns}, {"held", launch} (another launch holds this
// index), or {"wait", index…} (the indexes present).
var meetScript = redis.NewScript(`
local launch, ttl = ARGV[2], tonumber(ARGV[3])
local s = redis.call('HGET', KEYS[1], launch)
if s then return {'start', s} end
local me = KEYS[4 + tonumber(ARGV[1])]
local holder = redis.call('GET', me)
if holder == launch then
  redis.call('PEXPIRE', me, ttl)
elseif not holder then
  redis.call('SET', me, launch, 'PX', ttl)
else
  return {'held', holder}
end
local n = (#KEYS - 4) / 2
local joined = KEYS[#KEYS]
local ids, at, present, dead = {}, {}, {'wait'}, 0
for i = 1, n do
  local v = redis.call('GET', KEYS[3 + i])
  if v then
    table.insert(ids, v)
    table.insert(at, i)
    table.insert(present, tostring(i - 1))
  elseif redis.call('HEXISTS', joined, tostring(i - 1)) == 1 and redis.call('EXISTS', KEYS[3 + n + i]) == 0 then
    dead = dead + 1
  end
end
if #ids < n - dead then return present end
local seen = table.concat(ids, ',')
redis.call('HSET', KEYS[3], launch, seen)
redis.call('PEXPIRE', KEYS[3], 3600000)
for j = 1, #ids do
  if redis.call('HGET', KEYS[3], ids[j]) ~= seen then return present end
end
for j = 1, #ids do
  redis.call('HSET', KEYS[1], ids[j], ARGV[4])
  redis.call('HDEL', KEYS[3], ids[j])
  redis.call('DEL', KEYS[3 + at[j]])
  redis.call('HSET', joined, tostring(at[j] - 1), ids[j])
end
redis.call('PEXPIRE', joined, 3600000)
redis.call('PEXPIRE', KEYS[1], 3600000)
redis.call('SET', KEYS[2], ARGV[4], 'PX', 3600000)
return {'start', ARGV[4]}
`)

// leaveScript frees a member's place at a rendezvous if it still holds it.
// KEYS: its place, the acks. ARGV: its launch.
var leaveScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
redis.call('HDEL', KEYS[2], ARGV[1])
return 0
`)

// meet arrives at strategy st's rendezvous as member m.index and returns
// the start every member of the meeting agreed on, on this host's clock.
// Each member holds its index's place for its launch and refreshes it
// while it waits; the meeting starts once the n places are held by
// members that all see the same n launches (an arrival left behind by a
// member that died is never counted: it only keeps its place until it
// expires). The poll that completes the meeting writes its start on
// Redis's clock, rendezvousLead ahead, and each member maps it to its own
// by the offset it measures to Redis. A member that gives up (m.wait
// passed, ctx ended) frees its place; one whose index another live
// member holds is refused.
func (m *memberSetup) meet(ctx context.Context, st string) (time.Time, error) {
	if m.launch == "" {
		m.launch = rand.Text()
	}
	offset, err := redisOffset(ctx, m.rdb)
	if err != nil {
		return time.Time{}, err
	}
	keys, ttl := m.meetKeys(st), m.arrivalTTL()
	place := keys[3+m.index]
	deadline := time.Now().Add(m.wait)
	var holder string
	var heldSince time.Time
	present := []string{}
	tick := time.NewTicker(meetPoll)
	defer tick.Stop()
	for {
		start := time.Now().Add(-offset).Add(rendezvousLead) // on Redis's clock
		res, err := meetScript.Run(ctx, m.rdb, keys, m.index, m.launch, ttl.Milliseconds(), strconv.FormatInt(start.UnixNano(), 10)).StringSlice()
		switch {
		case err != nil && ctx.Err() != nil:
			m.leave(ctx, keys)
			return time.Time{}, ctx.Err()
		case err != nil:
			m.leave(ctx, keys)
			return time.Time{}, fmt.Errorf("live: rendezvous at %s: %w", place, err)
		case len(res) == 2 && res[0] == "start":
			v, err := strconv.ParseInt(res[1], 10, 64)
			if err != nil {
				return time.Time{}, fmt.Errorf("live: rendezvous at %s: a start of %q", m.key(st), res[1])
			}
			return time.Unix(0, v).Add(offset), nil
		case len(res) == 2 && res[0] == "held":
			if res[1] != holder {
				holder, heldSince = res[1], time.Now()
			} else if time.Since(heldSince) > ttl+ttl/10 {
				// An arrival nobody refreshes expires within ttl: its holder is alive.
				return time.Time{}, fmt.Errorf("live: strategy %q: %w: member %d of %d is already waiting at %s (launch %s, still there after %v): two members were given --member %d/%d, or another fleet uses the run id %q (give each fleet its own --run-id)",
					st, errDuplicateMember, m.index, m.n, place, holder, ttl, m.index, m.n, m.runID)
			}
		case len(res) >= 1 && res[0] == "wait":
			holder, present = "", res[1:]
		default:
			m.leave(ctx, keys)
			return time.Time{}, fmt.Errorf("live: rendezvous at %s: an answer of %q", m.key(st), res)
		}
		if time.Now().After(deadline) {
			m.leave(ctx, keys)
			if holder != "" {
				return time.Time{}, fmt.Errorf("live: strategy %q: %w: member %d's place at %s is held by launch %s, which did not let it go in %v (a member that died frees it within %v; two members given --member %d/%d never do)",
					st, errRendezvous, m.index, place, holder, m.wait, ttl, m.index, m.n)
			}
			return time.Time{}, fmt.Errorf("live: strategy %q: %w: members %s of %d at %s after %v, missing %s (start the others with the same --member …/%d, --redis and run id)",
				st, errRendezvous, listOr(present, "none"), m.n, m.key(st), m.wait, listOr(missing(present, m.n), fmt.Sprintf("none, but a holder has not seen them all: one that died holds its place for up to %v", ttl)), m.n)
		}
		select {
		case <-ctx.Done():
			m.leave(ctx, keys)
			return time.Time{}, ctx.Err()
		case <-tick.C:
		}
	}
}

// leave frees this member's place at the rendezvous of keys (meetKeys),
// even when ctx has ended, so that a later launch does not count it.
func (m *memberSetup) leave(ctx context.Context, keys []string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	_ = leaveScript.Run(ctx, m.rdb, []string{keys[3+m.index], keys[2]}, m.launch).Err()
}

// missing returns the indexes from 0 to n-1 not in present.
func missing(present []string, n int) []string {
	var out []string
	for i := range n {
		if !slices.Contains(present, strconv.Itoa(i)) {
			out = append(out, strconv.Itoa(i))
		}
	}
	return out
}

// listOr joins s with commas, or returns none when s is empty.
func listOr(s []string, none string) string {
	if len(s) == 0 {
		return none
	}
	return strings.Join(s, ", ")
}

// awaitStart waits, at most m.wait, for the start of the last meeting at
// strategy st's rendezvous to be written and returns it on this host's
// clock (offset: this host's clock ahead of Redis's). It is for a launcher
// that gave its fleet a run id of its own, whose rendezvous meets once.
func (m *memberSetup) awaitStart(ctx context.Context, st string, offset time.Duration) (time.Time, error) {
	startKey := m.startKey(st)
	deadline := time.Now().Add(m.wait)
	tick := time.NewTicker(meetPoll)
	defer tick.Stop()
	for {
		v, err := m.rdb.Get(ctx, startKey).Int64()
		if err == nil {
			return time.Unix(0, v).Add(offset), nil
		}
		if !errors.Is(err, redis.Nil) {
			return time.Time{}, fmt.Errorf("live: rendezvous at %s: %w", startKey, err)
		}
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("live: strategy %q: %w at %s after %v", st, errRendezvous, m.key(st), m.wait)
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
		return 0, fmt.Errorf("live: Redis TIME: %w", err)
	}
	mid := before.Add(time.Since(before) / 2)
	return mid.Sub(t), nil
}
