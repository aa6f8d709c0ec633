package main

import "time"

// stallWatch decides when the lead gives up on a shard Worker that is
// loading: not after a fixed time (a shard's load takes as long as reading
// and preparing its rows, several minutes on a loaded 2-core machine), but
// once the shard's progress counter (the bytes it has read, in KiB, which
// it publishes in its channel) has not moved for window.
type stallWatch struct {
	window time.Duration
	last   int32     // the counter when it last moved
	since  time.Time // when it last moved (or the watch began)
}

func newStallWatch(window time.Duration, counter int32, now time.Time) stallWatch {
	return stallWatch{window: window, last: counter, since: now}
}

// stalled reports whether the counter, now at counter, has not moved for
// the window.
func (w *stallWatch) stalled(counter int32, now time.Time) bool {
	if counter != w.last {
		w.last, w.since = counter, now
		return false
	}
	return now.Sub(w.since) >= w.window
}
