// Package sweepwork holds a sweep's work in Redis, so that any number of
// workers on any hosts simulate it together in one launch: the finished
// runs by name, a lease on each run being simulated, and the version of
// simbench the sweep belongs to. A Worker plans from the runs stored, claims
// a missing one under a lease (SET NX PX) that it renews while it works,
// stores the run and plans again, until the plan is empty. A worker that
// dies leaves its lease to expire, and another takes the run.
//
// The package knows runs only as names and bytes; what a sweep needs next
// and how a run is simulated are the caller's (Worker.Plan).
package sweepwork

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/simbench/simbench/internal/atomicfile"
	"github.com/simbench/simbench/internal/redisproc"
)

// KeyPrefix begins every key a sweep keeps in Redis:
// KeyPrefix + ID + ":version" (the simbench version the sweep belongs to),
// ":runs" (a hash of the finished runs, file name to file) and
// ":lease:" + name (the worker simulating that run).
const KeyPrefix = "simbench:sweep:"

// Expiry is how long a sweep's keys are kept after its last run was stored
// (24 hours): a sweep run again within it reads its runs back; past it,
// the store forgets the sweep and a build of another version may run it.
const Expiry = 24 * time.Hour

// DefaultLease is how long a claimed run stays claimed without its worker
// renewing it (renewed every third of it): a dead worker's run is taken by
// another this long after its last renewal at most.
const DefaultLease = 30 * time.Second

// MinLease is the shortest lease a worker can renew in time: a third of it
// must cover a round trip to Redis.
const MinLease = 30 * time.Millisecond

// dialTimeout bounds connecting to Redis and each round trip.
const dialTimeout = 5 * time.Second

// Store is one sweep's work in Redis. It is safe for concurrent use.
type Store struct {
	c       *redis.Client
	url     string
	id      string
	version string
}

// VersionError is Open's answer when the sweep in Redis belongs to
// another version of simbench: runs of two builds never mix in one sweep.
type VersionError struct {
	// URL is the store's address, ID the sweep's.
	URL, ID string
	// Stored is the version the sweep belongs to, Mine the caller's.
	Stored, Mine string
}

// Error says which versions met and what to do.
func (e *VersionError) Error() string {
	return fmt.Sprintf("the sweep %s at %s belongs to simbench %s and this build is %s: run every worker from the same build, "+
		"or remove the sweep's keys (%s%s:*) to start it again with this one; they expire %v after its last run was stored",
		e.ID, e.URL, e.Stored, e.Mine, KeyPrefix, e.ID, Expiry)
}

// ParseURL reads a redis:// (or rediss://, unix://) URL into client
// options; any other form is an error saying what to write.
func ParseURL(url string) (*redis.Options, error) {
	if !strings.HasPrefix(url, "redis://") && !strings.HasPrefix(url, "rediss://") && !strings.HasPrefix(url, "unix://") {
		return nil, fmt.Errorf("the Redis URL %q: want redis://HOST:PORT[/DB] (or rediss:// for TLS, unix:///PATH)", url)
	}
	o, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("the Redis URL %q: %w", url, err)
	}
	return o, nil
}

// Open connects to the Redis at url and returns the store of sweep id for
// simbench version version, the sweep taken for that version if no
// version holds it yet. A sweep of another version is a *VersionError; a
// Redis that does not answer is an error naming url.
func Open(ctx context.Context, url, id, version string) (*Store, error) {
	o, err := ParseURL(url)
	if err != nil {
		return nil, err
	}
	if id == "" || version == "" {
		return nil, errors.New("sweepwork: a sweep needs an ID and a version")
	}
	o.DialTimeout, o.ReadTimeout, o.WriteTimeout = dialTimeout, dialTimeout, dialTimeout
	redisproc.Quiet()
	s := &Store{c: redis.NewClient(o), url: url, id: id, version: version}
	for range 3 { // the key can expire between SET NX and GET
		ok, err := s.c.SetNX(ctx, s.key("version"), version, Expiry).Result()
		if err != nil {
			s.c.Close()
			return nil, fmt.Errorf("the Redis at %s: %w", url, err)
		}
		if ok {
			return s, nil
		}
		stored, err := s.c.Get(ctx, s.key("version")).Result()
		switch {
		case errors.Is(err, redis.Nil):
			continue
		case err != nil:
			s.c.Close()
			return nil, fmt.Errorf("the Redis at %s: %w", url, err)
		case stored != version:
			s.c.Close()
			return nil, &VersionError{URL: url, ID: id, Stored: stored, Mine: version}
		}
		return s, nil
	}
	s.c.Close()
	return nil, fmt.Errorf("the Redis at %s: the sweep's version key keeps vanishing", url)
}

