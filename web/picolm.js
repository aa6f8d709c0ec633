// picolm.js — run a Llama-architecture GGUF model in the browser.
//
//   import { PicoLM } from "./web/picolm.js";
//   const m = await PicoLM.load(urlOrFileOrBytes, { onProgress: p => console.log(p.loaded, p.total) });
//   for await (const piece of m.generate("Once upon a time", { maxTokens: 64, temperature: 0 })) out.textContent += piece;
//   m.unload();
//
// The engine (Go, compiled to wasm) runs in a dedicated Web Worker. A model is
// streamed straight into the engine's memory, where it is parsed in place, so
// it exists once in memory after loading. Models fetched by URL are kept in the
// Cache API; PicoLM.cached() lists them and PicoLM.deleteCached(url) drops one.
//
// Go runs one thread per wasm instance, so where the page is cross-origin
// isolated (SharedArrayBuffer) a model can be split over several Workers
// (opts.workers; by default one per core, navigator.hardwareConcurrency, as
// many as the model's attention divides over: its KV heads): each holds its
// rows of every weight matrix and its attention heads' q, k and v rows and
// KV cache. Per step of the forward pass (a layer's attention, then each
// group of matrix products) the lead worker, which runs the model, shares
// the activations with the others through a SharedArrayBuffer and Atomics
// (wasm/browser/worker/split_js.go). The model file passes through one
// SharedArrayBuffer that every worker copies its part out of, and is dropped
// after loading: the model and its KV cache still exist once.

const CACHE = "picolm-models-v1";
const BUILTIN = "builtin";

/** Largest model file the engine accepts (wasm32 memory); the worker reports the exact value. */
export let maxModelBytes = 3 * 2 ** 30 + 128 * 2 ** 20;

/** Bytes of the channel between the lead worker and each other worker (activations, replies). */
const CHANNEL_BYTES = 8 << 20;
const CH_STATE = 2, CH_RESP = 1, CH_FAILED = 2; // slots of the channel (see split_js.go)
const MAX_WORKERS = 16;

/** Whether a model can be split over Workers here (SharedArrayBuffer needs cross-origin isolation). */
export function canSplit() {
  return !!globalThis.crossOriginIsolated && typeof SharedArrayBuffer === "function" && typeof Atomics === "object";
}

/**
 * The Workers a model is split over by default, at most: one per core (navigator.hardwareConcurrency, up to 16)
 * where canSplit(), else 1. PicoLM.load uses no more than the model's attention divides over (its KV heads).
 */
export function defaultWorkers() {
  return canSplit() ? Math.max(1, Math.min(navigator.hardwareConcurrency || 1, MAX_WORKERS)) : 1;
}

// RELAXED_PROBE is a module whose one function computes
// i32x4.relaxed_dot_i8x16_i7x16_add_s (of three zero vectors): it validates
// only where the engine has relaxed SIMD.
const RELAXED_PROBE = new Uint8Array([
  0, 0x61, 0x73, 0x6d, 1, 0, 0, 0,
  1, 5, 1, 0x60, 0, 1, 0x7b, // type: () -> v128
  3, 2, 1, 0, // one function of that type
  10, 61, 1, 59, 0, // code: one body of 59 bytes, no locals
  0xfd, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // v128.const 0
  0xfd, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
  0xfd, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
  0xfd, 0x93, 2, // i32x4.relaxed_dot_i8x16_i7x16_add_s
  0x0b,
]);

/** The builds of the engine: "relaxed" (relaxed-SIMD kernels) and "simd128" (loads everywhere else). */
export const BUILDS = ["relaxed", "simd128"];

/**
 * The engine build this browser runs: "relaxed" where WebAssembly.validate
 * accepts a relaxed-SIMD module (Chromium, Firefox), else "simd128" (Safari
 * rejects any module with a relaxed op). Both compute the same bits.
 */
