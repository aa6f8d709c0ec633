#!/usr/bin/env bash
# The browser tests: build the wasm files and the static server
# (scripts/serve.sh --build-only), then run web/test/*.test.mjs with Node's
# test runner against headless Debian Chromium through playwright-core.
# Installs nothing: it needs /usr/bin/chromium (apt-get install chromium) and
# node_modules (npm ci). Screenshots go to $ARTIFACTS_DIR (default build/artifacts).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh # GOTOOLCHAIN: the toolchain go.mod names

if [ ! -x "${CHROMIUM:-/usr/bin/chromium}" ]; then
  echo "test-browser: no chromium at ${CHROMIUM:-/usr/bin/chromium} (apt-get install -y chromium)" >&2
  exit 1
fi
for dep in playwright-core typescript; do
  if [ ! -d "node_modules/$dep" ]; then
    echo "test-browser: node_modules/$dep is missing (npm ci)" >&2
    exit 1
  fi
done
scripts/serve.sh --build-only
# --test-timeout is a hang guard for each file, not a speed limit:
# browser.test.mjs took over 180 s at load 10.
exec node --test --test-concurrency=1 --test-timeout=900000 web/test/*.test.mjs
