// The Worker's entry module: our replacement for the worker.mjs that
// syumai/workers' workers-assets-gen generates. That one instantiates the Go
// module for every request (and the Go program ends with the response), so
// every request would load the model again. This one starts the Go program
// once per isolate, on the first request, and sends every request to the
// same instance, where the model is already loaded.
//
// One Go instance serves concurrent requests, and Go runs whichever
// goroutines are ready whenever any JS callback enters it, so one request's
// work often runs inside another request's callback (another IoContext, in
// workerd's terms). To keep each request's I/O in its own context:
//   - the request body is read here, in the request's context, and handed to
//     Go as an in-memory body (at most MAX_BODY_BYTES + 1 bytes: Go answers
//     413 above the limit);
//   - the response body stream is made here too (newBody); Go writes chunks
//     into it and waits for the stream's pull, which calls into Go from this
//     request's context;
//   - a timer ticks in the request's context until its response is complete,
//     so workerd does not take a request whose progress comes from other
//     requests' callbacks for a hung one.
import "./wasm_exec.js";
import mod from "./app.wasm";

// syumai/workers calls this global.
globalThis.tryCatch = (fn) => {
  try {
    return { result: fn() };
  } catch (e) {
    return { error: e };
  }
};

// newBody is a response body fed by Go: write(chunk) enqueues, desired()
// tells whether the reader has taken everything (> 0), not yet (0) or
// cancelled (< 0); the stream's pull and cancel call the demand handler
// that Go registers, until close().
function newBody() {
  let ctrl;
  let cancelled = false;
  let onDemand = null;
  let finish;
  const finished = new Promise((resolve) => { finish = resolve; });
  const end = () => { onDemand = null; finish(); };
  const stream = new ReadableStream({
    start(c) { ctrl = c; },
    pull() { if (onDemand) onDemand(); },
    cancel() {
      cancelled = true;
      if (onDemand) onDemand();
      end();
    },
  });
  return {
    stream,
    finished,
    setDemandHandler(f) { onDemand = f; },
    write(chunk) {
      if (cancelled) return false;
      ctrl.enqueue(chunk);
      return true;
    },
    desired() { return cancelled ? -1 : ctrl.desiredSize; },
    close() {
      if (!cancelled) ctrl.close();
      end();
    },
    fail() { end(); },
  };
}

const bodies = new Map();
let nextBody = 0;
globalThis.picolmTakeBody = (id) => {
  const b = bodies.get(id);
  bodies.delete(id);
  return b;
};

// readLimited reads a request body, stopping after limit + 1 bytes.
async function readLimited(body, limit) {
  const reader = body.getReader();
  const parts = [];
  let n = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    parts.push(value);
    n += value.byteLength;
    if (n > limit) {
      await reader.cancel();
      break;
    }
  }
  const out = new Uint8Array(Math.min(n, limit + 1));
  let off = 0;
  for (const p of parts) {
    const k = Math.min(p.byteLength, out.length - off);
    out.set(p.subarray(0, k), off);
    off += k;
    if (off === out.length) break;
  }
  return out;
}

let instance; // Promise of the binding object of the running Go program

function start(env, ctx) {
  const binding = {};
  // syumai/workers reads env (and the binding it fills in) from the global
  // "context". It is the first request's; env is the same for every request
  // of an isolate, ctx (waitUntil) is not, and the Go side does not use it.
  globalThis.context = { env, ctx, binding };
  const go = new Go();
  let exitCode;
  go.exit = (code) => { exitCode = code; };
  let ready;
  const readyPromise = new Promise((resolve) => { ready = resolve; });
  const inst = new WebAssembly.Instance(mod, {
    ...go.importObject,
    workers: { ready: () => ready() },
  });
  const exited = go.run(inst).then(() => {
    instance = undefined; // the next request starts a new instance
    // The Go side leaves the reason here when fetching the model failed.
    const why = globalThis.picolmStartError;
    delete globalThis.picolmStartError;
    throw new Error(why || `the Go program exited (code ${exitCode})`);
  });
  return Promise.race([readyPromise, exited]).then(() => binding);
}

function errorResponse(status, message) {
  return Response.json({ error: { message, type: "server_error", param: null, code: null } }, { status });
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
    return errorResponse(500, `starting the model failed: ${e.message}`);
  }

  const limit = Number(env.MAX_BODY_BYTES) > 0 ? Number(env.MAX_BODY_BYTES) : 65536;
  const init = { method: req.method, headers: new Headers(req.headers) };
  if (req.body !== null) {
    init.body = await readLimited(req.body, limit);
  }
  const body = newBody();
  const id = String(nextBody++);
  bodies.set(id, body);
  init.headers.set("X-Picolm-Body", id);

  const keepAlive = setInterval(() => {}, 20);
  body.finished.then(() => clearInterval(keepAlive));
  try {
    return await binding.handleRequest(new Request(req.url, init));
  } catch (e) {
    body.fail();
    return errorResponse(500, e.message);
  } finally {
    bodies.delete(id);
  }
}

export default { fetch };