export function wasmBuild() {
  try {
    return WebAssembly.validate(RELAXED_PROBE) ? "relaxed" : "simd128";
  } catch {
    return "simd128";
  }
}

// buildFor is the build opts.build asks for (default wasmBuild()).
function buildFor(opts) {
  const b = opts.build ?? wasmBuild();
  if (!BUILDS.includes(b)) throw new PicoLMError(`build must be one of ${BUILDS.join(", ")}, got ${b}`);
  return b;
}

/** A loading error whose message is meant for people. */
export class PicoLMError extends Error {
  constructor(message) {
    super(message);
    this.name = "PicoLMError";
  }
}

function formatBytes(n) {
  if (n < 1000) return n + " B";
  const units = ["KB", "MB", "GB", "TB"];
  let u = -1;
  do { n /= 1000; u++; } while (n >= 1000 && u < units.length - 1);
  return (n < 10 ? n.toFixed(1) : n.toFixed(0)) + " " + units[u];
}

function tooLarge(name, size) {
  return new PicoLMError(`${name} is ${formatBytes(size)}: too large for the browser engine, which holds at most ` +
    `${formatBytes(maxModelBytes)} (a 32-bit wasm memory of 4 GiB, with room for the KV cache). Nothing was loaded.`);
}

// ownBuffer: a Uint8Array as an ArrayBuffer of its own (a view of part of a
// larger buffer is copied out of it); any other source as it is.
function ownBuffer(source) {
  if (!(source instanceof Uint8Array)) return source;
  if (source.byteOffset !== 0 || source.byteLength !== source.buffer.byteLength) source = source.slice();
  return source.buffer;
}

// bufferName is the name of a model given as an ArrayBuffer (opts.name or
// "model.gguf"); it throws tooLarge for a model the engine cannot hold.
function bufferName(buf, opts) {
  const name = opts.name || "model.gguf";
  if (buf.byteLength > maxModelBytes) throw tooLarge(name, buf.byteLength);
  return name;
}

// Engine is one Web Worker running the Go engine.
class Engine {
  constructor(workerURL, build) {
    // The worker loads the engine build named by ?wasm= (worker.js), and
    // says which one it runs (msg "build": a missing relaxed build falls
    // back to simd128).
    const url = workerURL ? new URL(workerURL, location.href) : new URL("./worker.js", import.meta.url);
    url.searchParams.set("wasm", build);
    this.build = build;
    this.worker = new Worker(url);
    this.nextId = 1;
    this.pending = new Map(); // id -> {resolve, reject, onToken}
    this.dead = null;
    this.ready = new Promise((resolve, reject) => { this._ready = { resolve, reject }; });
    this.worker.onmessage = (e) => this._onMessage(e.data);
    this.worker.onerror = (e) => this._die(e.message || "the engine worker failed");
    this.onDie = null; // a shard worker marks its channel failed, so the lead stops waiting for it
  }

  _die(message) {
    if (this.onDie) this.onDie();
    this.dead = new PicoLMError(message);
    this._ready.reject(this.dead);
    for (const p of this.pending.values()) p.reject(this.dead);
    this.pending.clear();
  }

  _onMessage(msg) {
    if (msg.type === "build") {
      this.build = msg.build;
      return;
    }
    if (msg.type === "ready") {
      maxModelBytes = msg.maxModelBytes;
      this._ready.resolve();
      return;
    }
    if (msg.type === "fatal") return this._die(msg.message);
    const p = this.pending.get(msg.id);
    if (!p) return;
    switch (msg.type) {
      case "token":
      case "progress":
        if (p.onToken) p.onToken(msg);
        return;
      case "error":
        this.pending.delete(msg.id);
        p.reject(new PicoLMError(msg.message));
        return;
      default: // ok, loaded, done, unloaded
        this.pending.delete(msg.id);
        p.resolve(msg);
    }
  }

  // request sends a message and resolves with the worker's final reply to it.
  async request(msg, transfer = [], onToken = null) {
    await this.ready;
    if (this.dead) throw this.dead;
    const id = this.nextId++;
    return this._send(id, msg, transfer, onToken).promise;
  }

