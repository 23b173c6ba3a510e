package fakeapi

import (
	"math"
	"math/big"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/simbench/simbench/spec"
)

// The token bucket's credit is exact at limits past an int64's
// unit-nanoseconds: after every refill, take and give its level, and every
// wait it computes, agree with the same arithmetic done in math/big, from
// the smallest limits to spec.MaxLimit a minute.
func TestCreditMatchesBigArithmetic(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		window := rapid.SampledFrom([]time.Duration{time.Second, time.Minute}).Draw(t, "window")
		limit := rapid.OneOf(rapid.Int64Range(1, 1000), rapid.Int64Range(1, spec.MaxLimit), rapid.Just(int64(spec.MaxLimit))).Draw(t, "limit")
		capacity := rapid.OneOf(rapid.Just(limit), rapid.Int64Range(1, spec.MaxLimit)).Draw(t, "capacity")
		l := newLimiter(spec.TokenBucket, limit, window, capacity)
		w, lim := big.NewInt(int64(window)), big.NewInt(limit)
		full := new(big.Int).Mul(big.NewInt(capacity), w)
		floor := new(big.Int).Neg(full)
		ref := new(big.Int).Set(full) // the level in unit-nanoseconds
		units := func() *big.Int { return new(big.Int).Mul(big.NewInt(rapid.Int64Range(1, capacity).Draw(t, "n")), w) }
		now := time.Duration(0)
		for range rapid.IntRange(1, 40).Draw(t, "steps") {
			switch rapid.IntRange(0, 3).Draw(t, "op") {
			case 0: // refill over dt
				dt := rapid.SampledFrom([]time.Duration{0, 1, time.Microsecond, time.Second, time.Hour, 365 * 24 * time.Hour}).Draw(t, "dt")
				now += dt
				l.advance(now)
				ref.Add(ref, new(big.Int).Mul(big.NewInt(int64(dt)), lim))
				if ref.Cmp(full) > 0 {
					ref.Set(full)
				}
			case 1:
				n := units()
				l.take(now, new(big.Int).Div(n, w).Int64())
				if ref.Sub(ref, n); ref.Cmp(floor) < 0 {
					ref.Set(floor)
				}
			case 2:
				n := units()
				l.give(new(big.Int).Div(n, w).Int64())
				if ref.Add(ref, n); ref.Cmp(full) > 0 {
					ref.Set(full)
				}
			case 3:
				n := units()
				want := int64(0)
				if gap := new(big.Int).Sub(n, ref); gap.Sign() > 0 {
					q, r := new(big.Int).QuoRem(gap, lim, new(big.Int))
					if r.Sign() > 0 {
						q.Add(q, big.NewInt(1))
					}
					want = math.MaxInt64
					if q.IsInt64() {
						want = q.Int64()
					}
				}
				if got := l.wait(now, new(big.Int).Div(n, w).Int64()); int64(got) != want {
					t.Fatalf("wait for %v unit-ns at level %v: %d ns, want %d", n, ref, got, want)
				}
			}
			q, m := new(big.Int).DivMod(ref, w, new(big.Int))
			if !q.IsInt64() || q.Int64() != l.credit.units || m.Int64() != l.credit.rem {
				t.Fatalf("credit %+v, want %v unit-ns (%v units and %v)", l.credit, ref, q, m)
			}
		}
	})
}

// A limit of 10^12 tokens a minute, whose full bucket is 6 × 10^22
// unit-nanoseconds, counts every token: the service admits a request of the
// whole limit at once, then refuses 10^9 tokens more for exactly the 60 ms
// the limit takes to refill them (and a single token for 1 ns, 0.06 ns
// rounded up), publishes what is left, and refills at the limit's rate.
func TestTrillionTokensAMinute(t *testing.T) {
	const tpm = 1_000_000_000_000
	m := newTestModel(t, ServiceConfig{Config: spec.Config{Name: "s", TPM: tpm}})
	if d := m.Arrive(0, Request{Tokens: tpm}); !d.Admitted() || d.TokenQuota.Limit != tpm || d.TokenQuota.Remaining != 0 {
		t.Fatalf("a request of the whole limit: %+v", d)
	}
	for _, tt := range []struct {
		tokens int64
		wait   time.Duration
	}{{1_000_000_000, 60 * time.Millisecond}, {1, time.Nanosecond}} {
		if d := m.Arrive(0, Request{Tokens: tt.tokens}); d.Admitted() || d.Wait != tt.wait {
			t.Errorf("%d tokens more: admitted %v, wait %v, want a refusal for %v", tt.tokens, d.Admitted(), d.Wait, tt.wait)
		}
	}
	d := m.Arrive(time.Second, Request{Tokens: tpm / 60})
	if !d.Admitted() || d.TokenQuota.Remaining != 0 {
		t.Fatalf("a second's refill (%d tokens) after a second: %+v", int64(tpm/60), d)
	}
}
