package fakeapi

import (
	"testing"
	"unsafe"
)

// A request slot is one cache line (slot's padding): a field added or
// removed must come out of the padding, or the padding go.
func TestSlotIsOneCacheLine(t *testing.T) {
	if n := unsafe.Sizeof(slot{}); n != 64 {
		t.Errorf("a slot is %d bytes, want 64: resize its padding", n)
	}
}
