// cache.js — web/picolm.js's store of downloaded models in the Origin Private
// File System (OPFS): each model is one file on disk, written as it
// downloads (never held in memory) and read back as a disk-backed File that
// the engine's worker reads in slices, so a cached model loads with no
// network request and exists once on disk.
//
// A store has the methods of the Cache API that picolm.js uses (match, put,
// delete, keys), so picolm.js takes it where the browser has OPFS
// (openModelStore resolves to null elsewhere, and picolm.js uses the Cache
// API). Each URL is two entries in the directory picolm-models-v1: KEY.gguf,
// the bytes, and KEY.json, {url, bytes, cachedAt}, written after the bytes
// are complete and checked (by size and by the GGUF header, checkGGUF); KEY
// is the hex SHA-256 of the URL. A model whose .json is missing or disagrees
// with its .gguf (a download cut off) is not in the store.
//
// download() fetches a model with several ranged connections at once in a
// dedicated worker (web/store-worker.js, which writes the file in place
// through a sync access handle); while it is incomplete KEY.part records the
// bytes on disk, so a download cut off resumes where it stopped, in this
// page or after a reload (partials() lists those). Session states
// (PicoLM.saveState) are files of the directory picolm-states-v1.

import { ModelLoadError, PicoLMError, StateError } from "./errors.js";

/** n bytes for people: 1.1 MB, 640 KB, 3.1 GB. */
export function formatBytes(n) {
  if (n < 1000) return n + " B";
  const units = ["KB", "MB", "GB", "TB"];
  let u = -1;
  do { n /= 1000; u++; } while (n >= 1000 && u < units.length - 1);
  return (n < 10 ? n.toFixed(1) : n.toFixed(0)) + " " + units[u];
}

const DIR = "picolm-models-v1";

/** The OPFS model store, or null where the browser has no OPFS with createWritable. */
export async function openModelStore() {
  try {
    if (!globalThis.navigator || !navigator.storage || typeof navigator.storage.getDirectory !== "function") return null;
    if (typeof FileSystemFileHandle === "undefined" || typeof FileSystemFileHandle.prototype.createWritable !== "function") return null;
    const root = await navigator.storage.getDirectory();
    return new ModelStore(await root.getDirectoryHandle(DIR, { create: true }));
  } catch {
    return null; // no storage here (a private window, a denied permission)
  }
}

async function keyOf(url) {
  const d = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(url));
  return Array.from(new Uint8Array(d), (b) => b.toString(16).padStart(2, "0")).join("");
}

const missing = (e) => e && (e.name === "NotFoundError" || e.name === "TypeMismatchError");

class ModelStore {
  constructor(dir) {
    this.dir = dir;
  }

  async _meta(key) {
    try {
      const f = await (await this.dir.getFileHandle(key + ".json")).getFile();
      const m = JSON.parse(await f.text());
      return m && typeof m.url === "string" && Number.isFinite(m.bytes) ? m : null;
    } catch (e) {
      if (missing(e) || e instanceof SyntaxError) return null;
      throw e;
    }
  }

  /** The stored model of url: {url, headers, blob()} (blob resolves to the file on disk), or undefined. */
  async match(url) {
    url = String(url && url.url ? url.url : url);
    const key = await keyOf(url);
    const meta = await this._meta(key);
    if (!meta || meta.url !== url) return undefined;
    let file;
    try {
      file = await (await this.dir.getFileHandle(key + ".gguf")).getFile();
    } catch (e) {
      if (missing(e)) return undefined;
      throw e;
    }
    if (file.size !== meta.bytes) return undefined;
    const headers = new Headers({ "content-type": "application/octet-stream", "content-length": String(file.size), "x-picolm-cached": meta.cachedAt || "" });
    return { url, headers, blob: async () => file };
  }

