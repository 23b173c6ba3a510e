// Package racebuild tells whether the binary is built with the race
// detector, for the tests that size their work to it (the race detector
// runs code several times slower) and those that build a client with the
// same flags as themselves.
package racebuild
