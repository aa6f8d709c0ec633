//go:build unix && !linux

package main

import (
	"runtime"
	"syscall"
	"time"
)

// cpuTime returns the CPU time the calling OS thread has used (main locks
// itself to its thread with -clock cpu), so that time slices taken by
// other jobs on a shared machine do not count; where the thread's time is
// not available, the process's.
func cpuTime() time.Duration {
	runtime.LockOSThread()
	var ru syscall.Rusage
	const rusageThread = 1 // Linux's RUSAGE_THREAD
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			return 0
		}
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
