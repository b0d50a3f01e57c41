package iasapplication

import (
	"fmt"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// TestToldOnce: a message is told once, again after toldFor, and what was
// told is forgotten, so the memory does not grow with every day's messages.
func TestToldOnce(t *testing.T) {
	clock := clocktesting.NewFakeClock(time.Now())
	told := newToldOnce(clock)
	if !told.first("a") || told.first("a") {
		t.Fatal("a message was not told exactly once")
	}
	for i := range 100 {
		told.first(fmt.Sprintf("day-1/%d", i))
	}
	clock.Step(toldFor)
	if !told.first("a") {
		t.Error("a message is not told again after toldFor")
	}
	if n := told.told.Len(); n != 1 {
		t.Errorf("after toldFor, %d messages are remembered, want 1 (the one told since)", n)
	}
}
