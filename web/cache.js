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
// are complete; KEY is the hex SHA-256 of the URL. A model whose .json is
// missing or disagrees with its .gguf (a download cut off) is not in the
// store.

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
    const had = !!(await this._meta(key));
    for (const name of [key + ".json", key + ".gguf"]) {
      try {
        await this.dir.removeEntry(name);
      } catch (e) {
        if (!missing(e)) throw e;
      }
    }
    return had;
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
