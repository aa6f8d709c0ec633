#!/usr/bin/env bash
# End-to-end test of the Cloudflare Worker (wasm/cloudflare) on workerd, both
# bundles:
#   - build/ (config.capnp): stories260K embedded; fits the paid plan;
#   - build-free/ (config-free.capnp, build.sh --free): no embedded model,
#     so it fits the free plan's 3 MB; the Worker fetches stories260K from
#     MODEL_URL, a second workerd service (a disk directory) on 127.0.0.1.
# For each: starts `workerd serve` on 127.0.0.1, waits until it accepts
# connections, runs the Go client tests (TestE2E) and stops workerd. Prints
# both gzip -9 sizes (Cloudflare's measure) and fails if the free bundle is
# over 3,000,000 bytes. Needs node_modules (npm ci: the pinned workerd) and Go.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh # GOTOOLCHAIN: the toolchain go.mod names

WORKERD=node_modules/.bin/workerd
if [ ! -x "$WORKERD" ]; then
	echo "test-workers: $WORKERD missing: run npm ci first" >&2
	exit 1
fi

FREE_LIMIT=3000000 # Cloudflare free plan: 3 MB compressed (paid: 10 MB)
sh wasm/cloudflare/build.sh
sh wasm/cloudflare/build.sh --free
gzsize() {
	local gz=0 f
	for f in "$1"/*; do gz=$((gz + $(gzip -9 -c "$f" | wc -c))); done
	echo "$gz"
}
full_gz=$(gzsize wasm/cloudflare/build)
free_gz=$(gzsize wasm/cloudflare/build-free)
echo "test-workers: bundle build/ (model embedded): $(cat wasm/cloudflare/build/* | wc -c) bytes, $full_gz bytes gzip -9 (paid plan: 10 MB)"
echo "test-workers: bundle build-free/ (build.sh --free): $(cat wasm/cloudflare/build-free/* | wc -c) bytes, $free_gz bytes gzip -9 (free plan: $FREE_LIMIT)"
if [ "$free_gz" -gt "$FREE_LIMIT" ]; then
	echo "test-workers: FAIL: the free bundle is $free_gz bytes gzip-compressed, over $FREE_LIMIT" >&2
	exit 1
fi

port="${PICOLM_WORKER_PORT:-18787}"
log=$(mktemp)
models=$(mktemp -d)
pid=
stop() {
	if [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		pid=
	fi
}
cleanup() {
	stop
	rm -rf "$log" "$models"
}
trap cleanup EXIT

# waitport PORT: until workerd listens there (not an HTTP request: the
# test's first request must be the cold one).
waitport() {
	local i
	for i in $(seq 1 300); do
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "test-workers: workerd exited:" >&2
			cat "$log" >&2
			exit 1
		fi
		if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then
			return
		fi
		sleep 0.1
	done
	echo "test-workers: workerd did not listen on 127.0.0.1:$1 within 30 s" >&2
	cat "$log" >&2
	exit 1
}

# e2e NAME: TestE2E against the running workerd; the environment passes on.
e2e() {
	local status=0
	echo "test-workers: TestE2E, $1"
	PICOLM_WORKER_URL="http://127.0.0.1:$port" go test -count=1 -v -run '^TestE2E$' ./wasm/cloudflare/ || status=$?
	if [ "$status" != 0 ]; then
		echo "test-workers: $1: workerd log:" >&2
		cat "$log" >&2
		exit "$status"
	fi
	stop
}

"$WORKERD" serve wasm/cloudflare/config.capnp --socket-addr "http=127.0.0.1:$port" >"$log" 2>&1 &
pid=$!
waitport "$port"
PICOLM_WORKER_MODEL_SOURCE=embedded e2e "build/ (model embedded)"

# The free bundle: the model directory starts empty (the first request must
# fail with the fetch's 404 and the next one fetch again: TestE2E puts the
# file there in between).
mport=$((port + 1))
url="http://127.0.0.1:$mport/stories260K.gguf"
MODEL_URL="$url" "$WORKERD" serve wasm/cloudflare/config-free.capnp \
	--socket-addr "http=127.0.0.1:$port" --socket-addr "models=127.0.0.1:$mport" \
	--directory-path "models=$models" >"$log" 2>&1 &
pid=$!
waitport "$port"
waitport "$mport"
PICOLM_WORKER_MODEL_SOURCE="$url" PICOLM_WORKER_MODEL_DIR="$models" e2e "build-free/ (model from MODEL_URL)"
