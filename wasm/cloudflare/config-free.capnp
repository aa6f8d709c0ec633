# workerd configuration for the free-plan bundle (sh build.sh --free: no
# embedded model), which fetches its model from MODEL_URL on the first
# request of each isolate. Here a second service serves the model over
# HTTP on 127.0.0.1 from a directory on disk:
#
#   sh build.sh --free
#   MODEL_URL=http://127.0.0.1:8788/stories260K.gguf npx workerd serve config-free.capnp \
#     --directory-path models=../internal/defaultmodel
#
# (--socket-addr http=... and --socket-addr models=... choose other
# addresses; MODEL_URL may name any http(s) URL the Worker can reach.)
# The other variables are the same as in config.capnp and wrangler.toml.
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "picolm", worker = .picolmWorker),
    # The model files: GET /stories260K.gguf answers the file with its
    # Content-Length. The path is the working directory's, or --directory-path.
    (name = "models", disk = (path = "../internal/defaultmodel")),
    # The Worker's global fetch(): public addresses as usual, and this
    # machine's (127.0.0.0/8), which workerd refuses by default.
    (name = "internet", network = (allow = ["public", "local"])),
  ],
  sockets = [
    (name = "http", address = "127.0.0.1:8787", http = (), service = "picolm"),
    (name = "models", address = "127.0.0.1:8788", http = (), service = "models"),
  ],
);

const picolmWorker :Workerd.Worker = (
  modules = [
    (name = "worker.mjs", esModule = embed "build-free/worker.mjs"),
    (name = "wasm_exec.js", esModule = embed "build-free/wasm_exec.js"),
    (name = "app.wasm", wasm = embed "build-free/app.wasm"),
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
    (name = "MODEL_URL", fromEnvironment = "MODEL_URL"),
  ],
);
