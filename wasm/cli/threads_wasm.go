package main

// Go on wasm runs on one thread: splitting matrix products over goroutines
// would only add scheduling.
func defaultThreads() int { return 1 }

func clampThreads(int) int { return 1 }
