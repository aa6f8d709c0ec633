#!/usr/bin/env bash
# The full JSON Schema run of the browser JS API and the Cloudflare Worker, by
# hand (CI runs a sample of it in scripts/test-browser.sh and
# scripts/test-workers.sh): every schema of engine/grammar/testdata/schemas
# (scripts/schemas.mjs) with seeds 1..PICOLM_SCHEMA_SEEDS (default 10) at
# temperature 1, through chat.completions.create and completions.create with
# response_format json_schema in headless Chromium (web/test/schemas.test.mjs),
# then through the Worker on workerd with the openai npm client
# (wasm/cloudflare/test/schemas.test.mjs); ajv validates every output and each
# prints its counts. Builds first (scripts/serve.sh --build-only,
# wasm/cloudflare/build.sh). Needs what those tests need: /usr/bin/chromium and
# node_modules (npm ci). First the CLI's run, wasm/cli's TestJSONSchemaFlag
# (go test runs it with 1 seed unless PICOLM_SCHEMA_SEEDS says more).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
export PICOLM_SCHEMA_SEEDS="${PICOLM_SCHEMA_SEEDS:-10}"

echo "schema-ajv: the CLI (--json-schema), $PICOLM_SCHEMA_SEEDS seeds per schema"
go test -count=1 -v -run "^TestJSONSchemaFlag$" ./wasm/cli | grep -E "ajv:|^(--- |ok|FAIL)"
scripts/serve.sh --build-only
sh wasm/cloudflare/build.sh
echo "schema-ajv: the browser JS API, $PICOLM_SCHEMA_SEEDS seeds per schema"
node --test --test-reporter=spec web/test/schemas.test.mjs

port="${PICOLM_WORKER_PORT:-18797}"
log=$(mktemp)
node_modules/.bin/workerd serve wasm/cloudflare/config.capnp --socket-addr "http=127.0.0.1:$port" >"$log" 2>&1 &
pid=$!
trap 'kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 1 300); do
	(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
	kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; exit 1; }
	sleep 0.1
done
echo "schema-ajv: the Worker on workerd, $PICOLM_SCHEMA_SEEDS seeds per schema"
PICOLM_WORKER_URL="http://127.0.0.1:$port" node --test --test-reporter=spec wasm/cloudflare/test/schemas.test.mjs
