//go:build !unix && !js

package main

import "time"

var clockStart = time.Now()

// cpuTime has no CPU clock to read on this platform (wasip1, windows): it
// returns the wall time since the program started, so -clock cpu measures as -clock wall.
func cpuTime() time.Duration { return time.Since(clockStart) }
