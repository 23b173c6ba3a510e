//go:build !race

package racebuild

// On tells that the binary is built with the race detector (go build
// -race, go test -race).
const On = false
