package sim

import (
	"testing"
	"unsafe"
)

// An attempt is two cache lines (attempt's padding): a field added or
// removed must come out of the padding, or the padding go.
func TestAttemptIsTwoCacheLines(t *testing.T) {
	if n := unsafe.Sizeof(attempt{}); n != 128 {
		t.Errorf("an attempt is %d bytes, want 128: resize its padding", n)
	}
}