  _send(id, msg, transfer, onToken) {
    let entry;
    const promise = new Promise((resolve, reject) => { entry = { resolve, reject, onToken }; });
    this.pending.set(id, entry);
    this.worker.postMessage({ ...msg, id }, transfer);
    return { id, promise };
  }

  post(msg) { this.worker.postMessage(msg); }

  terminate() {
    this.worker.terminate();
    this._die("the model was unloaded");
  }
}

async function openCache() {
  if (!globalThis.caches) return null; // not a secure context
  try { return await caches.open(CACHE); } catch { return null; }
}

function cacheKey(url) { return new URL(url, location.href).href; }

// fetchOK starts fetching url, aborted with opts.signal, and fails unless the
// response is OK: {resp, ctl}, ctl aborting the body's download.
async function fetchOK(url, opts) {
  const ctl = new AbortController();
  if (opts.signal) opts.signal.addEventListener("abort", () => ctl.abort(), { once: true });
  let resp;
  try {
    resp = await fetch(url, { signal: ctl.signal });
  } catch (e) {
    throw new PicoLMError(`could not fetch ${url}: ${e.message}`);
  }
  if (!resp.ok) throw new PicoLMError(`could not fetch ${url}: HTTP ${resp.status} ${resp.statusText}`);
  return { resp, ctl };
}

// openSource starts a download that is streamed into the worker (used when
// the Cache API is unavailable): {name, size, chunks}.
async function openSource(src, opts) {
  const url = cacheKey(String(src));
  const name = decodeURIComponent(new URL(url).pathname.split("/").pop() || url);
  let { resp, ctl } = await fetchOK(url, opts);
  let size = Number(resp.headers.get("content-length"));
  const encoded = resp.headers.get("content-encoding");
  if (!size || (encoded && encoded !== "identity")) {
    // Unknown length: the whole body must be read before the engine can
    // allocate it (this costs a second copy while loading).
    const blob = await resp.blob();
    size = blob.size;
    resp = new Response(blob);
  }
  if (size > maxModelBytes) {
    ctl.abort();
    throw tooLarge(name, size);
  }
  return { name, size, chunks: resp.body, fromCache: false };
}

// download stores url in the cache, reporting progress; the body streams to
// the cache's disk storage without being held in memory. It returns false
// when the cache cannot hold it (quota, private windows).
async function download(cache, url, name, opts) {
  const { resp, ctl } = await fetchOK(url, opts);
  const size = Number(resp.headers.get("content-length")) || 0;
  if (size > maxModelBytes) {
    ctl.abort();
    throw tooLarge(name, size);
  }
  const started = performance.now();
  let loaded = 0;
  const counted = resp.body.pipeThrough(new TransformStream({
    transform(chunk, out) {
      loaded += chunk.byteLength;
      if (loaded > maxModelBytes) throw tooLarge(name, loaded);
      if (opts.onProgress) {
        const secs = (performance.now() - started) / 1000;
        opts.onProgress({ loaded, total: size || loaded, fraction: size ? loaded / size : 0, bytesPerSec: secs > 0 ? loaded / secs : 0, fromCache: false, name });
      }
      out.enqueue(chunk);
    },
  }));
  const headers = { "content-type": "application/octet-stream", "x-picolm-cached": new Date().toISOString() };
  try {
    await cache.put(url, new Response(counted, { headers }));
    return true;
  } catch (e) {
    await cache.delete(url).catch(() => {});
    if (e instanceof PicoLMError || (opts.signal && opts.signal.aborted)) throw e;
    return false; // the cache refused it (quota): the caller streams instead
  }
}

