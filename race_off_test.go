//go:build !race

package main

// raceBuild tells that the test binary is built with the race detector, so
// that the example clients the tests build share its compiled packages.
const raceBuild = false
