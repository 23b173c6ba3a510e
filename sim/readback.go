package sim

import (
	"errors"
	"fmt"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/simbench/simbench/internal/collect"
	"github.com/simbench/simbench/internal/regfile"
	"github.com/simbench/simbench/results"
)

// MaxReadBackBytes is the largest file simbench reads back from what it
// wrote itself (a cached run, a shard's run, a fleet member's histogram
// log), in bytes: results.MaxFileBytes, the cap of the results file such
// files stand beside. A larger file is refused before it is read.
const MaxReadBackBytes = results.MaxFileBytes

// ReadBack reads a file simbench wrote and reads back: a regular file
// (regfile: a FIFO, a device or a directory is refused before it is
// opened) of at most MaxReadBackBytes. The error names the file.
func ReadBack(path string) ([]byte, error) {
	data, err := regfile.ReadFile(path, MaxReadBackBytes)
	var notRegular regfile.NotRegularError
	switch {
	case errors.Is(err, regfile.ErrTooLarge):
		return nil, fmt.Errorf("%s: larger than %d MiB, the most a file simbench reads back may hold (%w); simbench writes far less, so this is not one of its files",
			path, MaxReadBackBytes>>20, err)
	case errors.As(err, &notRegular):
		return nil, fmt.Errorf("%s: it is %w", path, err)
	case err != nil:
		return nil, err // an *fs.PathError names the file
	}
	return data, nil
}

// CheckCounts checks a strategy's counts, read from the file path,
// against its latency histograms, read from histPath (the same file or
// another), where both are held: the turn histogram holds one value per
// turn, the answered-turn one (okTurn, when not nil) one per turn that
// did not fail, the call histogram one per call. The error names the
// files.
func CheckCounts(path, histPath string, s *results.StrategyResult, turn, okTurn, call *hdrhistogram.Histogram) error {
	in := ""
	if histPath != path {
		in = " in " + histPath
	}
	for _, c := range []struct {
		what string
		h    *hdrhistogram.Histogram
		n    int64
	}{{"turn", turn, s.Turns}, {"answered-turn", okTurn, s.Turns - s.FailedTurns}, {"call", call, s.Calls}} {
		if c.h != nil && c.h.TotalCount() != c.n {
			return fmt.Errorf("%s: strategy %q counts %d %ss, its %s histogram%s holds %d values: the figures do not match their histograms",
				path, s.Name, c.n, c.what, c.what, in, c.h.TotalCount())
		}
	}
	return nil
}

// CheckLayout checks that a histogram read back has the layout simbench
// records in: HDRSignificantDigits significant digits, values up to
// highest. It is checked as each histogram is decoded, before the next:
// a histogram's layout sets the memory it takes (a crafted one may ask
// for tens of megabytes), so a file cannot make its reader hold many.
func CheckLayout(what string, h *hdrhistogram.Histogram, highest int64) error {
	if h.SignificantFigures() != collect.HDRSignificantDigits || h.HighestTrackableValue() != highest {
		return fmt.Errorf("%s: a histogram of another layout (%d significant digits up to %d), not the one simbench records in (%d up to %d)",
			what, h.SignificantFigures(), h.HighestTrackableValue(), collect.HDRSignificantDigits, highest)
	}
	return nil
}
