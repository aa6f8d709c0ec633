#!/bin/sh
# Builds the Worker bundle into build/: app.wasm (GOOS=js, stripped),
# wasm_exec.js from the Go toolchain that built it, and the entry module.
# wrangler runs it as the [build] command; config.capnp embeds the same files.
set -eu
cd "$(dirname "$0")"
export GOTOOLCHAIN="${GOTOOLCHAIN:-go1.27.3}"
rm -rf build
mkdir -p build
GOOS=js GOARCH=wasm go build -trimpath -ldflags="-s -w" -o build/app.wasm .
cp "$(go env GOROOT)/lib/wasm/wasm_exec.js" build/wasm_exec.js
cp glue/worker.mjs build/worker.mjs
