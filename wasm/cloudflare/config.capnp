# workerd configuration for running the Worker locally without wrangler:
#
#   sh build.sh && npx workerd serve config.capnp
#   npx workerd serve config.capnp --socket-addr http=127.0.0.1:9000   (another address)
#
# It serves the same bundle (build/) with the same variables as wrangler.toml.
# The free-plan bundle (build.sh --free, no embedded model): config-free.capnp.
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
    (name = "worker.mjs", esModule = embed "build/worker.mjs"),
    (name = "wasm_exec.js", esModule = embed "build/wasm_exec.js"),
    (name = "app.wasm", wasm = embed "build/app.wasm"),
  ],
  compatibilityDate = "2025-09-01",
  bindings = [
    (name = "MAX_TOKENS_CAP", text = "256"),
    (name = "DEFAULT_MAX_TOKENS", text = "128"),
    (name = "CONTEXT", text = "512"),
    (name = "SESSIONS", text = "4"),
    (name = "MAX_BODY_BYTES", text = "65536"),
    (name = "REQUEST_TIMEOUT_MS", text = "300000"),
    (name = "STALL_TIMEOUT_MS", text = "60000"),
  ],
);