// loadBlob hands a Blob to the worker, which reads it in slices.
async function loadBlob(engine, blob, name, fromCache, opts) {
  if (blob.size > maxModelBytes) throw tooLarge(name, blob.size);
  const started = performance.now();
  const onMsg = (m) => {
    if (!opts.onProgress) return;
    const secs = (performance.now() - started) / 1000;
    opts.onProgress({ loaded: m.loaded, total: blob.size, fraction: blob.size ? m.loaded / blob.size : 1, bytesPerSec: secs > 0 ? m.loaded / secs : 0, fromCache, name });
  };
  return engine.request({ type: "blob", name, blob }, [], onMsg);
}

async function* iterate(stream) {
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    reader.releaseLock();
  }
}

// stream sends a source into the engine chunk by chunk: each chunk is
// transferred to the worker, copied into the Go buffer and dropped.
async function stream(engine, s, opts) {
  await engine.request({ type: "begin", name: s.name, size: s.size });
  const started = performance.now();
  let loaded = 0;
  const progress = () => {
    if (!opts.onProgress) return;
    const secs = (performance.now() - started) / 1000;
    opts.onProgress({ loaded, total: s.size, fraction: s.size ? loaded / s.size : 1, bytesPerSec: secs > 0 ? loaded / secs : 0, fromCache: s.fromCache, name: s.name });
  };
  progress();
  const CHUNK = 8 << 20;
  const WINDOW = 16 << 20; // bytes in flight to the worker before waiting for it
  let inflight = 0;
  for await (let chunk of iterate(s.chunks)) {
    if (opts.signal && opts.signal.aborted) throw new PicoLMError("loading was cancelled");
    for (let off = 0; off < chunk.byteLength; off += CHUNK) {
      // A copy of the piece (at most 8 MiB) is transferred; the original
      // chunk is dropped after.
      const piece = chunk.slice(off, Math.min(off + CHUNK, chunk.byteLength));
      engine.post({ type: "chunk", id: 0, data: piece.buffer }, [piece.buffer]);
      loaded += piece.byteLength;
      inflight += piece.byteLength;
    }
    chunk = null;
    if (inflight >= WINDOW) {
      // Backpressure: the worker answers once it has copied everything sent
      // so far, so at most WINDOW bytes wait in transit.
      await engine.request({ type: "sync" });
      inflight = 0;
    }
    progress();
  }
  const r = await engine.request({ type: "end" });
  return r;
}

// splitSource opens a source for a split load: {name, size, fromCache, fill(u8)}
// where fill copies the file into u8 (a view of a SharedArrayBuffer),
// reporting progress.
async function splitSource(source, opts) {
  const progress = (name, size, fromCache) => {
    const started = performance.now();
    return (loaded) => {
      if (!opts.onProgress) return;
      const secs = (performance.now() - started) / 1000;
      opts.onProgress({ loaded, total: size, fraction: size ? loaded / size : 1, bytesPerSec: secs > 0 ? loaded / secs : 0, fromCache, name });
    };
  };
  const fromBlob = (blob, name, fromCache) => ({
    name, size: blob.size, fromCache,
    async fill(u8) {
      const report = progress(name, blob.size, fromCache);
      const STEP = 8 << 20;
      for (let off = 0; off < blob.size; off += STEP) {
        if (opts.signal && opts.signal.aborted) throw new PicoLMError("loading was cancelled");
        const end = Math.min(off + STEP, blob.size);
        u8.set(new Uint8Array(await blob.slice(off, end).arrayBuffer()), off);
        report(end);
      }
    },
  });
  source = ownBuffer(source);
  if (source instanceof ArrayBuffer) {
    // Taken from the caller as with one worker (detached there), copied into
    // the shared buffer, then dropped.
    const name = bufferName(source, opts);
    let buf = structuredClone(source, { transfer: [source] });
    return { name, size: buf.byteLength, fromCache: false, async fill(u8) { u8.set(new Uint8Array(buf)); buf = null; } };
  }
  if (source instanceof Blob) return fromBlob(source, source.name || "model.gguf", false);
  const url = cacheKey(String(source));
  const name = decodeURIComponent(new URL(url).pathname.split("/").pop() || url);
  const cache = opts.cache === false ? null : await openCache();
  if (cache) {
    let hit = await cache.match(url);
    const fromCache = !!hit;
    if (!hit && (await download(cache, url, name, opts))) hit = await cache.match(url);
    if (hit) return { ...fromBlob(await hit.blob(), name, fromCache), url, cache };
  }
  const s = await openSource(source, opts);
  return {
    name, size: s.size, fromCache: false,
    async fill(u8) {
      const report = progress(name, s.size, false);
      let loaded = 0;
      for await (const chunk of iterate(s.chunks)) {
        if (opts.signal && opts.signal.aborted) throw new PicoLMError("loading was cancelled");
        if (loaded + chunk.byteLength > s.size) throw new PicoLMError(`${name} is longer than the announced ${s.size} bytes`);
        u8.set(chunk, loaded);
        loaded += chunk.byteLength;
        report(loaded);
      }
      if (loaded !== s.size) throw new PicoLMError(`${name} ended after ${loaded} of ${s.size} bytes`);
    },
  };
}