  /** Store response's body as url's model, streaming it to disk; rejects (storing nothing) if the body fails. */
  async put(url, response) {
    url = String(url);
    const key = await keyOf(url);
    await this.delete(url);
    const fh = await this.dir.getFileHandle(key + ".gguf", { create: true });
    try {
      // The writable writes a swap file, which replaces the file only on
      // close: a failed download leaves nothing half-written behind.
      await response.body.pipeTo(await fh.createWritable());
      const bytes = (await fh.getFile()).size;
      const meta = { url, bytes, cachedAt: response.headers.get("x-picolm-cached") || new Date().toISOString() };
      const w = await (await this.dir.getFileHandle(key + ".json", { create: true })).createWritable();
      await w.write(JSON.stringify(meta));
      await w.close();
    } catch (e) {
      await this.delete(url).catch(() => {});
      throw e;
    }
  }

  /** Remove url's model; resolves true if it was stored. */
  async delete(url) {
    url = String(url && url.url ? url.url : url);
    const key = await keyOf(url);
    const had = !!(await this._meta(key)) || !!(await this._part(key));
    for (const name of [key + ".json", key + ".gguf", key + ".part"]) {
      try {
        await this.dir.removeEntry(name);
      } catch (e) {
        if (!missing(e)) throw e;
      }
    }
    return had;
  }

  // _part is KEY.part's record of an unfinished download, or null.
  async _part(key) {
    try {
      const r = JSON.parse(await (await (await this.dir.getFileHandle(key + ".part")).getFile()).text());
      return r && typeof r.url === "string" && Number.isFinite(r.total) && Array.isArray(r.got) ? r : null;
    } catch (e) {
      if (missing(e) || e instanceof SyntaxError) return null;
      throw e;
    }
  }

  /** Unfinished downloads (resumed by the next download of their URL): [{url, bytes (on disk), total}]. */
  async partials() {
    const out = [];
    for await (const name of this.dir.keys()) {
      if (!name.endsWith(".part")) continue;
      const key = name.slice(0, -5);
      if (await this._meta(key)) continue;
      const r = await this._part(key);
      if (r) out.push({ url: r.url, bytes: r.got.reduce((a, b) => a + b, 0), total: r.total });
    }
    return out;
  }

  /**
   * Download url into the store with opts.connections (default 4) ranged
   * requests at once (web/store-worker.js), resuming an earlier partial
   * download; check its size and GGUF header; then record it. Resolves
   * {ranged, fetched, resumed, total} (ranged false: the server serves no
   * ranges, one plain download), or null where this browser has no sync
   * access handles (the caller uses put). opts: {onProgress({loaded, total,
   * ranged, connections, resumed}), signal, connections, chunkBytes,
   * retries (default 5), maxBytes, tooLarge(size) (the error for a model over
   * maxBytes), workerURL, name}. Rejects with a ModelLoadError (a quota error
   * names the sizes; nothing half-written is kept) or, when aborted, with
   * the signal's reason (the partial file is kept to resume).
   */
  async download(url, opts = {}) {
    url = String(url);
    const key = await keyOf(url);
    const name = opts.name || url;
    const meta = await this._meta(key);
    if (meta) await this.delete(url); // a stale entry: this download replaces it
    const worker = new Worker(opts.workerURL ? new URL(opts.workerURL, location.href) : new URL("./store-worker.js", import.meta.url));
    const started = performance.now();
    let r;
    try {
      r = await new Promise((resolve, reject) => {
        const abort = () => worker.postMessage({ type: "abort" });
        if (opts.signal) {
          if (opts.signal.aborted) abort();
          opts.signal.addEventListener("abort", abort, { once: true });
        }
        worker.onerror = (e) => reject(new ModelLoadError(`the download worker failed: ${e.message || "could not start"}`));
        worker.onmessage = (e) => {
          const m = e.data;
          if (m.type === "progress") {
            if (opts.onProgress) {
              const secs = (performance.now() - started) / 1000;
              const got = m.loaded - m.resumed;
              opts.onProgress({ loaded: m.loaded, total: m.total || m.loaded, fraction: m.total ? m.loaded / m.total : 0, bytesPerSec: secs > 0 ? got / secs : 0, fromCache: false, name, ranged: m.ranged, connections: m.connections, resumed: m.resumed });
            }
            return;
          }
          if (opts.signal) opts.signal.removeEventListener("abort", abort);
          if (m.type === "done") resolve(m);
          else if (m.kind === "unsupported") resolve(null);
          else reject(downloadError(m, name, url, opts));
        };
        worker.postMessage({ type: "start", url, key, connections: opts.connections ?? 4, chunkBytes: opts.chunkBytes ?? 16 << 20, retries: opts.retries ?? 5, maxBytes: opts.maxBytes ?? Number.MAX_SAFE_INTEGER });
      });
    } finally {
      worker.terminate();
    }
    if (!r) return null;
    try {
      const fh = await this.dir.getFileHandle(key + ".gguf");
      const file = await fh.getFile();
      if (file.size !== r.total) throw new ModelLoadError(`${name}: ${file.size} bytes were stored, the server announced ${r.total}`);
      await checkGGUF(file, name);
      const m = { url, bytes: file.size, cachedAt: new Date().toISOString() };
      const w = await (await this.dir.getFileHandle(key + ".json", { create: true })).createWritable();
      await w.write(JSON.stringify(m));
      await w.close();
    } catch (e) {
      await this.delete(url).catch(() => {}); // refused: nothing is kept
      throw e;
    }
    await this.dir.removeEntry(key + ".part").catch(() => {});
    return { ranged: r.ranged, fetched: r.fetched, resumed: r.resumed, total: r.total };
  }

