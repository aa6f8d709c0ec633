//go:build !js

// Command ui is the page's Go code (build it with GOOS=js GOARCH=wasm;
// index.html starts it). Its logic is package app, which builds and is
// tested everywhere.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "ui: build with GOOS=js GOARCH=wasm and open index.html (scripts/serve.sh)")
	os.Exit(2)
}