// loadSplit loads a model split over the lead engine and n-1 new shard
// workers (auto: at most n, as many as the model's attention divides over):
// resolves {loaded, shards}. On failure the shards are terminated.
async function loadSplit(engine, source, opts, n, auto) {
  const src = await splitSource(source, opts);
  if (src.size > maxModelBytes) throw tooLarge(src.name, src.size);
  const shards = [];
  try {
    let model = new SharedArrayBuffer(src.size);
    await src.fill(new Uint8Array(model));
    if (auto) {
      const plan = await engine.request({ type: "plan", name: src.name, model, size: src.size });
      n = Math.max(1, Math.min(n, plan.maxWorkers));
    }
    const channels = [];
    for (let k = 1; k < n; k++) {
      const channel = new SharedArrayBuffer(CHANNEL_BYTES);
      const shard = new Engine(opts.workerURL, engine.build);
      shard.onDie = () => {
        const i32 = new Int32Array(channel);
        Atomics.store(i32, CH_STATE, CH_FAILED);
        Atomics.notify(i32, CH_STATE);
        Atomics.notify(i32, CH_RESP);
      };
      channels.push(channel);
      shards.push(shard);
    }
    await Promise.all(shards.map((s) => s.ready));
    shards.forEach((s, i) => s.post({ type: "shard", id: 0, model, size: src.size, part: i + 1, parts: n, channel: channels[i] }));
    const loaded = await engine.request({ type: "loadSplit", name: src.name, model, size: src.size, channels });
    model = null; // every worker has its part: the file's buffer can go
    return { loaded, shards };
  } catch (e) {
    for (const s of shards) s.terminate();
    if (src.cache && src.url) await src.cache.delete(src.url).catch(() => {}); // do not keep a file the engine refused
    throw e;
  }
}

// workersFor is the Workers a load asks for: {n, auto} (auto: the default,
// capped by the model once its header is read).
function workersFor(source, opts) {
  const auto = opts.workers == null;
  const n = auto ? defaultWorkers() : opts.workers;
  if (!Number.isInteger(n) || n < 1 || n > MAX_WORKERS) throw new PicoLMError(`workers must be an integer from 1 to ${MAX_WORKERS}, got ${n}`);
  // The built-in model is part of the engine's binary: it is not split.
  if (source === BUILTIN || source == null || !canSplit()) return { n: 1, auto };
  return { n, auto };
}

/** A loaded model running in its own Web Worker. */
export class PicoLM {
  constructor(engine, loaded, shards = []) {
    this._engine = engine;
    this._shards = shards;
    this._set(loaded);
  }

  /** The engine build the workers run: "relaxed" or "simd128" (see wasmBuild). */
  get build() { return this._engine.build; }

