# workerd configuration for the fault tests (scripts/test-workers.sh,
# TestE2EFaults): the bundle of `sh build.sh --faults` (the model embedded,
# plus the test-only /_fault/ routes that take the Go instance down), with
# short timeouts so that a wedged instance is found in seconds.
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "picolm", worker = .picolmWorker),
  ],
  sockets = [
    (name = "http", address = "127.0.0.1:8787", http = (), service = "picolm"),
  ],
);

const picolmWorker :Workerd.Worker = (
  modules = [
    (name = "worker.mjs", esModule = embed "build-faults/worker.mjs"),
    (name = "wasm_exec.js", esModule = embed "build-faults/wasm_exec.js"),
    (name = "app.wasm", wasm = embed "build-faults/app.wasm"),
  ],
  compatibilityDate = "2025-09-01",
  bindings = [
    (name = "MAX_TOKENS_CAP", text = "256"),
    (name = "DEFAULT_MAX_TOKENS", text = "128"),
    (name = "CONTEXT", text = "512"),
    (name = "SESSIONS", text = "4"),
    (name = "MAX_BODY_BYTES", text = "65536"),
    (name = "STALL_TIMEOUT_MS", text = "2000"),
    (name = "REQUEST_TIMEOUT_MS", text = "4000"),
  ],
);