  /** The stored models, as [{url}] (the Cache API's requests have a url too). */
  async keys() {
    const out = [];
    for await (const name of this.dir.keys()) {
      if (!name.endsWith(".json")) continue;
      const m = await this._meta(name.slice(0, -5));
      if (m) out.push({ url: m.url });
    }
    return out;
  }
}

// downloadError is the error of a failed download (store-worker.js's kinds).
function downloadError(m, name, url, opts) {
  switch (m.kind) {
    case "quota": {
      const free = Math.max(0, m.quota - m.usage);
      return new ModelLoadError(`${name} is ${formatBytes(m.total)}: more than the browser lets this site store ` +
        `(${formatBytes(free)} free of a quota of ${formatBytes(m.quota)}, ${formatBytes(m.usage)} in use). ` +
        `Nothing was kept. Delete cached models, free disk space, or load the file from disk instead. (${m.message})`);
    }
    case "tooLarge":
      return opts.tooLarge ? opts.tooLarge(m.total) : new ModelLoadError(`${name} is ${formatBytes(m.total)}: too large`);
    case "aborted":
      return (opts.signal && opts.signal.reason) || new PicoLMError("the download was aborted", "aborted");
    case "busy":
      return new ModelLoadError(`could not store ${name}: ${m.message}`);
    case "network":
      return new ModelLoadError(`could not fetch ${url}: ${m.message}.` + (m.kept ? " What was downloaded is kept: loading it again resumes there." : " Nothing was kept."));
    default:
      return new ModelLoadError(`could not fetch ${url}: ${m.message}. Nothing was kept.`);
  }
}

// GGML_TYPES: [elements per block, bytes per block] of each ggml type id
// (quant's traits table).
const GGML_TYPES = {
  0: [1, 4], 1: [1, 2], 2: [32, 18], 3: [32, 20], 6: [32, 22], 7: [32, 24], 8: [32, 34], 9: [32, 36],
  10: [256, 84], 11: [256, 110], 12: [256, 144], 13: [256, 176], 14: [256, 210], 15: [256, 292],
  16: [256, 66], 17: [256, 74], 18: [256, 98], 19: [256, 50], 20: [32, 18], 21: [256, 110], 22: [256, 82],
  23: [256, 136], 24: [1, 1], 25: [1, 2], 26: [1, 4], 27: [1, 8], 28: [1, 8], 29: [256, 56], 30: [1, 2],
  34: [256, 54], 35: [256, 66],
};
// Bytes of a GGUF metadata value of each fixed-size type (8 string and 9 array vary).
const VALUE_BYTES = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 };
const MAX_COUNT = 1 << 24; // more tensors or metadata keys than any model has