  _set(loaded) {
    /** Model description: name, arch, bytes, params, dim, layers, vocabSize, context, fileType, chatTemplate, builtIn, workers. */
    this.info = loaded.info;
    /** Worker memory after loading: {wasmBytes, jsHeapBytes}, and with several workers {shardWasmBytes, totalWasmBytes, workers}. */
    this.memory = loaded.memory;
  }

  /**
   * Load a model: a URL (fetched, cached), a File or Blob (streamed), an
   * ArrayBuffer or Uint8Array (transferred to the worker: the caller's buffer
   * is detached), or nothing / "builtin" for the built-in stories260K.
   * opts: {onProgress({loaded, total, fraction, bytesPerSec, fromCache}), signal, cache: true, workerURL,
   * workers: the Workers the model is split over (default defaultWorkers(), one per core, capped at the model's KV
   * heads; 1 where the page is not cross-origin isolated and for the built-in model; info.workers says how many),
   * build: "relaxed" or "simd128" (default wasmBuild())}.
   */
  static async load(source = BUILTIN, opts = {}) {
    const engine = new Engine(opts.workerURL, buildFor(opts));
    try {
      const { loaded, shards } = await PicoLM._loadInto(engine, source, opts);
      return new PicoLM(engine, loaded, shards);
    } catch (e) {
      engine.terminate();
      throw e;
    }
  }

  /** Replace the model in this worker by another (same sources as load). On failure no model is loaded. */
  async load(source = BUILTIN, opts = {}) {
    this.info = null;
    for (const s of this._shards) s.terminate();
    this._shards = [];
    const { loaded, shards } = await PicoLM._loadInto(this._engine, source, opts);
    this._shards = shards;
    this._set(loaded);
    return this;
  }

  static async _loadInto(engine, source, opts) {
    const { n, auto } = workersFor(source, opts);
    await engine.ready;
    if (n > 1) return loadSplit(engine, source, opts, n, auto);
    if (engine.dead) throw engine.dead;
    return { loaded: await PicoLM._loadOne(engine, source, opts), shards: [] };
  }

  static async _loadOne(engine, source, opts) {
    if (source === BUILTIN || source == null) return engine.request({ type: "load", builtin: true });
    source = ownBuffer(source);
    if (source instanceof ArrayBuffer) {
      const name = bufferName(source, opts);
      return engine.request({ type: "load", name, bytes: source }, [source]);
    }
    if (source instanceof Blob) return loadBlob(engine, source, source.name || "model.gguf", false, opts);
    const url = cacheKey(String(source));
    const name = decodeURIComponent(new URL(url).pathname.split("/").pop() || url);
    const cache = opts.cache === false ? null : await openCache();
    if (!cache) {
      // No Cache API (not a secure context, or turned off): stream the
      // download into the worker.
      const s = await openSource(source, opts);
      return stream(engine, s, opts);
    }
    let hit = await cache.match(url);
    const fromCache = !!hit;
    if (!hit) {
      if (!(await download(cache, url, name, opts))) return stream(engine, await openSource(source, opts), opts);
      hit = await cache.match(url);
      if (!hit) throw new PicoLMError(`could not store ${url} in the browser's cache`);
    }
    try {
      // A blob of a cache entry is a handle to the stored bytes: the worker
      // reads it in slices straight into the engine's memory.
      return await loadBlob(engine, await hit.blob(), name, fromCache, opts);
    } catch (e) {
      await cache.delete(url).catch(() => {}); // do not keep a file the engine refused
      throw e;
    }
  }

