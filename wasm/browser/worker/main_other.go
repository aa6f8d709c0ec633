//go:build !js

// Command worker is the engine's Web Worker (build it with GOOS=js
// GOARCH=wasm; web/worker.js starts it). The engine host it bridges is
// package host, which builds and is tested everywhere.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "worker: build with GOOS=js GOARCH=wasm and run in a browser Web Worker (scripts/serve.sh)")
	os.Exit(2)
}
