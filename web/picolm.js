// picolm.js — run a Llama-architecture GGUF model in the browser.
//
//   import { PicoLM } from "./web/picolm.js";
//   const m = await PicoLM.load(urlOrFileOrBytes, { onProgress: p => console.log(p.loaded, p.total) });
//   for await (const piece of m.generate("Once upon a time", { maxTokens: 64, temperature: 0 })) out.textContent += piece;
//   const r = await m.chat.completions.create({ messages: [{ role: "user", content: "Hi" }] }); // OpenAI's shapes (web/openai.js)
//   const e = await m.embeddings.create({ input: ["Once upon a time"] });                     // tools, logprobs too
//   m.unload();
//
// The engine (Go, compiled to wasm) runs in a dedicated Web Worker. A model is
// streamed straight into the engine's memory, where it is parsed in place, so
// it exists once in memory after loading. Models fetched by URL are kept in the
// Origin Private File System (web/cache.js; the Cache API where the browser has
// no OPFS); PicoLM.cached() lists them and PicoLM.deleteCached(url) drops one.
// A download into OPFS runs several ranged connections at once
// (web/store-worker.js) and resumes where it stopped after a dropped
// connection or a reload; it is checked by size and GGUF header before it
// counts as stored. m.saveState(name) and m.restoreState(name) keep a
// session's KV state in OPFS (the CLI's --cache file: bound to the model,
// checksummed).
//
// Go runs one thread per wasm instance, so where the page is cross-origin
// isolated (SharedArrayBuffer) a model can be split over several Workers
// (opts.workers; by default one per core, navigator.hardwareConcurrency, as
// many as the model's attention divides over: its KV heads): each holds its
// rows of every weight matrix and its attention heads' q, k and v rows and
// KV cache. Every worker runs the forward pass over its rows, and at each
// point where it needs the others' results (four per layer) the workers
// exchange them through one SharedArrayBuffer and Atomics
// (wasm/browser/worker/split_js.go); the lead runs the session. No Worker holds the whole file: the
// lead plans the split from the files' headers (loadParts), and each Worker
// reads only its own rows by HTTP Range requests, Blob slices or slices of
// the cached OPFS file (wasm/browser/worker/parts_js.go), so a model over
// one wasm memory's 4 GiB runs when each part fits. A model given as bytes,
// or on a server without Range support, passes through one
// SharedArrayBuffer that every worker copies its part out of. Either way
// the model and its KV cache exist once.
//
// A model split into shards by llama.cpp's gguf-split (NAME-00001-of-00003.gguf,
// ...) loads from its first shard's URL (the others are fetched by name beside
// it) or from all its files at once (picked or dropped together): the shards
// are laid end to end in the engine's memory and joined there (openShards).

import { openModelStore, formatBytes, checkGGUF, storageInfo, writeState, readState, deleteState, listStates } from "./cache.js";

import { PicoLMError, AbortError, BadRequestError, ModelLoadError, fromWorker } from "./errors.js";
import { Chat, Completions, Embeddings } from "./openai.js";

export { PicoLMError, BadRequestError, ContextFullError, ModelLoadError, AbortError, StateError } from "./errors.js";
export { Chat, ChatCompletions, Completions, Embeddings } from "./openai.js";

const CACHE = "picolm-models-v1";
const BUILTIN = "builtin";

/** Largest model file the engine accepts (wasm32 memory); the worker reports the exact value. */
export let maxModelBytes = 3 * 2 ** 30 + 128 * 2 ** 20;

/** Bytes of the channel between the lead worker and each other worker (its load, its counters). */
const CHANNEL_BYTES = 4 << 10;
const CH_STATE = 2, CH_FAILED = 2; // slots of the channel (see split_js.go)
/** Bytes of a split model's mesh, which all its workers share, for n of them: 2 MiB per worker and parity (its values of an exchange). */
const meshBytes = (n) => 1024 + 2 * n * (2 << 20);
const MESH_FAILED = 1, MESH_ARRIVALS = 0; // slots of the mesh
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

// RELAXED_PROBE is a module of two functions that compute with relaxed
// SIMD what the relaxed build needs to hold: "dot" is lane 0 of
// i32x4.relaxed_dot_i8x16_i7x16_add_s(ones, ones, zeros), 4 where the engine
// implements it right (Node 20's old implementation gives 8); "madd" is lane
// 0 of f32x4.relaxed_madd(a, a, c) with a = 1+2^-12 and c = -(1+2^-11): a·a
// is 1 + 2^-11 + 2^-24, so the result is 2^-24 where the multiply-add is
// fused and 0 where the product is rounded first (the relaxed build's
// kernels reproduce ggml's fused multiply-adds with it). The module
// validates only where the engine has relaxed SIMD.
const RELAXED_PROBE = (() => {
  const v128 = (bytes) => [0xfd, 12, ...bytes]; // v128.const
  const f32x4 = (bits) => v128([0, 1, 2, 3].flatMap(() => [bits & 0xff, (bits >>> 8) & 0xff, (bits >>> 16) & 0xff, bits >>> 24]));
  const dot = [0, ...v128(new Array(16).fill(1)), ...v128(new Array(16).fill(1)), ...v128(new Array(16).fill(0)),
    0xfd, 0x93, 2, // i32x4.relaxed_dot_i8x16_i7x16_add_s
    0xfd, 27, 0, 0x0b]; // i32x4.extract_lane 0; end
  const madd = [0, ...f32x4(0x3f800800), ...f32x4(0x3f800800), ...f32x4(0xbf801000),
    0xfd, 0x85, 2, // f32x4.relaxed_madd
    0xfd, 31, 0, 0x0b]; // f32x4.extract_lane 0; end
  const code = [2, dot.length, ...dot, madd.length, ...madd];
  return new Uint8Array([
    0, 0x61, 0x73, 0x6d, 1, 0, 0, 0,
    1, 9, 2, 0x60, 0, 1, 0x7f, 0x60, 0, 1, 0x7d, // types: () -> i32, () -> f32
    3, 3, 2, 0, 1, // two functions
    7, 14, 2, 3, 0x64, 0x6f, 0x74, 0, 0, 4, 0x6d, 0x61, 0x64, 0x64, 0, 1, // exports "dot", "madd"
    10, code.length, ...code,
  ]);
})();