  /**
   * Generate with callbacks; resolves with the stats
   * {prompt, promptTokens, cachedTokens, prefillMs, generated, decodeMs, tokensPerSec, stop, memory}, and for a model
   * split over Workers split: {prefill, decode}, each {syncs, attentionSyncs, leadAttentionMs, leadProductsMs, leadSendMs,
   * leadWaitMs, leadEmitMs, leadOtherMs, leadSleeps, shardBusyMs: [], shardAttentionMs: [], shardSleeps: []} (the
   * synchronisations, attention ones of them; the lead's time on its own heads' attention, its own rows of the other
   * products, sending requests, waiting for the other Workers, posting tokens, and the rest; its sleeps in
   * Atomics.wait; each other Worker's time computing, attention of it, its sleeps).
   * input: a prompt string, or an array of chat messages [{role, content}] formatted with the model's chat template
   * (a plain "User: ..." / "Assistant:" transcript for a model without one).
   * opts: {maxTokens: 256, temperature: 0.8, topP: 0.9, topK: 0, seed: 42, json: false, signal, onToken({text, count, tokensPerSec})}.
   */
  async run(input, opts = {}) {
    const e = this._engine;
    await e.ready;
    if (e.dead) throw e.dead;
    const msg = { type: "generate", maxTokens: opts.maxTokens ?? 256, temperature: opts.temperature ?? 0.8, topP: opts.topP ?? 0.9, topK: opts.topK ?? 0, seed: opts.seed ?? 42, json: !!opts.json };
    if (Array.isArray(input)) msg.messages = input.map((m) => ({ role: String(m.role), content: String(m.content) }));
    else msg.prompt = String(input);
    const id = e.nextId++;
    const { promise } = e._send(id, msg, [], opts.onToken);
    const stop = () => e.post({ type: "stop", id });
    if (opts.signal) {
      if (opts.signal.aborted) stop();
      opts.signal.addEventListener("abort", stop, { once: true });
    }
    this._stop = stop;
    try {
      const done = await promise;
      return { ...done.stats, memory: done.memory };
    } finally {
      if (this._stop === stop) this._stop = null;
      if (opts.signal) opts.signal.removeEventListener("abort", stop);
    }
  }

  /**
   * Generate as an async iterator of text pieces. Breaking out of the loop or
   * aborting opts.signal stops the generation. After the loop, the
   * iterator's .stats holds the run's stats.
   */
  generate(input, opts = {}) {
    const queue = [];
    let wake = null, finished = false, failure = null;
    const ctl = new AbortController();
    if (opts.signal) opts.signal.addEventListener("abort", () => ctl.abort(), { once: true });
    const it = {
      stats: null,
      [Symbol.asyncIterator]() { return this; },
      async next() {
        for (;;) {
          if (queue.length) return { value: queue.shift(), done: false };
          if (failure) throw failure;
          if (finished) return { value: undefined, done: true };
          await new Promise((r) => (wake = r));
        }
      },
      async return() {
        ctl.abort();
        await done.catch(() => {});
        return { value: undefined, done: true };
      },
    };
    const poke = () => { if (wake) { const w = wake; wake = null; w(); } };
    const done = this.run(input, { ...opts, signal: ctl.signal, onToken: (t) => { if (t.text) queue.push(t.text); poke(); } })
      .then((s) => { it.stats = s; finished = true; poke(); }, (e) => { failure = e; poke(); });
    return it;
  }

  /** Stop the running generation after its current token. */
  stop() { if (this._stop) this._stop(); }

  /** Terminate the workers and free the model's memory. */
  unload() {
    for (const s of this._shards) s.terminate();
    this._shards = [];
    this._engine.terminate();
  }

  /** Models in the cache: [{url, bytes, cachedAt}]. */
  static async cached() {
    const cache = await openCache();
    if (!cache) return [];
    const out = [];
    for (const req of await cache.keys()) {
      const r = await cache.match(req);
      const bytes = Number(r && r.headers.get("content-length")) || (r ? (await r.blob()).size : 0);
      out.push({ url: req.url, bytes, cachedAt: r && r.headers.get("x-picolm-cached") });
    }
    return out;
  }

  /** Remove a model from the cache; resolves true if it was there. */
  static async deleteCached(url) {
    const cache = await openCache();
    return cache ? cache.delete(cacheKey(url)) : false;
  }

  static formatBytes(n) { return formatBytes(n); }
}

export default PicoLM;
