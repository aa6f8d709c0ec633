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
//   - a watchdog timer ticks in the request's context until its response is
//     complete, so workerd does not take a request whose progress comes from
//     other requests' callbacks for a hung one, and so that everything that
//     ends the request (below) happens in its own context.
//
// An instance that can no longer serve is replaced. It is dead when the Go
// program exited (go.exit), or when a call into it threw (only a trap does:
// a stack overflow or running out of memory inside the WebAssembly; the Go
// runtime is then unusable, and later calls say "Go program has already
// exited" or deadlock). It is wedged when it made no progress for
// STALL_TIMEOUT_MS while a request waited on it: no chunk written, no
// response made, and no long computation (a generation blocks the event
// loop, so a timer that fires late means Go was working). Either way every
// request still waiting on it gets a 500 OpenAI error saying why, a stream
// in flight ends with an error event, the reason is logged, and the next
// request starts a fresh instance. Apart from that, a request that takes
// longer than REQUEST_TIMEOUT_MS in all gets a 504 (or its stream ends with
// an error event), and the Go side sees it cancelled; the instance lives on.
//
// Nothing here waits on a promise of the Go program's own (go.run's): one
// made in the first request's context and settled in another's is dropped
// by workerd, which is how the restart logic of the first version of this
// file never ran.
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

const TICK_MS = 20; // the watchdog's period
const LATE_MS = 250; // a tick this late means the event loop was busy (Go computing)
const DEFAULTS = { REQUEST_TIMEOUT_MS: 300000, STALL_TIMEOUT_MS: 60000, MAX_BODY_BYTES: 65536 };

function log(msg) {
  console.error(`picolm: ${msg}`);
}

// settings reads the glue's settings from the environment: positive
// integers, or the defaults when unset. A bad value is a configuration
// error, answered to every request.
function settings(env) {
  const s = {};
  for (const [name, def] of Object.entries(DEFAULTS)) {
    const v = env[name];
    if (v === undefined || v === null || v === "") {
      s[name] = def;
      continue;
    }
    const n = Number(v);
    if (!Number.isSafeInteger(n) || n <= 0) {
      throw new Error(`${name}=${JSON.stringify(v)}: want a positive integer`);
    }
    s[name] = n;
  }
  return s;
}

function errorBody(message, type, code) {
  return { error: { message, type, param: null, code } };
}

function errorResponse(status, message, code = null) {
  return Response.json(errorBody(message, "server_error", code), { status });
}

const encoder = new TextEncoder();

// newBody is a response body fed by Go: write(chunk) enqueues, desired()
// tells whether the reader has taken everything (> 0), not yet (0) or
// cancelled (< 0); the stream's pull and cancel call the demand handler
// that Go registers, until close(). abort(why) ends it from this side.
function newBody(inst) {
  let ctrl;
  let cancelled = false;
  let onDemand = null;
  const body = {
    done: false, // closed, cancelled or aborted
    wanted: 0, // when the reader began waiting for a chunk (0: it is not)
    sse: false, // the response is an event stream (set when the head is out)
    stream: new ReadableStream({
      start(c) { ctrl = c; },
      pull() {
        body.wanted = Date.now();
        demand();
      },
      cancel() {
        cancelled = true;
        demand();
        end();
      },
    }),
    setDemandHandler(f) { onDemand = f; },
    write(chunk) {
      inst.progress();
      if (cancelled) return false;
      body.wanted = 0;
      ctrl.enqueue(chunk);
      return true;
    },
    desired() { return cancelled ? -1 : ctrl.desiredSize; },
    close() {
      inst.progress();
      if (!cancelled) ctrl.close();
      end();
    },
    // abort ends the body with why: tells Go the reader is gone (its writes
    // fail, its request context is cancelled), then ends the stream with an
    // error event (an event stream) or an error (anything else).
    abort(why, code = null) {
      if (body.done) return;
      cancelled = true;
      demand();
      end();
      try {
        if (body.sse) {
          ctrl.enqueue(encoder.encode(`data: ${JSON.stringify(errorBody(why, "server_error", code))}\n\n`));
          ctrl.close();
        } else {
          ctrl.error(new Error(why));
        }
      } catch {
        // already closed
      }
    },
  };
  // demand calls Go's demand handler. A call into an instance that has just
  // died throws; that must not error the stream (the watchdog ends it with
  // an error event at its next tick).
  function demand() {
    try {
      if (onDemand) onDemand();
    } catch {
      // the instance is dead: _resume marked it
    }
  }
  function end() {
    onDemand = null;
    body.done = true;
  }
  return body;
}

const bodies = new Map();
let nextBody = 0;
globalThis.picolmTakeBody = (id) => {
  const b = bodies.get(id);
  bodies.delete(id);
  return b;
};

