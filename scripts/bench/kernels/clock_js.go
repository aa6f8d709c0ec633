//go:build js

package main

import (
	"syscall/js"
	"time"
)

// cpuTime returns the CPU time the Node process has used (user and
// system, process.cpuUsage): the Go program runs on one thread, and a
// machine shared with other jobs takes time slices that wall-clock
// timings would count.
func cpuTime() time.Duration {
	u := js.Global().Get("process").Call("cpuUsage")
	return time.Duration(u.Get("user").Float()+u.Get("system").Float()) * time.Microsecond
}
