#!/usr/bin/env bash
# Build the browser runtime and serve it: README's main-job command.
#
#   scripts/serve.sh [--build-only] [serve flags, e.g. -addr 127.0.0.1:9000]
#
# Builds build/worker.wasm (the engine, with the built-in stories260K model),
# build/worker-relaxed.wasm (the same with relaxed-SIMD kernels) and
# build/ui.wasm (the page) with GOOS=js, copies wasm_exec.js from the Go
# toolchain that built them, then serves the repo root on localhost and prints
# the URL. Open it: the built-in model runs with no download.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh # GOTOOLCHAIN: the toolchain go.mod names

build_only=false
if [ "${1:-}" = "--build-only" ]; then build_only=true; shift; fi

mkdir -p build
printf "*\n" > build/.gitignore # build output is never committed
goroot=$(go env GOROOT)

# Use the SIMD experiment when this toolchain has it for wasm.
exp=""
if GOEXPERIMENT=simd GOOS=js GOARCH=wasm go build -o /dev/null ./wasm/browser/worker 2>/dev/null; then
  exp=simd
fi
for cmd in worker ui; do
  GOEXPERIMENT=$exp GOOS=js GOARCH=wasm go build -trimpath -ldflags="-s -w" -o "build/$cmd.wasm.tmp" "./wasm/browser/$cmd"
  mv "build/$cmd.wasm.tmp" "build/$cmd.wasm"
done
# The relaxed-SIMD engine (quant's relaxedsimd kernels), which web/picolm.js
# loads where WebAssembly.validate accepts relaxed ops: Go's assembler
# encodes them wrongly, and scripts/relaxpatch rewrites them.
rm -f build/worker-relaxed.wasm
if [ "$exp" = simd ]; then
  GOEXPERIMENT=simd GOOS=js GOARCH=wasm go build -tags relaxedsimd -trimpath -ldflags="-s -w" -o build/worker-relaxed.wasm.tmp ./wasm/browser/worker
  go run ./scripts/relaxpatch build/worker-relaxed.wasm.tmp build/worker-relaxed.wasm
  rm build/worker-relaxed.wasm.tmp
fi
cp "$goroot/lib/wasm/wasm_exec.js" build/wasm_exec.js
go build -o build/serve ./scripts/serve
relaxed=""
if [ -f build/worker-relaxed.wasm ]; then relaxed=", build/worker-relaxed.wasm ($(du -h build/worker-relaxed.wasm | cut -f1))"; fi
echo "built build/worker.wasm ($(du -h build/worker.wasm | cut -f1))$relaxed and build/ui.wasm ($(du -h build/ui.wasm | cut -f1)) with $(go version | cut -d' ' -f3)${exp:+ GOEXPERIMENT=$exp}" >&2

if $build_only; then exit 0; fi
exec build/serve -root . "$@"