// readLimited reads a request body, stopping after limit + 1 bytes; one
// still arriving after timeoutMs is an error.
async function readLimited(body, limit, timeoutMs) {
  const reader = body.getReader();
  let late = false;
  const timer = setTimeout(() => {
    late = true;
    reader.cancel().catch(() => {});
  }, timeoutMs);
  const parts = [];
  let n = 0;
  try {
    for (;;) {
      let chunk;
      try {
        chunk = await reader.read();
      } catch (e) {
        if (!late) throw e;
      }
      if (late) {
        throw new Error(`the body was still arriving after REQUEST_TIMEOUT_MS (${timeoutMs} ms)`);
      }
      if (chunk.done) break;
      parts.push(chunk.value);
      n += chunk.value.byteLength;
      if (n > limit) {
        await reader.cancel();
        break;
      }
    }
  } finally {
    clearTimeout(timer);
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

let current; // the Instance new requests go to; undefined: the next request starts one
let started = 0; // instances started in this isolate

// Instance is one running Go program.
class Instance {
  constructor(env, ctx) {
    this.id = ++started;
    this.dead = ""; // why it can no longer serve, once it cannot
    this.progressAt = Date.now(); // when Go last showed progress
    this.lastTick = Date.now();
    const binding = {};
    // syumai/workers reads env (and the binding it fills in) from the global
    // "context". It is the first request's; env is the same for every
    // request of an isolate, ctx (waitUntil) is not, and the Go side does
    // not use it.
    globalThis.context = { env, ctx, binding };
    const go = new Go();
    go.exit = (code) => {
      // The Go side leaves the reason here when fetching the model failed.
      const why = globalThis.picolmStartError;
      delete globalThis.picolmStartError;
      this.kill(why || `the Go program exited (code ${code})`);
    };
    // Every call into Go (JS callbacks, Go's timers) goes through _resume.
    const resume = go._resume;
    go._resume = () => {
      try {
        resume.call(go);
      } catch (e) {
        this.kill(`the Go program failed: ${e}`);
        throw e;
      }
    };
    this.ready = new Promise((resolve, reject) => {
      this.started = resolve;
      this.failed = reject;
    });
    const wasm = new WebAssembly.Instance(mod, {
      ...go.importObject,
      workers: {
        ready: () => {
          this.progress();
          this.started(binding);
        },
      },
    });
    go.run(wasm).catch((e) => this.kill(`the Go program failed: ${e}`));
  }

  // kill marks the instance dead: the requests waiting on it find out at
  // their next watchdog tick.
  kill(why) {
    if (this.dead) return;
    this.dead = why;
    if (current === this) current = undefined;
    this.failed(new Error(why));
    log(`instance ${this.id} stopped: ${why}; the next request starts a fresh one`);
  }

  progress() {
    this.progressAt = Date.now();
  }

  tick(now) {
    if (now - this.lastTick > LATE_MS) this.progress();
    this.lastTick = now;
  }
}

// watch runs a request's watchdog until its body is done: it answers (or
// ends the stream) when the instance dies or wedges, or the request times
// out. The returned promise settles only then, with the error Response to
// send if the head was not out yet.
function watch(inst, body, s, call) {
  const start = Date.now();
  return new Promise((resolve) => {
    const timer = setInterval(() => {
      const now = Date.now();
      inst.tick(now);
      if (body.done) {
        clearInterval(timer);
        return;
      }
      let status = 500;
      let code = "instance_stopped";
      if (!inst.dead) {
        const since = call.head ? body.wanted : start;
        if (since && now - Math.max(inst.progressAt, since) > s.STALL_TIMEOUT_MS) {
          inst.kill(`no progress for ${s.STALL_TIMEOUT_MS} ms (STALL_TIMEOUT_MS) while a request waited on it`);
        } else if (now - start > s.REQUEST_TIMEOUT_MS) {
          status = 504;
          code = "timeout";
        } else {
          return;
        }
      }
      clearInterval(timer);
      const why = status === 504
        ? `the request took longer than REQUEST_TIMEOUT_MS (${s.REQUEST_TIMEOUT_MS} ms)`
        : `the model instance stopped: ${inst.dead}; the next request starts a fresh one`;
      body.abort(why, code);
      resolve(errorResponse(status, why, code));
    }, TICK_MS);
  });
}

async function fetch(req, env, ctx) {
  let s;
  try {
    s = settings(env);
  } catch (e) {
    return errorResponse(500, e.message, "bad_configuration");
  }
  let inst = current;
  try {
    if (inst === undefined) {
      inst = current = new Instance(env, ctx);
    }
  } catch (e) {
    current = undefined;
    log(`starting an instance failed: ${e}`);
    return errorResponse(500, `starting the model failed: ${e.message}`, "model_unavailable");
  }
  let binding;
  try {
    binding = await inst.ready;
  } catch (e) {
    return errorResponse(500, `starting the model failed: ${e.message}`, "model_unavailable");
  }

  const init = { method: req.method, headers: new Headers(req.headers) };
  if (req.body !== null) {
    try {
      init.body = await readLimited(req.body, s.MAX_BODY_BYTES, s.REQUEST_TIMEOUT_MS);
    } catch (e) {
      // Too slow (408), or the client went away mid-upload.
      const late = e.message.includes("REQUEST_TIMEOUT_MS");
      return Response.json(errorBody(`reading the request body failed: ${e.message}`, "invalid_request_error", late ? "timeout" : null),
        { status: late ? 408 : 400 });
    }
  }
  if (inst.dead) {
    return errorResponse(500, `the model instance stopped: ${inst.dead}; the next request starts a fresh one`, "instance_stopped");
  }
  const body = newBody(inst);
  const id = String(nextBody++);
  bodies.set(id, body);
  init.headers.set("X-Picolm-Body", id);

  const call = { head: false };
  const gaveUp = watch(inst, body, s, call);
  try {
    const res = await Promise.race([binding.handleRequest(new Request(req.url, init)), gaveUp]);
    call.head = true;
    inst.progress();
    body.sse = (res.headers.get("Content-Type") || "").startsWith("text/event-stream");
    return res;
  } catch (e) {
    // The call threw (the instance is dead: _resume marked it) or the Go
    // side refused the request (syumai/workers could not convert it).
    body.abort(inst.dead || `${e}`, inst.dead ? "instance_stopped" : null);
    if (inst.dead) {
      return errorResponse(500, `the model instance stopped: ${inst.dead}; the next request starts a fresh one`, "instance_stopped");
    }
    return errorResponse(500, `the request failed: ${e}`, null);
  } finally {
    bodies.delete(id);
  }
}

export default { fetch };