/**
 * What this engine's relaxed SIMD computes (see RELAXED_PROBE): {dot, madd},
 * or null where it has no relaxed SIMD.
 */
export function relaxedProbe() {
  try {
    if (!WebAssembly.validate(RELAXED_PROBE)) return null;
    const { dot, madd } = new WebAssembly.Instance(new WebAssembly.Module(RELAXED_PROBE)).exports;
    return { dot: dot(), madd: madd() };
  } catch {
    return null;
  }
}

/**
 * The build for what relaxedProbe() found: "relaxed" where the relaxed dot
 * is right and relaxed_madd fused, else "simd128".
 */
export function buildForProbe(probe) {
  return probe && probe.dot === 4 && probe.madd === 2 ** -24 ? "relaxed" : "simd128";
}

/** The builds of the engine: "relaxed" (relaxed-SIMD kernels) and "simd128" (loads everywhere else). */
export const BUILDS = ["relaxed", "simd128"];

/**
 * The engine build this browser runs: "relaxed" where the engine has relaxed
 * SIMD and computes the probe right (Chromium and Firefox on x86 with FMA or
 * on Arm), else "simd128" (Safari rejects any module with a relaxed op).
 * Both compute the same bits.
 */
export function wasmBuild() {
  return buildForProbe(relaxedProbe());
}

// buildFor is the build opts.build asks for (default wasmBuild()).
function buildFor(opts) {
  const b = opts.build ?? wasmBuild();
  if (!BUILDS.includes(b)) throw new BadRequestError(`build must be one of ${BUILDS.join(", ")}, got ${b}`, "build");
  return b;
}

function tooLarge(name, size) {
  const split = canSplit()
    ? "split over several Workers (opts.workers), each reads only its rows of it, and the lead says before any download what each would need"
    : "a model can be split over several Workers, each holding its rows of it, only on a cross-origin isolated page (SharedArrayBuffer)";
  const e = new PicoLMError(`${name} is ${formatBytes(size)}: too large for one Worker, whose engine holds at most ` +
    `${formatBytes(maxModelBytes)} of model in one buffer (a 32-bit wasm memory of 4 GiB, with room for the KV cache); ${split}. Nothing was loaded.`);
  e.tooLarge = true; // _loadOne plans it by parts instead
  return e;
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
  constructor(workerURL, build, part = 0) {
    // The worker loads the engine build named by ?wasm= (worker.js), and
    // says which one it runs (msg "build": a missing relaxed build falls
    // back to simd128).
    const url = workerURL ? new URL(workerURL, location.href) : new URL("./worker.js", import.meta.url);
    url.searchParams.set("wasm", build);
    if (part) url.searchParams.set("part", String(part)); // names a shard Worker (its requests' Referer)
    this.build = build;
    this.worker = new Worker(url);
    this.nextId = 1;
    this.pending = new Map(); // id -> {resolve, reject, onToken}
    this.dead = null;
    this.ready = new Promise((resolve, reject) => { this._ready = { resolve, reject }; });
    this.ready.catch(() => {}); // a worker terminated before it started is not an unhandled rejection; awaiting ready still throws
    this.worker.onmessage = (e) => this._onMessage(e.data);
    this.worker.onerror = (e) => this._die(e.message || "the engine worker failed");
    this.onDie = null; // a shard worker marks its channel failed, so the lead stops waiting for it
  }

  _die(message, code = "engine") {
    if (this.onDie) this.onDie();
    this.dead = new PicoLMError(message, code);
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
        p.reject(fromWorker(msg));
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
    this._die("the model was unloaded", "no_model");
  }
}

// openCache opens the store of downloaded models: the Origin Private File
// System where the browser has it (web/cache.js: one file per model on disk),
// else the Cache API; null in neither (not a secure context).
async function openCache() {
  const store = await openModelStore();
  return store || openLegacyCache();
}