/**
 * Check that blob is a whole GGUF file (v2 or v3): its magic, version and
 * counts, its metadata and tensor table readable, and every tensor's data
 * inside the file at an aligned offset. Rejects with a ModelLoadError naming
 * what is wrong. Reads only the header, in slices.
 */
export async function checkGGUF(blob, name = "the model") {
  const size = blob.size;
  const bad = (why) => new ModelLoadError(`${name} is not a complete GGUF file: ${why}. Nothing was stored.`);
  const WINDOW = 1 << 20;
  let buf = new Uint8Array(0), base = 0, pos = 0; // buf holds the file's bytes [base, base+buf.length); pos is the file offset read next
  const need = async (n) => {
    if (pos + n > size) throw bad(`its header runs past the end of the file (${size} bytes)`);
    if (pos + n <= base + buf.length) return;
    const end = Math.min(size, pos + Math.max(n, WINDOW));
    buf = new Uint8Array(await blob.slice(pos, end).arrayBuffer());
    base = pos;
  };
  const view = () => new DataView(buf.buffer, buf.byteOffset + pos - base);
  const u32 = async () => { await need(4); const v = view().getUint32(0, true); pos += 4; return v; };
  const u64 = async () => {
    await need(8);
    const v = view().getBigUint64(0, true);
    pos += 8;
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw bad(`a count or size of ${v} at byte ${pos - 8}`);
    return Number(v);
  };
  const skip = async (n) => {
    if (pos + n > size) throw bad(`its header runs past the end of the file (${size} bytes)`);
    pos += n;
  };
  const str = async () => {
    const n = await u64();
    if (n > size) throw bad(`a string of ${n} bytes`);
    await need(n);
    const s = new TextDecoder().decode(buf.subarray(pos - base, pos - base + n));
    pos += n;
    return s;
  };
  await need(8);
  if (String.fromCharCode(...buf.subarray(0, 4)) !== "GGUF") throw bad("it does not start with GGUF's magic");
  pos = 4;
  const version = await u32();
  if (version !== 2 && version !== 3) throw bad(`version ${version} (v2 and v3 are read)`);
  const tensors = await u64(), kvs = await u64();
  if (tensors > MAX_COUNT || kvs > MAX_COUNT) throw bad(`${tensors} tensors and ${kvs} metadata keys`);
  let alignment = 32;
  for (let i = 0; i < kvs; i++) {
    const key = await str();
    const type = await u32();
    if (type === 8) { await str(); continue; }
    if (type === 9) {
      const et = await u32(), n = await u64();
      if (et === 8) { for (let k = 0; k < n; k++) await skip(await u64()); continue; }
      if (!(et in VALUE_BYTES)) throw bad(`the metadata key ${key} is an array of type ${et}`);
      await skip(n * VALUE_BYTES[et]);
      continue;
    }
    if (!(type in VALUE_BYTES)) throw bad(`the metadata key ${key} has type ${type}`);
    if (key === "general.alignment" && type === 4) {
      alignment = await u32();
      if (!alignment || alignment & (alignment - 1)) throw bad(`general.alignment ${alignment} is not a power of two`);
      continue;
    }
    await skip(VALUE_BYTES[type]);
  }
  const infos = [];
  for (let i = 0; i < tensors; i++) {
    const tname = await str();
    const dims = await u32();
    if (dims < 1 || dims > 4) throw bad(`tensor ${tname} has ${dims} dimensions`);
    let elems = 1;
    for (let d = 0; d < dims; d++) elems *= await u64();
    const type = await u32(), offset = await u64();
    infos.push({ tname, elems, type, offset });
  }
  const data = Math.ceil(pos / alignment) * alignment;
  if (tensors > 0 && data > size) throw bad(`its tensor data would start at byte ${data}, past the end (${size} bytes)`);
  for (const t of infos) {
    if (t.offset % alignment) throw bad(`tensor ${t.tname}'s data is at offset ${t.offset}, not aligned to ${alignment}`);
    const tr = GGML_TYPES[t.type];
    const bytes = tr ? Math.ceil(t.elems / tr[0]) * tr[1] : 1; // an unknown type: the engine names it; its data must at least start inside
    if (!Number.isSafeInteger(bytes) || data + t.offset + bytes > size) {
      throw bad(`tensor ${t.tname} (${bytes} bytes at offset ${t.offset}) ends past the end of the file (${size} bytes): it is truncated`);
    }
  }
}

