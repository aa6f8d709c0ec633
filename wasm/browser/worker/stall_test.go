package main

import (
	"testing"
	"time"
)

func TestStallWatch(t *testing.T) {
	t0 := time.Unix(1000, 0)
	w := newStallWatch(time.Minute, 0, t0)
	if w.stalled(0, t0.Add(59*time.Second)) {
		t.Fatal("stalled before the window passed")
	}
	// Progress at 59 s restarts the window: a long load that keeps reading
	// never stalls.
	for i := int32(1); i <= 10; i++ {
		if w.stalled(i, t0.Add(time.Duration(i)*59*time.Second)) {
			t.Fatalf("stalled at %d although the counter moved", i)
		}
	}
	end := t0.Add(10 * 59 * time.Second)
	if w.stalled(10, end.Add(59*time.Second)) {
		t.Fatal("stalled 59 s after the last progress")
	}
	if !w.stalled(10, end.Add(time.Minute)) {
		t.Fatal("not stalled a window after the last progress")
	}
	// A counter that wraps still counts as moving.
	w = newStallWatch(time.Minute, -1, t0)
	if w.stalled(0, t0.Add(2*time.Minute)) {
		t.Fatal("a wrapped counter counted as no progress")
	}
}
