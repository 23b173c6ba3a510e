package quota

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis is a Backend that keeps each bucket in a redis-server hash, updated
// by one atomic Lua script per operation (one round trip).
//
// Why a script rather than github.com/go-redis/redis_rate/v10: redis_rate's
// GCRA answers AllowN/AllowAtMost — it grants n units now or denies them, and
// offers Reset but no way to reserve into debt for a later time, to settle a
// reservation's actual token usage, or to refund part of one. sched's buckets
// need all three, so the script carries the same state (tat, spent, maxAt) and
// arithmetic as Memory and sched's local bucket. The script reads the
// server's clock (TIME), so processes with skewed clocks agree on the bucket.
//
// Holder, when set, registers this process on each bucket it touches for
// HolderTTL; Reservation.Holders then counts the processes seen, which
// Failover uses to split the limit when Redis is gone.
//
// Each method makes at most one script call; RoundTrips counts them (after a
// server restart, go-redis reloads the script once: one more round trip). Errors
// are those of go-redis: a context deadline bounds a slow or hung server,
// which needs a client built to honour deadlines (NewClient, or
// ContextTimeoutEnabled in the client's options); a method panics on a
// *redis.Client, *redis.ClusterClient or *redis.Ring that would ignore
// them, since its round trips would then last go-redis's own timeouts
// (seconds) whatever Failover's Timeout says. Safe for concurrent use.
type Redis struct {
	Client    redis.Scripter // a *redis.Client (NewClient), *redis.ClusterClient or similar, honouring context deadlines
	Holder    string         // this process's id among the bucket's holders; "" registers nothing
	HolderTTL time.Duration  // how long a registration lasts; DefaultHolderTTL if 0
	// Now, when set, is the clock buckets are computed at, instead of the
	// Redis server's TIME: for tests that pin time. Every process sharing a
	// bucket must then agree on it.
	Now func() time.Time
	// Conns is how many connections Connect opens at once (DefaultConns
	// if 0): the pool a Failover keeps warm for the quota path.
	Conns int

	roundTrips atomic.Int64
}

// DefaultConns is how many connections Redis.Connect opens: a Shared
// quota's operations on one key rarely overlap more than twice.
const DefaultConns = 2

// Connect implements Connector: it loads the script on Conns connections
// at once (SCRIPT LOAD, which is no script call: RoundTrips does not count
// it), dialling and handshaking those the client's pool lacks, within
// ctx's deadline. A successful Connect leaves them idle in the pool, the
// script known to the server, so that a reservation's round trip is one
// EVALSHA on an open connection.
func (r *Redis) Connect(ctx context.Context) error {
	if !honoursDeadlines(r.Client) {
		panic(errIgnoresDeadlines)
	}
	n := cmp.Or(max(r.Conns, 0), DefaultConns)
	errs := make(chan error, n)
	for range n {
		go func() { errs <- script.Load(ctx, r.Client).Err() }()
	}
	var err error
	for range n {
		if e := <-errs; e != nil && err == nil {
			err = fmt.Errorf("quota: connect: %w", e)
		}
	}
	return err
}

// DefaultHolderTTL is how long a process stays counted among a bucket's
// holders after its last operation.
const DefaultHolderTTL = 10 * time.Second

// NewRedis returns a Redis backend on c with no holder registration.
func NewRedis(c redis.Scripter) *Redis { return &Redis{Client: c} }

// RoundTrips returns the number of round trips (script calls) made so far.
func (r *Redis) RoundTrips() int64 { return r.roundTrips.Load() }

