// Package bytesize reads sizes in bytes as people write them: 512MiB,
// 4GiB, 2GB.
package bytesize

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Parse reads a size above zero: a number of bytes with an optional unit,
// KiB, MiB, GiB, TiB (powers of 1,024) or KB, MB, GB, TB (of 1,000), or B;
// "512MiB", "4GiB", "2GB", "1000". The error says how to write one.
func Parse(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1}}
	num, mult := strings.TrimSpace(s), int64(1)
	for _, u := range units {
		if strings.HasSuffix(num, u.suffix) {
			num, mult = strings.TrimSpace(strings.TrimSuffix(num, u.suffix)), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v <= 0 || v*float64(mult) > math.MaxInt64 {
		return 0, fmt.Errorf("%q is not a size above 0: write it as 512MiB, 4GiB or a number of bytes", s)
	}
	return int64(v * float64(mult)), nil
}
