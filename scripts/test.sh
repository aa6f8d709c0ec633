#!/usr/bin/env bash
# The project's test command (README.md and .ci/run call it).
# Native tests, the wasm builds, the quant/gguf/engine tests under Node (GOOS=js),
# the wasip1 CLI under wazero and wasmtime (inside go test; wasmtime through
# scripts/wasmtime, cgo), and a short fuzz run of every parser.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh # GOTOOLCHAIN: the toolchain go.mod names
export GOFLAGS=${GOFLAGS:-}

# Each step prints the minutes and seconds since the start (CI must stay under 30 minutes).
T0=$SECONDS
step() { printf '\n== [%dm%02ds] %s\n' $(((SECONDS - T0) / 60)) $(((SECONDS - T0) % 60)) "$*"; }

step "dependencies (Go modules, npm packages, Debian chromium) when missing"
go mod download
if [ ! -d node_modules/playwright-core ] || [ ! -d node_modules/workerd ] || [ ! -d node_modules/ajv-formats ] || [ ! -d node_modules/typescript ] || [ ! -d node_modules/openai ]; then
  npm ci --no-audit --no-fund
fi
if [ ! -x "${CHROMIUM:-/usr/bin/chromium}" ]; then
  SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi

step "gofmt"
bad=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$bad" ]; then echo "gofmt would change: $bad"; exit 1; fi

step "go vet (native, js, wasip1)"
go vet ./...
GOOS=js GOARCH=wasm go vet ./...
GOOS=wasip1 GOARCH=wasm go vet ./...

step "staticcheck"
tools=$(mktemp -d)
trap 'rm -rf "$tools"' EXIT
GOBIN=$tools go install honnef.co/go/tools/cmd/staticcheck@v0.8.2
"$tools/staticcheck" ./...
GOOS=js GOARCH=wasm "$tools/staticcheck" ./...
GOOS=wasip1 GOARCH=wasm "$tools/staticcheck" ./...
GOEXPERIMENT=simd "$tools/staticcheck" ./quant/... ./engine/...
GOEXPERIMENT=simd GOOS=js GOARCH=wasm "$tools/staticcheck" ./quant/... ./engine/...
GOEXPERIMENT=simd GOOS=js GOARCH=wasm "$tools/staticcheck" -tags relaxedsimd ./quant/...

step "builds: CLI for wasip1"
GOOS=wasip1 GOARCH=wasm go build -o /dev/null ./wasm/cli

step "go test (native)"
go test -count=1 -timeout 20m ./...

# The portable build (no GOEXPERIMENT) of quant and gguf under Node. The
# engine's tests run under Node in the SIMD step below (the same tests on the
# same GOOS; the portable kernels are twins in that binary, and the engine's
# portable path runs natively); gguf's tools (quantize, synth, refit, split)
# are the same Go code as natively, and run there.
step "go test under Node (GOOS=js GOARCH=wasm)"
GOOS=js GOARCH=wasm go test -count=1 -timeout 20m \
  -exec="$(go env GOROOT)/lib/wasm/go_js_wasm_exec" \
  ./quant/... ./gguf/

# quant runs under wazero in the SIMD step below (its binary holds the
# portable kernels too, and the portable quant, gguf tools and engine run
# under Node above: the same GOARCH=wasm code; only gguf's file reading
# differs between GOOS=js and wasip1, so gguf itself runs here).
step "go test under wazero (GOOS=wasip1 GOARCH=wasm)"
GOBIN=$tools go install github.com/tetratelabs/wazero/cmd/wazero@v1.12.0
WAZERO=$tools/wazero GOOS=wasip1 GOARCH=wasm go test -count=1 -timeout 20m \
  -exec="$PWD/scripts/wasip1-exec" ./gguf/

# wasm/cli's tests above ran the wasip1 CLI under wasmtime too, through this
# runner; here its own tests (a module of its own: cgo, wasmtime-go's prebuilt
# libwasmtime, kept out of the main module's go build/vet/staticcheck ./...),
# and quant's relaxed-SIMD kernels under wasmtime against their twins.
step "wasmtime runner (scripts/wasmtime: its own module, cgo) and relaxed SIMD under wasmtime"
(cd scripts/wasmtime && go vet ./... && "$tools/staticcheck" ./... && go test -count=1 -timeout 10m ./...)

step "browser: the UI, the worker and the JS API in headless Chromium"
bash scripts/test-browser.sh

step "Cloudflare Worker on workerd (end to end)"
bash scripts/test-workers.sh

step "SIMD kernels against their scalar twins: native AVX2, Node and wazero"
GOEXPERIMENT=simd go test -count=1 ./quant/... ./engine/
WAZERO=$tools/wazero bash scripts/test-simd.sh

step "fuzz (short)"
FUZZTIME=${FUZZTIME:-4s}
fuzz() { go test -run='^$' -fuzz="^$2\$" -fuzztime="$FUZZTIME" "$1"; }
for pkg in $(go list ./...); do
  for f in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
    fuzz "$pkg" "$f"
  done
done

echo; echo "all tests passed in $(((SECONDS - T0) / 60))m$(((SECONDS - T0) % 60))s"
