//go:build linux

package main

import (
	"runtime"
	"syscall"
	"time"
	"unsafe"
)

// cpuTime returns the CPU time the calling OS thread has used (main locks
// itself to its thread with -clock cpu), by clock_gettime's
// CLOCK_THREAD_CPUTIME_ID, to the nanosecond (getrusage's thread time moves
// in coarser steps, and a call shorter than one step would time as zero), so
// that time slices taken by other jobs on a shared machine do not count;
// where the thread's clock is not available, the process's.
func cpuTime() time.Duration {
	runtime.LockOSThread()
	const clockThreadCPUTimeID = 3 // Linux's CLOCK_THREAD_CPUTIME_ID
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			return 0
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return time.Duration(ts.Nano())
}
