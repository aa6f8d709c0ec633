// The Worker's entry module: our replacement for the worker.mjs that
// syumai/workers' workers-assets-gen generates. That one instantiates the Go
// module for every request (and the Go program ends with the response), so
// every request would load the model again. This one starts the Go program
// once per isolate, on the first request, and sends every request to the
// same instance, where the model is already loaded.
//
// It also provides picolmNewBody, the response-body stream the Go bridge
// (bridge_js.go) writes to: Go enqueues chunks and, on Flush, waits until the
// reader has taken them, which is when workerd has sent them.
import "./wasm_exec.js";
import mod from "./app.wasm";

// syumai/workers calls these globals.
globalThis.tryCatch = (fn) => {
  try {
    return { result: fn() };
  } catch (e) {
    return { error: e };
  }
};

globalThis.picolmNewBody = () => {
  let ctrl;
  let cancelled = false;
  let wake = null;
  const wakeUp = () => {
    if (wake) {
      const w = wake;
      wake = null;
      w();
    }
  };
  const stream = new ReadableStream({
    start(c) { ctrl = c; },
    pull() { wakeUp(); },
    cancel() { cancelled = true; wakeUp(); },
  });
  return {
    stream,
    write(chunk) {
      if (cancelled) return false;
      ctrl.enqueue(chunk);
      return true;
    },
    close() {
      if (!cancelled) ctrl.close();
    },
    // Resolves true once the reader has taken every chunk, false if it
    // cancelled the stream.
    drained() {
      if (cancelled) return Promise.resolve(false);
      if (ctrl.desiredSize > 0) return Promise.resolve(true);
      return new Promise((resolve) => { wake = () => resolve(!cancelled); });
    },
  };
};

let instance; // Promise of the binding object of the running Go program

function start(env, ctx) {
  const binding = {};
  // syumai/workers reads env (and the binding it fills in) from the global
  // "context". It is the first request's; env is the same for every request
  // of an isolate, ctx (waitUntil) is not, and the Go side does not use it.
  globalThis.context = { env, ctx, binding };
  const go = new Go();
  let ready;
  const readyPromise = new Promise((resolve) => { ready = resolve; });
  const inst = new WebAssembly.Instance(mod, {
    ...go.importObject,
    workers: { ready: () => ready() },
  });
  const exited = go.run(inst).then((code) => {
    instance = undefined; // the next request starts a new instance
    throw new Error(`the Go program exited (code ${code})`);
  });
  return Promise.race([readyPromise, exited]).then(() => binding);
}

async function fetch(req, env, ctx) {
  if (instance === undefined) {
    instance = start(env, ctx);
  }
  let binding;
  try {
    binding = await instance;
  } catch (e) {
    instance = undefined;
    return Response.json(
      { error: { message: `starting the model failed: ${e.message}`, type: "server_error", param: null, code: null } },
      { status: 500 });
  }
  return binding.handleRequest(req);
}

export default { fetch };
