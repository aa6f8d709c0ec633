#!/usr/bin/env bash
# The wasm SIMD128 kernels (GOEXPERIMENT=simd, simd/archsimd) tested against their
# portable twins (in the same binary, see quant/kernels_test.go): the quant and engine
# tests built with the experiment, run under Node (GOOS=js, the Go exec wrapper), and
# quant's under wazero (GOOS=wasip1). Node >= 16.4
# and wazero (any 1.x) implement every SIMD128 instruction the kernels use.
# WAZERO names a wazero binary; without it, wazero v1.12.0 is installed into a
# temporary directory.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh # GOTOOLCHAIN: the toolchain go.mod names
export GOEXPERIMENT=simd
pkgs=${SIMD_PKGS:-"./quant/ ./engine/"}

step() { printf '\n== %s\n' "$*"; }

step "go vet with GOEXPERIMENT=simd (js, wasip1)"
GOOS=js GOARCH=wasm go vet $pkgs
GOOS=wasip1 GOARCH=wasm go vet $pkgs
GOOS=js GOARCH=wasm go vet -tags relaxedsimd ./quant/ # the relaxed kernels (run in Chromium: web/test/relaxed.test.mjs)

step "SIMD kernels under Node (GOOS=js GOARCH=wasm GOEXPERIMENT=simd)"
GOOS=js GOARCH=wasm go test -count=1 -timeout 20m \
  -exec="$(go env GOROOT)/lib/wasm/go_js_wasm_exec" $pkgs

if [ -z "${WAZERO:-}" ]; then
  tools=$(mktemp -d)
  trap 'rm -rf "$tools"' EXIT
  GOEXPERIMENT= GOBIN=$tools go install github.com/tetratelabs/wazero/cmd/wazero@v1.12.0
  WAZERO=$tools/wazero
fi
export WAZERO

# wazero is a second implementation of the SIMD128 instructions: it runs
# quant's kernel tests (every kernel against its portable twin). The engine's
# SIMD build runs end to end under Node above and in Chromium
# (scripts/test-browser.sh); the exhaustive fp16-scale sweep runs under Node
# and natively. Both are left out here to keep CI in time (under wazero
# they took 6 minutes of a local run at load 2-4, running side by side).
# WAZERO_PKGS and WAZERO_SKIP change that.
step "SIMD kernels under wazero (GOOS=wasip1 GOARCH=wasm GOEXPERIMENT=simd)"
GOOS=wasip1 GOARCH=wasm go test -count=1 -timeout 20m \
  -skip="${WAZERO_SKIP-^TestDotScalesAllFP16\$}" \
  -exec="$PWD/scripts/wasip1-exec" ${WAZERO_PKGS:-./quant/}