// Close closes the connection to Redis.
func (s *Store) Close() error { return s.c.Close() }

// ID is the sweep's ID.
func (s *Store) ID() string { return s.id }

// URL is the store's address, as given to Open.
func (s *Store) URL() string { return s.url }

func (s *Store) key(suffix string) string { return KeyPrefix + s.id + ":" + suffix }

// Names returns the names of the runs stored.
func (s *Store) Names(ctx context.Context) ([]string, error) {
	return s.c.HKeys(ctx, s.key("runs")).Result()
}

// Has says whether run name is stored.
func (s *Store) Has(ctx context.Context, name string) (bool, error) {
	return s.c.HExists(ctx, s.key("runs"), name).Result()
}

// Put stores run name's file data, unless a run of that name is stored
// already (a run is known by its name: the same name holds the same
// bytes), and keeps the sweep's keys for Expiry from now.
func (s *Store) Put(ctx context.Context, name string, data []byte) error {
	_, err := s.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSetNX(ctx, s.key("runs"), name, data)
		p.Expire(ctx, s.key("runs"), Expiry)
		p.Expire(ctx, s.key("version"), Expiry)
		return nil
	})
	return err
}

// Mirror copies into dir, one file per run under its name, the runs
// stored that dir does not hold yet, and returns how many it copied and
// how many runs are stored.
func (s *Store) Mirror(ctx context.Context, dir string) (copied, stored int, err error) {
	names, err := s.Names(ctx)
	if err != nil {
		return 0, 0, err
	}
	var want []string
	for _, n := range names {
		if n != filepath.Base(n) || n == "." || n == ".." {
			return 0, 0, fmt.Errorf("the sweep %s at %s holds a run named %q, which is no file name", s.id, s.url, n)
		}
		if _, err := os.Stat(filepath.Join(dir, n)); errors.Is(err, os.ErrNotExist) {
			want = append(want, n)
		}
	}
	for len(want) > 0 {
		batch := want[:min(len(want), 64)]
		want = want[len(batch):]
		vals, err := s.c.HMGet(ctx, s.key("runs"), batch...).Result()
		if err != nil {
			return copied, len(names), err
		}
		for i, v := range vals {
			data, ok := v.(string)
			if !ok {
				return copied, len(names), fmt.Errorf("the run %s vanished from the sweep %s at %s while it was read", batch[i], s.id, s.url)
			}
			if err := atomicfile.WriteFile(filepath.Join(dir, batch[i]), []byte(data), 0o644); err != nil {
				return copied, len(names), err
			}
			copied++
		}
	}
	return copied, len(names), nil
}

// Claim takes the lease on run name for owner, for lease, and says
// whether it got it (false: another worker holds it).
func (s *Store) Claim(ctx context.Context, name, owner string, lease time.Duration) (bool, error) {
	return s.c.SetNX(ctx, s.key("lease:"+name), owner, lease).Result()
}

// renew extends the lease if owner holds it; release deletes it if owner
// holds it. Both answer 1 when owner held it, 0 when not.
var (
	renew   = redis.NewScript(`if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end return 0`)
	release = redis.NewScript(`if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0`)
)

// Renew extends owner's lease on run name to lease from now, and says
// whether owner still held it (false: it expired, and another worker may
// hold it now).
func (s *Store) Renew(ctx context.Context, name, owner string, lease time.Duration) (bool, error) {
	n, err := renew.Run(ctx, s.c, []string{s.key("lease:" + name)}, owner, lease.Milliseconds()).Int()
	return n == 1, err
}

// Release gives up owner's lease on run name (nothing when owner no
// longer holds it).
func (s *Store) Release(ctx context.Context, name, owner string) error {
	return release.Run(ctx, s.c, []string{s.key("lease:" + name)}, owner).Err()
}

// Holder returns the owner of the lease on run name ("" when none).
func (s *Store) Holder(ctx context.Context, name string) (string, error) {
	v, err := s.c.Get(ctx, s.key("lease:"+name)).Result()
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	return v, err
}
