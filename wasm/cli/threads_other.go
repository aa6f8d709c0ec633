//go:build !wasm

package main

import "runtime"

func defaultThreads() int { return runtime.NumCPU() }

func clampThreads(n int) int {
	if n <= 0 {
		return defaultThreads()
	}
	return n
}
