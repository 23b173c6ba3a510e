package scenarios

import (
	"fmt"
	"os"
	"strings"
)

// Suggest adds "did you mean NAME?" to err, the error Open gave for arg,
// when arg is neither a file nor a built-in scenario but is within two
// edits of a built-in name; otherwise it returns err as it is.
func Suggest(arg string, err error) error {
	if _, statErr := os.Stat(arg); statErr == nil || len(arg) > 64 {
		return err
	}
	name := strings.TrimSuffix(arg, ".toml")
	best, bestD := "", 3
	for _, info := range List() {
		if info.Name == name {
			return err // a built-in that did not load: its problems say why
		}
		if d := editDistance(name, info.Name); d < bestD {
			best, bestD = info.Name, d
		}
	}
	if best == "" {
		return err
	}
	return fmt.Errorf("%w; did you mean %s?", err, best)
}

// editDistance is the Levenshtein distance between a and b, in runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			sub := prev[j-1]
			if ra[i-1] != rb[j-1] {
				sub++
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, sub)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