// openLegacyCache opens the Cache API's store (where models were kept before
// OPFS: cached() still lists them, deleteCached deletes them).
async function openLegacyCache() {
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
// the cache's disk storage without being held in memory. Into OPFS it runs
// opts.connections (default 4) ranged requests at once and resumes a partial
// download (ModelStore.download); into the Cache API it is one request. The
// bytes are checked by size and GGUF header before they count as stored. It
// refuses a file over limit (opts of a load by parts pass a larger one). It
// returns false when the Cache API cannot hold it (quota, private windows);
// OPFS's quota error is thrown, naming the sizes.
async function download(cache, url, name, opts, limit = maxModelBytes) {
  if (opts.connections != null && !(Number.isInteger(opts.connections) && opts.connections >= 1 && opts.connections <= 16)) {
    throw new BadRequestError(`connections must be an integer from 1 to 16, got ${opts.connections}`, "connections");
  }
  if (opts.chunkBytes != null && !(Number.isSafeInteger(opts.chunkBytes) && opts.chunkBytes >= 64 << 10)) {
    throw new BadRequestError(`chunkBytes must be an integer of at least 65536, got ${opts.chunkBytes}`, "chunkBytes");
  }
  if (typeof cache.download === "function") {
    storageInfo(true).catch(() => {}); // ask for persistent storage (navigator.storage.persist) once models are kept
    const r = await cache.download(url, {
      name, signal: opts.signal, onProgress: opts.onProgress, connections: opts.connections, chunkBytes: opts.chunkBytes,
      workerURL: opts.storeWorkerURL, maxBytes: limit, tooLarge: (size) => tooLarge(name, size),
    });
    if (r) return true; // else no sync access handles here: one request into the store's put
  }
  const { resp, ctl } = await fetchOK(url, opts);
  const size = Number(resp.headers.get("content-length")) || 0;
  if (size > limit) {
    ctl.abort();
    throw tooLarge(name, size);
  }
  const started = performance.now();
  let loaded = 0;
  const counted = resp.body.pipeThrough(new TransformStream({
    transform(chunk, out) {
      loaded += chunk.byteLength;
      if (loaded > limit) throw tooLarge(name, loaded);
      if (opts.onProgress) {
        const secs = (performance.now() - started) / 1000;
        opts.onProgress({ loaded, total: size || loaded, fraction: size ? loaded / size : 0, bytesPerSec: secs > 0 ? loaded / secs : 0, fromCache: false, name, ranged: false, connections: 1, resumed: 0 });
      }
      out.enqueue(chunk);
    },
  }));
  const headers = { "content-type": "application/octet-stream", "x-picolm-cached": new Date().toISOString() };
  try {
    await cache.put(url, new Response(counted, { headers }));
  } catch (e) {
    await cache.delete(url).catch(() => {});
    if (e instanceof PicoLMError || (opts.signal && opts.signal.aborted)) throw e;
    return false; // the cache refused it (quota): the caller streams instead
  }
  try {
    const hit = await cache.match(url);
    const blob = hit && (await hit.blob());
    if (!blob) return false;
    const encoded = resp.headers.get("content-encoding");
    if (size && (!encoded || encoded === "identity") && blob.size !== size) throw new ModelLoadError(`${name}: ${blob.size} bytes were stored, the server announced ${size}. Nothing was stored.`);
    await checkGGUF(blob, name);
  } catch (e) {
    await cache.delete(url).catch(() => {});
    throw e;
  }
  return true;
}

// SHARD_TAIL matches the end of a shard's name, "-00001-of-00003.gguf"
// (llama_split_path's "%s-%05d-of-%05d.gguf", numbered from 1).
const SHARD_TAIL = /-(\d{5})-of-(\d{5})\.gguf$/;
const MAX_SHARDS = 65535; // split.count is a u16

function shardTail(no, count) {
  return `-${String(no).padStart(5, "0")}-of-${String(count).padStart(5, "0")}.gguf`;
}

// parseShardName splits a shard's name: {prefix, no (from 1), count}, or null.
function parseShardName(name) {
  const m = SHARD_TAIL.exec(name);
  if (!m) return null;
  const no = Number(m[1]), count = Number(m[2]);
  const prefix = name.slice(0, m.index);
  return prefix && no >= 1 && no <= count && count <= MAX_SHARDS ? { prefix, no, count } : null;
}

function baseName(url) {
  return decodeURIComponent(new URL(url).pathname.split("/").pop() || url);
}

// shardParts returns the shards a source names, in order, as
// [{name, url} or {name, blob}]: for a URL whose name is a shard's (of 2 or
// more), every shard's URL beside it; for several Files, Blobs (with names)
// or URLs, those, checked to be every shard of one split model. null for
// any other source (one file).
function shardParts(source) {
  if (typeof source === "string" || source instanceof URL) {
    const url = new URL(String(source), location.href);
    const p = parseShardName(baseName(url.href));
    if (!p || p.count < 2) return null;
    // The tail is ASCII: it ends the raw (percent-encoded) path too.
    const stem = url.pathname.slice(0, url.pathname.length - shardTail(1, 1).length);
    return Array.from({ length: p.count }, (_, i) => {
      const u = new URL(url.href);
      u.pathname = stem + shardTail(i + 1, p.count);
      return { prefix: p.prefix, no: i + 1, count: p.count, name: p.prefix + shardTail(i + 1, p.count), url: u.href };
    });
  }
  const list = Array.isArray(source) ? source : (typeof FileList !== "undefined" && source instanceof FileList) ? Array.from(source) : null;
  if (!list || list.length < 2) return null;
  const parts = list.map((item) => {
    const isBlob = item instanceof Blob;
    if (!isBlob && typeof item !== "string" && !(item instanceof URL)) throw new PicoLMError("the shards of a split model are given as Files (or Blobs with names) or URLs");
    const name = isBlob ? (item.name || "") : baseName(cacheKey(String(item)));
    const p = parseShardName(name);
    if (!p) throw new PicoLMError(`${name || "a Blob without a name"} is not named as a shard of a split model (NAME-00001-of-00003.gguf): give one model file, or every shard of one split model`);
    return { ...p, name, ...(isBlob ? { blob: item } : { url: cacheKey(String(item)) }) };
  });
  const first = parts[0];
  const byNo = new Map();
  for (const q of parts) {
    if (q.prefix !== first.prefix || q.count !== first.count) throw new PicoLMError(`${first.name} and ${q.name} are not shards of the same split model`);
    if (byNo.has(q.no)) throw new PicoLMError(`shard ${q.no} of ${q.count} is given twice (${byNo.get(q.no).name})`);
    byNo.set(q.no, q);
  }
  const missing = [];
  for (let i = 1; i <= first.count; i++) if (!byNo.has(i)) missing.push(first.prefix + shardTail(i, first.count));
  if (missing.length) throw missingShards(missing, first.count, first.prefix);
  return [...byNo.keys()].sort((a, b) => a - b).map((k) => byNo.get(k));
}

function missingShards(names, count, prefix, unchecked = false) {
  const more = names.length > 4 ? ` and ${names.length - 4} more` : unchecked ? " (and maybe more: the rest were not checked)" : "";
  return new PicoLMError(`missing shard${names.length > 1 ? "s" : ""}: ${names.slice(0, 4).join(", ")}${more} of the ${count} shards of ${prefix}. Nothing was loaded.`);
}

// openShards opens the shards of a split GGUF that source names (see
// shardParts): null for one file, else {name, names, sizes, blobs, size,
// fromCache, urls, cache}, every shard a Blob, downloads kept in the cache
// as with one file. Every shard is checked to exist (a HEAD request for one
// not cached) and the total size to fit before anything is downloaded.
async function openShards(source, opts) {
  const parts = shardParts(source);
  if (!parts) return null;
  const count = parts.length, prefix = parts[0].prefix, name = parts[0].name;
  const cache = opts.cache === false ? null : await openCache();
  const missing = [];
  let total = 0, unchecked = false;
  for (const p of parts) {
    if (p.blob) { total += p.blob.size; continue; }
    const hit = cache && (await cache.match(p.url));
    if (hit) { p.blob = await hit.blob(); p.cached = true; total += p.blob.size; continue; }
    if (missing.length >= 4) { unchecked = true; break; } // enough to name
    let resp = null;
    try { resp = await fetch(p.url, { method: "HEAD", signal: opts.signal }); } catch { /* the download says why */ }
    if (resp && (resp.status === 404 || resp.status === 410)) missing.push(p.name);
    else if (resp && resp.ok) total += Number(resp.headers.get("content-length")) || 0;
  }
  if (missing.length) throw missingShards(missing, count, prefix, unchecked);
  if (total > maxModelBytes) throw tooLarge(`${name} (${count} shards)`, total);
  let done = 0;
  const partOpts = {
    ...opts,
    onProgress: opts.onProgress && ((q) => opts.onProgress({ ...q, loaded: done + q.loaded, total: Math.max(total, done + q.total), fraction: total ? (done + q.loaded) / total : 0, name })),
  };
  try {
    for (const p of parts) {
      if (!p.blob) {
        let hit = null;
        if (cache && (await download(cache, p.url, p.name, partOpts))) hit = await cache.match(p.url);
        p.blob = hit ? await hit.blob() : await (await fetchOK(p.url, opts)).resp.blob();
        p.fetched = true;
      }
      done += p.blob.size;
    }
  } catch (e) {
    // A shard refused (its header, a quota): the shards downloaded for this set are not kept either.
    if (cache && !(opts.signal && opts.signal.aborted)) for (const p of parts) if (p.fetched) await cache.delete(p.url).catch(() => {});
    throw e;
  }
  const sizes = parts.map((p) => p.blob.size);
  const size = sizes.reduce((a, b) => a + b, 0);
  if (size > maxModelBytes) throw tooLarge(`${name} (${count} shards)`, size);
  return {
    name, names: parts.map((p) => p.name), sizes, blobs: parts.map((p) => p.blob), size,
    fromCache: parts.every((p) => p.cached), urls: parts.filter((p) => p.url).map((p) => p.url), cache,
  };
}

// loadShards hands a split GGUF's shards (openShards) to the worker, which
// reads them one after the other into one buffer.
async function loadShards(engine, set, opts) {
  const started = performance.now();
  const onMsg = (m) => {
    if (!opts.onProgress) return;
    const secs = (performance.now() - started) / 1000;
    opts.onProgress({ loaded: m.loaded, total: set.size, fraction: set.size ? m.loaded / set.size : 1, bytesPerSec: secs > 0 ? m.loaded / secs : 0, fromCache: set.fromCache, name: set.name });
  };
  try {
    return await engine.request({ type: "blob", name: set.name, blobs: set.blobs, names: set.names }, [], onMsg);
  } catch (e) {
    await forgetShards(set);
    throw e;
  }
}

// forgetShards drops a refused split model's shards from the cache.
async function forgetShards(set) {
  if (set && set.cache) for (const u of set.urls) await set.cache.delete(u).catch(() => {});
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
  const set = await openShards(source, opts);
  if (set) {
    return {
      name: set.name, size: set.size, sizes: set.sizes, names: set.names, fromCache: set.fromCache, set,
      async fill(u8) {
        let off = 0;
        for (const [i, blob] of set.blobs.entries()) {
          await fromBlob(blob, set.names[i], set.fromCache).fill(u8.subarray(off, off + blob.size));
          off += blob.size;
        }
      },
    };
  }
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

// partsSource names the files of a source that Workers can each read their
// own rows of: {name, files: [URL or Blob], names, urls: [the URL of each
// file, or null], cache, fromCache}; null for a model given as bytes. A
// split GGUF's shards are checked to exist first (a HEAD request for each
// one not cached), as openShards does; cached files are the cache's
// disk-backed Files.
async function partsSource(source, opts) {
  if (source instanceof ArrayBuffer || source instanceof Uint8Array) return null;
  if (source instanceof Blob) {
    const name = source.name || "model.gguf";
    return { name, files: [source], names: [name], urls: [null], cache: null, fromCache: false };
  }
  const cache = opts.cache === false ? null : await openCache();
  let parts = shardParts(source);
  if (!parts) {
    const url = cacheKey(String(source));
    parts = [{ name: baseName(url), url }];
  }
  const missing = [];
  let unchecked = false;
  for (const p of parts) {
    if (p.blob) continue;
    const hit = cache && (await cache.match(p.url));
    if (hit) { p.blob = await hit.blob(); p.cached = true; continue; }
    if (parts.length === 1) continue;
    if (missing.length >= 4) { unchecked = true; break; } // enough to name
    let resp = null;
    try { resp = await fetch(p.url, { method: "HEAD", signal: opts.signal }); } catch { /* the read says why */ }
    if (resp && (resp.status === 404 || resp.status === 410)) missing.push(p.name);
  }
  if (missing.length) throw missingShards(missing, parts.length, parts[0].prefix, unchecked);
  return {
    name: parts[0].name, files: parts.map((p) => p.blob || p.url), names: parts.map((p) => p.name),
    urls: parts.map((p) => p.url || null), cache, fromCache: parts.every((p) => p.cached),
  };
}

// startShards starts the n-1 shard Workers of a split model into shards (so
// that a caller's catch can terminate them), each with its channel (a
// SharedArrayBuffer), and the mesh all n Workers share (another); a Worker
// that dies marks its channel and the mesh failed, which wakes the others.
// Resolves {channels, mesh} once every Worker is ready.
async function startShards(engine, opts, n, shards) {
  const channels = [];
  const mesh = new SharedArrayBuffer(meshBytes(n));
  for (let k = 1; k < n; k++) {
    const channel = new SharedArrayBuffer(CHANNEL_BYTES);
    const shard = new Engine(opts.workerURL, engine.build, k);
    shard.onDie = () => {
      const i32 = new Int32Array(channel);
      Atomics.store(i32, CH_STATE, CH_FAILED);
      Atomics.notify(i32, CH_STATE);
      const m32 = new Int32Array(mesh);
      Atomics.store(m32, MESH_FAILED, 1);
      Atomics.notify(m32, MESH_ARRIVALS);
    };
    channels.push(channel);
    shards.push(shard);
  }
  await Promise.all(shards.map((s) => s.ready));
  return { channels, mesh };
}

// loadParts loads a model split over the lead engine and new shard Workers
// that each read only their own rows (wasm/browser/worker/parts_js.go): the
// lead plans the split from the files' headers (their first bytes, by Range
// requests or Blob slices) before anything else is read, refusing a model
// whose parts do not fit with what each Worker would need; the files not
// cached are then downloaded into the cache when there is one (its Files
// are read by slices), else read by Range requests straight into each
// Worker's memory. Resolves {loaded, shards}, or null when a server does not
// support Range requests (the caller falls back to one buffer).
async function loadParts(engine, src, opts, n, auto) {
  const plan = await engine.request({ type: "planParts", name: src.name, files: src.files, names: src.names, workers: n, auto, limit: canSplit() ? MAX_WORKERS : 1 });
  if (plan.noRange) return null;
  const sizes = plan.sizes, total = sizes.reduce((a, b) => a + b, 0);
  n = plan.workers;
  if (src.cache) {
    // Stored once on disk, then read by slices (a failed store: by Range requests).
    let done = 0;
    for (const [i, f] of src.files.entries()) {
      if (typeof f === "string") {
        const partOpts = { ...opts, onProgress: opts.onProgress && ((q) => opts.onProgress({ ...q, loaded: done + q.loaded, total, fraction: total ? (done + q.loaded) / total : 0, name: src.name })) };
        if (await download(src.cache, f, src.names[i], partOpts, Infinity)) {
          const hit = await src.cache.match(f);
          if (hit) src.files[i] = await hit.blob();
        }
      }
      done += sizes[i];
    }
  }
  const started = performance.now();
  const loaded = new Array(n).fill(0);
  const progress = (k) => (m) => {
    loaded[k] = m.loaded;
    if (!opts.onProgress) return;
    const sum = loaded.reduce((a, b) => a + b, 0), secs = (performance.now() - started) / 1000;
    opts.onProgress({ loaded: Math.min(sum, total), total, fraction: total ? Math.min(sum / total, 1) : 1, bytesPerSec: secs > 0 ? sum / secs : 0, fromCache: src.fromCache, name: src.name, workers: n });
  };
  const shards = [];
  try {
    const { channels, mesh } = await startShards(engine, opts, n, shards);
    const files = { files: src.files, sizes, names: src.names, prefixes: plan.prefixes };
    shards.forEach((s, i) => {
      // Never answered but by progress (the shard serves until terminated); a failure reaches the lead.
      s._send(s.nextId++, { type: "shard", part: i + 1, parts: n, channel: channels[i], mesh, ...files }, [], progress(i + 1)).promise.catch(() => {});
    });
    const r = await engine.request({ type: "loadSplit", name: src.name, channels, mesh, ...files }, [], progress(0));
    if (opts.onProgress) {
      // Done: the Workers' last reports may come in any order.
      const secs = (performance.now() - started) / 1000;
      opts.onProgress({ loaded: total, total, fraction: 1, bytesPerSec: secs > 0 ? total / secs : 0, fromCache: src.fromCache, name: src.name, workers: n });
    }
    return { loaded: r, shards };
  } catch (e) {
    for (const s of shards) s.terminate();
    if (src.cache) for (const u of src.urls) if (u) await src.cache.delete(u).catch(() => {}); // do not keep a file the engine refused
    throw e;
  }
}

// loadSplit loads a model split over the lead engine and n-1 new shard
// workers (auto: the default count, which the plan caps at the model's KV
// heads and raises to the fewest Workers its parts fit in): resolves
// {loaded, shards}. Each Worker reads only its own rows (loadParts); a model
// given as bytes, or on a server without Range support, passes through one
// SharedArrayBuffer that every worker copies its part out of (within
// maxModelBytes). On failure the shards are terminated.
async function loadSplit(engine, source, opts, n, auto) {
  const parts = await partsSource(source, opts);
  if (parts) {
    const r = await loadParts(engine, parts, opts, n, auto);
    if (r) return r;
    if (opts.onProgress) opts.onProgress({ loaded: 0, total: 0, fraction: 0, bytesPerSec: 0, fromCache: false, name: parts.name, noRange: true });
  }
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
    const { channels, mesh } = await startShards(engine, opts, n, shards);
    const files = src.sizes ? { sizes: src.sizes, names: src.names } : {}; // a split GGUF's shards, end to end
    shards.forEach((s, i) => s.post({ type: "shard", id: 0, model, size: src.size, part: i + 1, parts: n, channel: channels[i], mesh, ...files }));
    const loaded = await engine.request({ type: "loadSplit", name: src.name, model, size: src.size, channels, mesh, ...files });
    model = null; // every worker has its part: the file's buffer can go
    return { loaded, shards };
  } catch (e) {
    for (const s of shards) s.terminate();
    if (src.cache && src.url) await src.cache.delete(src.url).catch(() => {}); // do not keep a file the engine refused
    await forgetShards(src.set);
    throw e;
  }
}

// workersFor is the Workers a load asks for: {n, auto} (auto: the default,
// capped by the model once its header is read).
function workersFor(source, opts) {
  const auto = opts.workers == null;
  const n = auto ? defaultWorkers() : opts.workers;
  if (!Number.isInteger(n) || n < 1 || n > MAX_WORKERS) throw new BadRequestError(`workers must be an integer from 1 to ${MAX_WORKERS}, got ${n}`, "workers");
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
    /** OpenAI's chat completions: chat.completions.create({messages, ...}) (web/openai.js). */
    this.chat = new Chat(this);
    /** OpenAI's text completions: completions.create({prompt, ...}) (web/openai.js). */
    this.completions = new Completions(this);
    /** OpenAI's embeddings: embeddings.create({input, encoding_format}) (web/openai.js). */
    this.embeddings = new Embeddings(this);
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
   * is detached), or nothing / "builtin" for the built-in stories260K. A split
   * GGUF (llama.cpp's gguf-split, NAME-00001-of-00003.gguf, ...): the URL of
   * its first shard (the others are fetched beside it, each cached), or an
   * array or FileList of all its Files (or URLs); a missing shard is named
   * before anything is downloaded.
   * A URL is downloaded into the Origin Private File System with several ranged connections at once, resumed
   * where it stopped after a dropped connection or a reload, and checked by size and GGUF header before it is
   * kept; a quota error names the sizes and keeps nothing.
   * opts: {onProgress({loaded, total, fraction, bytesPerSec, fromCache, ranged (false: the server serves no
   * ranges, one plain download), connections, resumed (bytes on disk from an earlier attempt)}), signal,
   * cache: true, connections: 4 (ranged requests at once), chunkBytes: 16 MiB (the bytes of each), storeWorkerURL
   * (the download worker, default store-worker.js beside picolm.js), workerURL,
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
      throw loadError(e, opts);
    }
  }

  /** Replace the model in this worker by another (same sources as load). On failure no model is loaded. */
  async load(source = BUILTIN, opts = {}) {
    this.info = null;
    for (const s of this._shards) s.terminate();
    this._shards = [];
    let loaded, shards;
    try {
      ({ loaded, shards } = await PicoLM._loadInto(this._engine, source, opts));
    } catch (e) {
      throw loadError(e, opts);
    }
    this._shards = shards;
    this._set(loaded);
    return this;
  }

  static async _loadInto(engine, source, opts) {
    if ((Array.isArray(source) || (typeof FileList !== "undefined" && source instanceof FileList)) && source.length === 1) source = source[0];
    const { n, auto } = workersFor(source, opts);
    await engine.ready;
    if (n > 1) return loadSplit(engine, source, opts, n, auto);
    if (engine.dead) throw engine.dead;
    return { loaded: await PicoLM._loadOne(engine, source, opts), shards: [] };
  }

  static async _loadOne(engine, source, opts) {
    try {
      return await PicoLM._loadBuffer(engine, source, opts);
    } catch (e) {
      // Over one buffer's limit: planned from its header and, where its
      // rows fit one Worker, read by parts; else refused with what it needs.
      if (!e.tooLarge || (opts.signal && opts.signal.aborted)) throw e;
      const src = await partsSource(source, opts);
      const r = src && (await loadParts(engine, src, opts, 1, false));
      if (!r) throw e;
      return r.loaded;
    }
  }

  static async _loadBuffer(engine, source, opts) {
    if (source === BUILTIN || source == null) return engine.request({ type: "load", builtin: true });
    source = ownBuffer(source);
    if (source instanceof ArrayBuffer) {
      const name = bufferName(source, opts);
      return engine.request({ type: "load", name, bytes: source }, [source]);
    }
    if (source instanceof Blob) return loadBlob(engine, source, source.name || "model.gguf", false, opts);
    const set = await openShards(source, opts);
    if (set) return loadShards(engine, set, opts);
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
   * exchanges between the Workers, attention ones of them; the lead's time on its own heads' attention, its own rows of
   * the other products, publishing its results, waiting for the other Workers', posting tokens, and the rest; its
   * sleeps in Atomics.wait; each other Worker's time computing, attention of it, its sleeps).
   * input: a prompt string, or an array of chat messages [{role, content}] formatted with the model's chat template
   * (a plain "User: ..." / "Assistant:" transcript for a model without one).
   * opts: {maxTokens: 256 (0: until the model ends or the context is full), temperature: 0.8, topP: 0.9, topK: 0, minP: 0,
   * seed: 42, json: false, grammar: GBNF source, jsonSchema: a JSON Schema (an object or its text), stop: [strings],
   * signal, onToken({text, count, tokensPerSec})}. At most one of json, grammar and jsonSchema. A generation ended by a stop
   * sequence has stop "stop_sequence" (the text before it is emitted); one stopped by stop() or the signal has stop "stopped".
   */
  async run(input, opts = {}) {
    const e = this._engine;
    await e.ready;
    if (e.dead) throw e.dead;
    if (opts.signal && opts.signal.aborted) {
      // Aborted before it started: nothing is generated.
      return { prompt: "", promptTokens: 0, cachedTokens: 0, prefillMs: 0, generated: 0, decodeMs: 0, tokensPerSec: 0, stop: "stopped", stopReason: "", memory: this.memory };
    }
    const msg = { type: "generate", maxTokens: opts.maxTokens ?? 256, temperature: opts.temperature ?? 0.8, topP: opts.topP ?? 0.9, topK: opts.topK ?? 0, minP: opts.minP ?? 0, seed: opts.seed ?? 42, json: !!opts.json };
    if (opts.grammar != null) msg.grammar = String(opts.grammar);
    if (opts.jsonSchema != null) msg.jsonSchema = typeof opts.jsonSchema === "string" ? opts.jsonSchema : JSON.stringify(opts.jsonSchema);
    if (opts.stop != null) msg.stop = (typeof opts.stop === "string" ? [opts.stop] : Array.from(opts.stop)).map(String);
    if (opts.logprobs) { msg.logprobs = true; msg.topLogprobs = opts.topLogprobs ?? 0; }
    if (opts.tools != null) msg.tools = Array.from(opts.tools, (t) => ({ name: String(t.name), description: String(t.description ?? ""), parameters: t.parameters == null ? "" : typeof t.parameters === "string" ? t.parameters : JSON.stringify(t.parameters) }));
    if (opts.toolChoice != null) msg.toolChoice = { mode: String(opts.toolChoice.mode), function: String(opts.toolChoice.function ?? ""), parallel: opts.toolChoice.parallel !== false };
    if (Array.isArray(input)) msg.messages = input.map(wireMessage);
    else msg.prompt = String(input);
    const id = e.nextId++;
    const { promise } = e._send(id, msg, [], opts.onToken);
    const stop = () => e.post({ type: "stop", id });
    if (opts.signal) {
      if (opts.signal.aborted) stop();
      opts.signal.addEventListener("abort", stop, { once: true });
    }
    // The engine runs requests in the order they were sent: the first of
    // _runs is the one generating (stop() stops it).
    (this._runs ??= []).push(stop);
    try {
      const done = await promise;
      return { ...done.stats, memory: done.memory };
    } finally {
      this._runs.splice(this._runs.indexOf(stop), 1);
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

  /**
   * Embed texts (or arrays of token ids), each on its own, with the engine's
   * Session.Embed: the model's pooling of the final norm's output,
   * L2-normalised. Resolves with {data: [Float32Array], tokens: [n]}; a model
   * that makes no embeddings rejects with a BadRequestError (code
   * embeddings_not_supported). Runs in the engine's queue, after the
   * requests made before it.
   */
  async embed(inputs, opts = {}) {
    const e = this._engine;
    await e.ready;
    if (e.dead) throw e.dead;
    if (opts.signal && opts.signal.aborted) throw new AbortError();
    const msg = { type: "embed", inputs: Array.from(inputs, (x) => (typeof x === "string" ? { text: x } : { tokens: Array.from(x) })) };
    const { promise } = e._send(e.nextId++, msg, [], null);
    const done = await promise;
    return { data: done.data.map((b) => new Float32Array(b)), tokens: done.tokens };
  }

  /** Stop the running generation after its current token. */
  stop() { if (this._runs && this._runs.length) this._runs[0](); }

  /** Terminate the workers and free the model's memory. */
  unload() {
    for (const s of this._shards) s.terminate();
    this._shards = [];
    this._engine.terminate();
  }

  /**
   * Models in the cache: [{url, bytes, cachedAt}], then unfinished downloads (the next load of
   * their URL resumes them) as {url, bytes (downloaded), total, partial: true}.
   */
  static async cached() {
    const out = [], partial = [];
    for (const cache of await stores()) {
      for (const req of await cache.keys()) {
        const r = await cache.match(req);
        const bytes = Number(r && r.headers.get("content-length")) || (r ? (await r.blob()).size : 0);
        out.push({ url: req.url, bytes, cachedAt: r && r.headers.get("x-picolm-cached") });
      }
      if (typeof cache.partials === "function") for (const p of await cache.partials()) partial.push({ ...p, partial: true });
    }
    return out.concat(partial);
  }

  /**
   * The browser's storage for this site: {persisted, usage, quota} in bytes. Asks for persistent storage
   * (navigator.storage.persist(), which the browser grants or refuses) unless persist is false.
   */
  static storage({ persist = true } = {}) { return storageInfo(persist); }

  /**
   * Save the session's KV state (every cached position: the chat so far) in OPFS under name, replacing a state
   * of that name: the CLI's --cache file, bound to this model and checksummed. Runs after the generations
   * requested before it. Resolves {name, bytes, positions}. A model split over several Workers is refused
   * (StateError): load it with workers: 1 to save its state.
   */
  async saveState(name) {
    const e = this._engine;
    await e.ready;
    if (e.dead) throw e.dead;
    const r = await e.request({ type: "saveState" });
    await writeState(name, r.data);
    return { name: String(name), bytes: r.data.byteLength, positions: new DataView(r.data).getUint32(52, true) };
  }

  /**
   * Restore the KV state saved under name (saveState), replacing the session's: the next generation whose
   * prompt starts with the saved tokens continues from it, with the same tokens as the session that saved it.
   * Resolves {name, positions}. A state of another model, truncated or corrupted (its checksum), or missing is
   * refused with a StateError, and the session is left empty.
   */
  async restoreState(name) {
    const e = this._engine;
    await e.ready;
    if (e.dead) throw e.dead;
    const data = await (await readState(name)).arrayBuffer();
    const r = await e.request({ type: "restoreState", data }, [data]);
    return { name: String(name), positions: r.positions };
  }

  /** The saved states: [{name, bytes, savedAt}]. */
  static states() { return listStates(); }

  /** Delete a saved state; resolves true if there was one. */
  static deleteState(name) { return deleteState(name); }

  /** Remove a model from the cache (or an unfinished download of it); resolves true if it was there. */
  static async deleteCached(url) {
    let had = false;
    for (const cache of await stores()) if (await cache.delete(cacheKey(url))) had = true;
    return had;
  }

  static formatBytes(n) { return formatBytes(n); }
}

// wireMessage is a chat message as the engine Worker reads it: {role,
// content}, an assistant's toolCalls [{id, name, arguments}], a tool
// result's toolCallId and name.
function wireMessage(m) {
  const w = { role: String(m.role), content: String(m.content ?? "") };
  if (m.toolCalls) w.toolCalls = Array.from(m.toolCalls, (c) => ({ id: String(c.id ?? ""), name: String(c.name), arguments: String(c.arguments ?? "{}") }));
  if (m.toolCallId != null) w.toolCallId = String(m.toolCallId);
  if (m.name != null) w.name = String(m.name);
  return w;
}

// loadError is the error a failed load rejects with: an AbortError when
// opts.signal was aborted, a typed error as it is, any other one as a
// ModelLoadError with the same message.
function loadError(e, opts) {
  if (opts.signal && opts.signal.aborted) return e instanceof AbortError ? e : new AbortError(e && e.message ? e.message : "loading was aborted", { cause: e });
  if (e instanceof PicoLMError && e.code !== "engine") return e;
  return new ModelLoadError(e && e.message ? e.message : String(e), { cause: e });
}

// stores are the model stores to list and delete from: OPFS and the Cache
// API's (models cached before OPFS was used).
async function stores() {
  const out = [];
  const store = await openModelStore();
  if (store) out.push(store);
  if (globalThis.caches && (await caches.has(CACHE).catch(() => false))) {
    const legacy = await openLegacyCache();
    if (legacy) out.push(legacy);
  }
  return out;
}

export default PicoLM;
