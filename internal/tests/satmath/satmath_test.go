package satmath_test

import (
	"math"
	"math/big"
	"testing"

	"github.com/simbench/simbench/sched/satmath"
	"pgregory.net/rapid"
)

// TestAgainstBig checks Add, Sub and Mul against exact arithmetic clamped to
// the int64 range, for random operands biased toward the bounds.
func TestAgainstBig(t *testing.T) {
	clamp := func(z *big.Int) int64 {
		switch {
		case z.Cmp(big.NewInt(math.MaxInt64)) > 0:
			return math.MaxInt64
		case z.Cmp(big.NewInt(math.MinInt64)) < 0:
			return math.MinInt64
		}
		return z.Int64()
	}
	operand := rapid.OneOf(
		rapid.Int64(),
		rapid.SampledFrom([]int64{math.MaxInt64, math.MinInt64, math.MaxInt64 - 1, math.MinInt64 + 1, 0, 1, -1, 3037000499, -3037000500}),
	)
	rapid.Check(t, func(t *rapid.T) {
		a, b := operand.Draw(t, "a"), operand.Draw(t, "b")
		x, y := big.NewInt(a), big.NewInt(b)
		if got, want := satmath.Add(a, b), clamp(new(big.Int).Add(x, y)); got != want {
			t.Fatalf("Add(%d, %d) = %d, want %d", a, b, got, want)
		}
		if got, want := satmath.Sub(a, b), clamp(new(big.Int).Sub(x, y)); got != want {
			t.Fatalf("Sub(%d, %d) = %d, want %d", a, b, got, want)
		}
		if got, want := satmath.Mul(a, b), clamp(new(big.Int).Mul(x, y)); got != want {
			t.Fatalf("Mul(%d, %d) = %d, want %d", a, b, got, want)
		}
	})
}
