#!/bin/sh
# Builds the Worker bundle: app.wasm (GOOS=js, stripped), wasm_exec.js from
# the Go toolchain that built it, and the entry module.
#
#   sh build.sh            into build/: the stories260K model embedded
#                          (~3.4 MB gzip: fits the paid plan's 10 MB)
#   sh build.sh --free     into build-free/: -tags nomodel, no embedded model
#                          (fits the free plan's 3 MB gzip); the Worker
#                          fetches its model from MODEL_URL or R2 on the
#                          first request of each isolate
#   sh build.sh --faults   into build-faults/: the model embedded and the
#                          test-only /_fault/ routes (-tags picolmfaults,
#                          faults_js.go) that take the Go instance down, for
#                          the glue's restart tests (config-faults.capnp)
#   sh build.sh [--free|--faults] DIR   into DIR instead
#
# wrangler runs it as the [build] command; config.capnp (build/) and
# config-free.capnp (build-free/) embed the same files.
set -eu
cd "$(dirname "$0")/../.."
. scripts/env.sh # GOTOOLCHAIN: the toolchain go.mod names
cd wasm/cloudflare
tags=
out=build
case "${1:-}" in
--free)
	tags=nomodel
	out=build-free
	shift
	;;
--faults)
	tags=picolmfaults
	out=build-faults
	shift
	;;
esac
out="${1:-$out}"
rm -rf "$out"
mkdir -p "$out"
GOOS=js GOARCH=wasm go build -trimpath -tags "$tags" -ldflags="-s -w" -o "$out/app.wasm" .
cp "$(go env GOROOT)/lib/wasm/wasm_exec.js" "$out/wasm_exec.js"
cp glue/worker.mjs "$out/worker.mjs"
