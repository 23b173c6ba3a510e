//go:build long

package main

import "testing"

// TestLongCheckCorpus runs the labelled corpus 3 times in each of its
// languages (Go, Node, Python): every defect must be caught in 3 runs of
// 3, and no line of a runtime without that line's defect may FAIL or WARN
// in any run.
func TestLongCheckCorpus(t *testing.T) { runCorpus(t, 3) }
