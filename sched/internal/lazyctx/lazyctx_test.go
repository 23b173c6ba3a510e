package lazyctx

import (
	"context"
	"testing"
)

// TestCanceler checks Done and Err before and after Cancel, whether Done
// was asked for before the cancel or only after, and that a second Cancel
// does nothing.
func TestCanceler(t *testing.T) {
	closed := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	var early, late Canceler
	d := early.Done()
	if closed(d) || early.Err() != nil || late.Err() != nil {
		t.Fatal("cancelled before Cancel")
	}
	early.Cancel()
	late.Cancel()
	early.Cancel()
	if !closed(d) || !closed(early.Done()) || !closed(late.Done()) {
		t.Error("Done not closed after Cancel")
	}
	if early.Err() != context.Canceled || late.Err() != context.Canceled {
		t.Errorf("Err after Cancel: %v, %v", early.Err(), late.Err())
	}
}