/**
 * The browser's storage for this site: {persisted, usage, quota} (bytes).
 * persist (default true) asks for persistent storage
 * (navigator.storage.persist()), which the browser may grant or refuse.
 */
export async function storageInfo(persist = true) {
  const s = globalThis.navigator && navigator.storage;
  if (!s) return { persisted: false, usage: 0, quota: 0 };
  let persisted = false;
  try {
    persisted = typeof s.persisted === "function" ? await s.persisted() : false;
    if (!persisted && persist && typeof s.persist === "function") persisted = await s.persist();
  } catch { /* not granted */ }
  let est = {};
  try { est = typeof s.estimate === "function" ? await s.estimate() : {}; } catch { /* no estimate */ }
  return { persisted, usage: est.usage || 0, quota: est.quota || 0 };
}

const STATES = "picolm-states-v1";
const MAX_STATE_NAME = 200;

async function statesDir() {
  try {
    if (!globalThis.navigator || !navigator.storage || typeof navigator.storage.getDirectory !== "function") throw new Error("no navigator.storage.getDirectory");
    return await (await navigator.storage.getDirectory()).getDirectoryHandle(STATES, { create: true });
  } catch (e) {
    throw new StateError(`this browser gives the page no Origin Private File System to keep session states in (${e.message})`);
  }
}

// stateFile is the file name of the state called name.
function stateFile(name) {
  name = String(name);
  if (!name || name.length > MAX_STATE_NAME) throw new StateError(`a state's name must be 1 to ${MAX_STATE_NAME} characters, got ${name.length}`);
  return "state-" + encodeURIComponent(name) + ".kv";
}

/** Write the state bytes (an ArrayBuffer) under name, replacing one of that name; nothing half-written stays. */
export async function writeState(name, bytes) {
  const file = stateFile(name);
  const dir = await statesDir();
  const w = await (await dir.getFileHandle(file, { create: true })).createWritable();
  try {
    await w.write(bytes);
    await w.close(); // the swap file replaces the old state only now
  } catch (e) {
    await w.abort().catch(() => {});
    if (e && e.name === "QuotaExceededError") throw new StateError(`the state ${name} (${formatBytes(bytes.byteLength)}) does not fit the browser's storage quota; it was not saved`);
    throw e;
  }
}

/** The state saved under name, as a File (disk-backed). */
export async function readState(name) {
  const file = stateFile(name);
  try {
    return await (await (await statesDir()).getFileHandle(file)).getFile();
  } catch (e) {
    if (missing(e)) throw new StateError(`no state is saved under the name ${name}`);
    throw e;
  }
}

/** Delete the state saved under name; resolves true if there was one. */
export async function deleteState(name) {
  const file = stateFile(name);
  try {
    await (await statesDir()).removeEntry(file);
    return true;
  } catch (e) {
    if (missing(e)) return false;
    throw e;
  }
}

/** The saved states: [{name, bytes, savedAt}]. */
export async function listStates() {
  const out = [];
  const dir = await statesDir();
  for await (const [file, h] of dir.entries()) {
    if (!file.startsWith("state-") || !file.endsWith(".kv")) continue;
    const f = await h.getFile();
    let name;
    try { name = decodeURIComponent(file.slice(6, -3)); } catch { continue; }
    out.push({ name, bytes: f.size, savedAt: new Date(f.lastModified).toISOString() });
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
