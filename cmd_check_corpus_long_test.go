//go:build long

package main

// Under -tags long the corpus runs 3 times: every defect must be caught
// in 3 runs of 3.
func init() { corpusRuns = 3 }
