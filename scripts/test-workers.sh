#!/usr/bin/env bash
# End-to-end test of the Cloudflare Worker (wasm/cloudflare) on workerd, three
# bundles:
#   - build/ (config.capnp): stories260K embedded; fits the paid plan.
#     TestE2E, then TestSoak: PICOLM_SOAK_SECONDS (default 30; 0 skips it)
#     of mixed valid and hostile traffic, reporting workerd's RSS and the Go
#     instance's memory over time; then wasm/cloudflare/test/openai.test.mjs,
#     the API through the official openai npm client (structured output,
#     tools, embeddings, logprobs, seeds), and
#     wasm/cloudflare/test/schemas.test.mjs, a sample of the JSON Schema set
#     (scripts/schema-ajv.sh is the full run);
#   - build-faults/ (config-faults.capnp, build.sh --faults): the same plus
#     test-only routes that take the Go instance down; TestE2EFaults checks
#     that the glue answers and replaces it;
#   - build-free/ (config-free.capnp, build.sh --free): no embedded model,
#     so it fits the free plan's 3 MB; the Worker fetches stories260K from
#     MODEL_URL, a second workerd service (a disk directory) on 127.0.0.1;
#     then again with MODEL_URL the first shard of a split stories260K.
# For each: starts `workerd serve` on 127.0.0.1, waits until it accepts
# connections, runs the Go client tests and stops workerd: SIGTERM, which
# must end it within STOP_GRACE seconds (workerd drains the requests in
# flight first, so a hung request would keep it up; the run then fails after
# a SIGKILL). Prints both gzip -9 sizes (Cloudflare's measure) and fails if
# the free bundle is over 3,000,000 bytes. Needs node_modules (npm ci: the
# pinned workerd) and Go.
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
sh wasm/cloudflare/build.sh --faults
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
STOP_GRACE=${STOP_GRACE:-10}
# stop ends workerd: SIGTERM, then SIGKILL if it is still there after
# STOP_GRACE seconds, which fails the run (status 1) unless told not to
# (stop force: the script is exiting anyway).
stop() {
	[ -n "$pid" ] || return 0
	local i p=$pid
	pid=
	kill -TERM "$p" 2>/dev/null || true
	for i in $(seq 1 $((STOP_GRACE * 10))); do
		kill -0 "$p" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$p" 2>/dev/null; then
		kill -KILL "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
		if [ "${1:-}" != force ]; then
			echo "test-workers: FAIL: workerd did not stop within $STOP_GRACE s of SIGTERM (a request in flight never ended); killed it. Log:" >&2
			cat "$log" >&2
			return 1
		fi
		return 0
	fi
	wait "$p" 2>/dev/null || true
}
cleanup() {
	stop force
	rm -rf "$log" "$models" "${shards:-}"
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

# e2e NAME TEST [NODETESTS]: the Go test TEST against the running workerd
# (the environment passes on), then the node:test files NODETESTS (a
# space-separated list) if given, then stop it.
e2e() {
	local status=0
	echo "test-workers: $2, $1"
	PICOLM_WORKER_URL="http://127.0.0.1:$port" PICOLM_WORKERD_PID="$pid" \
		go test -count=1 -v -timeout 20m -run "^($2)\$" ./wasm/cloudflare/ || status=$?
	if [ "$status" = 0 ] && [ -n "${3:-}" ]; then
		echo "test-workers: $3 (the openai npm client), $1"
		# shellcheck disable=SC2086 # a list of paths without spaces
		PICOLM_WORKER_URL="http://127.0.0.1:$port" node --test --test-concurrency=1 --test-reporter=spec $3 || status=$?
	fi
	if [ "$status" != 0 ]; then
		echo "test-workers: $1: workerd log:" >&2
		cat "$log" >&2
		exit "$status"
	fi
	stop
}

# TestE2E must be the first client (its first request is the cold one).
# TestSoak is in the same run, after it, on the same instance.
"$WORKERD" serve wasm/cloudflare/config.capnp --socket-addr "http=127.0.0.1:$port" >"$log" 2>&1 &
pid=$!
waitport "$port"
PICOLM_WORKER_MODEL_SOURCE=embedded PICOLM_SOAK_SECONDS="${PICOLM_SOAK_SECONDS:-30}" \
	e2e "build/ (model embedded)" "TestE2E|TestSoak" "wasm/cloudflare/test/openai.test.mjs wasm/cloudflare/test/schemas.test.mjs"

"$WORKERD" serve wasm/cloudflare/config-faults.capnp --socket-addr "http=127.0.0.1:$port" >"$log" 2>&1 &
pid=$!
waitport "$port"
PICOLM_WORKER_FAULTS_URL="http://127.0.0.1:$port" e2e "build-faults/ (instances taken down)" "TestE2EFaults|TestE2ESlowUpload"

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
PICOLM_WORKER_MODEL_SOURCE="$url" PICOLM_WORKER_MODEL_DIR="$models" e2e "build-free/ (model from MODEL_URL)" TestE2E

# The free bundle again, MODEL_URL the first shard of a split GGUF: the
# Worker fetches the others by name. TestE2ESplit writes the shards into
# the (new, empty) directory, one missing at first.
shards=$(mktemp -d)
url="http://127.0.0.1:$mport/stories-00001-of-00003.gguf"
MODEL_URL="$url" "$WORKERD" serve wasm/cloudflare/config-free.capnp \
	--socket-addr "http=127.0.0.1:$port" --socket-addr "models=127.0.0.1:$mport" \
	--directory-path "models=$shards" >"$log" 2>&1 &
pid=$!
waitport "$port"
waitport "$mport"
PICOLM_WORKER_MODEL_SOURCE="$url" PICOLM_WORKER_SPLIT_DIR="$shards" e2e "build-free/ (a split GGUF from MODEL_URL)" TestE2ESplit
rm -rf "$shards"