// script: KEYS[1] the bucket hash, KEYS[2] the holders sorted set.
// ARGV: op, perMinute, burst, n, a, b, now (µs or ""), holder, holderTTL (µs).
// op reserve: a = maxWait (µs, negative for none). op settle: a = actual,
// b = mark (n is reserved). op refund: b = mark. op peek: none.
// Returns {ok, wait µs, mark, now µs, holders, available} with numbers as
// strings: Lua's default number formatting drops digits of µs timestamps.
var script = redis.NewScript(`
local op, pm, burst, n = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local rate = pm / 60
local now
if ARGV[7] ~= '' then
  now = tonumber(ARGV[7])
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local f = function(x) return string.format('%.17g', x) end
local h = redis.call('HMGET', KEYS[1], 'tat', 'spent', 'maxAt')
local tat, spent, maxAt = tonumber(h[1]) or 0, tonumber(h[2]) or 0, tonumber(h[3]) or 0
local function span(u) return math.ceil(u * 1e6 / rate) end
local function take(at, u)
  local sp = span(u)
  tat = math.max(tat, at) + sp
  spent = spent + sp
  maxAt = math.max(maxAt, at)
  return spent
end
local function refund(u, mark)
  tat = math.max(tat - span(u), maxAt + (spent - mark))
end
local ok, wait, mark = 0, 0, 0
if op == 'reserve' then
  local at = math.max(now, tat - math.floor((burst - n) * 1e6 / rate))
  wait = at - now
  local maxWait = tonumber(ARGV[5])
  if maxWait < 0 or wait <= maxWait then
    ok = 1
    mark = take(at, n)
  end
elseif op == 'settle' then
  local d = tonumber(ARGV[5]) - n
  if d > 0 then take(now, d) elseif d < 0 then refund(-d, tonumber(ARGV[6])) end
elseif op == 'refund' then
  refund(n, tonumber(ARGV[6]))
end
if op ~= 'peek' then
  redis.call('HSET', KEYS[1], 'tat', f(tat), 'spent', f(spent), 'maxAt', f(maxAt))
  redis.call('PEXPIRE', KEYS[1], math.max(math.ceil((tat - now) / 1000), 0) + 60000)
end
local holders = 0
if ARGV[8] ~= '' then
  local ttl = tonumber(ARGV[9])
  redis.call('ZADD', KEYS[2], f(now + ttl), ARGV[8])
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', f(now))
  redis.call('PEXPIRE', KEYS[2], math.ceil(ttl / 1000) * 2)
  holders = redis.call('ZCARD', KEYS[2])
end
local avail = burst
if tat > now then avail = burst - (tat - now) * rate / 1e6 end
return {ok, f(wait), f(mark), f(now), holders, f(avail)}
`)

type reply struct {
	ok                     bool
	wait, mark, now, avail float64
	holders                int
}

func (r *Redis) run(ctx context.Context, l Limit, op string, n, a, b float64) (reply, error) {
	l.check()
	if !honoursDeadlines(r.Client) {
		panic(errIgnoresDeadlines)
	}
	var now, holder, ttl string
	if r.Now != nil {
		now = strconv.FormatInt(r.Now().UnixMicro(), 10)
	}
	if r.Holder != "" {
		holder = r.Holder
		t := r.HolderTTL
		if t <= 0 {
			t = DefaultHolderTTL
		}
		ttl = strconv.FormatInt(t.Microseconds(), 10)
	}
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	r.roundTrips.Add(1)
	v, err := script.Run(ctx, r.Client, []string{l.Name(), l.Name() + ":holders"},
		op, g(l.PerMinute), g(l.Burst), g(n), g(a), g(b), now, holder, ttl).Slice()
	if err != nil {
		return reply{}, fmt.Errorf("quota: %s %s: %w", op, l.Name(), err)
	}
	if len(v) != 6 {
		return reply{}, fmt.Errorf("quota: %s %s: script returned %d values, want 6", op, l.Name(), len(v))
	}
	num := func(i int) float64 {
		s, _ := v[i].(string)
		x, perr := strconv.ParseFloat(s, 64)
		if perr != nil && err == nil {
			err = fmt.Errorf("quota: %s %s: value %d: %w", op, l.Name(), i, perr)
		}
		return x
	}
	ok, _ := v[0].(int64)
	h, _ := v[4].(int64)
	rep := reply{ok: ok == 1, wait: num(1), mark: num(2), now: num(3), holders: int(h), avail: num(5)}
	return rep, err
}

// Reserve implements Backend.
func (r *Redis) Reserve(ctx context.Context, l Limit, n float64, maxWait time.Duration) (Reservation, error) {
	rep, err := r.run(ctx, l, "reserve", n, waitMicros(maxWait), 0)
	if err != nil {
		return Reservation{}, err
	}
	return Reservation{OK: rep.ok, Wait: time.Duration(rep.wait) * time.Microsecond, Mark: Mark{spent: rep.mark},
		Now: fromMicros(rep.now), Holders: rep.holders}, nil
}

// Settle implements Backend; it makes no round trip when actual equals reserved.
func (r *Redis) Settle(ctx context.Context, l Limit, reserved, actual float64, m Mark) error {
	if actual == reserved {
		return nil
	}
	_, err := r.run(ctx, l, "settle", reserved, actual, m.spent)
	return err
}

// Refund implements Backend.
func (r *Redis) Refund(ctx context.Context, l Limit, n float64, m Mark) error {
	_, err := r.run(ctx, l, "refund", n, 0, m.spent)
	return err
}

// Available implements Backend.
func (r *Redis) Available(ctx context.Context, l Limit) (float64, error) {
	rep, err := r.run(ctx, l, "peek", 0, 0, 0)
	return rep.avail, err
}
