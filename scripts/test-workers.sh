#!/usr/bin/env bash
# End-to-end test of the Cloudflare Worker (wasm/workers) on workerd:
# builds the bundle, starts `workerd serve` on 127.0.0.1, waits until it
# accepts connections, runs the Go client tests (TestE2E) and stops workerd.
# Needs node_modules (npm ci: the pinned workerd) and Go.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOTOOLCHAIN="${GOTOOLCHAIN:-go1.27.3}"

WORKERD=node_modules/.bin/workerd
if [ ! -x "$WORKERD" ]; then
	echo "test-workers: $WORKERD missing: run npm ci first" >&2
	exit 1
fi

sh wasm/workers/build.sh
raw=$(cat wasm/workers/build/* | wc -c)
gz=0
for f in wasm/workers/build/*; do gz=$((gz + $(gzip -9 -c "$f" | wc -c))); done
echo "test-workers: bundle $raw bytes, $gz bytes gzip-compressed (Cloudflare limits: free 3 MB, paid 10 MB compressed)"

port="${PICOLM_WORKER_PORT:-18787}"
log=$(mktemp)
"$WORKERD" serve wasm/workers/config.capnp --socket-addr "http=127.0.0.1:$port" >"$log" 2>&1 &
pid=$!
cleanup() {
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	rm -f "$log"
}
trap cleanup EXIT

# Wait for the socket (not an HTTP request: the test's first request must
# be the cold one).
for i in $(seq 1 300); do
	if ! kill -0 "$pid" 2>/dev/null; then
		echo "test-workers: workerd exited:" >&2
		cat "$log" >&2
		exit 1
	fi
	if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
		break
	fi
	if [ "$i" = 300 ]; then
		echo "test-workers: workerd did not listen on 127.0.0.1:$port within 30 s" >&2
		cat "$log" >&2
		exit 1
	fi
	sleep 0.1
done

status=0
PICOLM_WORKER_URL="http://127.0.0.1:$port" go test -count=1 -v -run '^TestE2E$' ./wasm/workers/ || status=$?
if [ "$status" != 0 ]; then
	echo "test-workers: workerd log:" >&2
	cat "$log" >&2
fi
exit "$status"
