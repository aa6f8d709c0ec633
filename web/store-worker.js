// store-worker.js — downloads one model into the OPFS model store
// (web/cache.js, which starts it) with several ranged connections at once,
// writing each piece at its offset through a FileSystemSyncAccessHandle (the
// only OPFS writer that writes a file in place; it exists only in a
// dedicated worker).
//
// The file is split into chunks (chunkBytes); `connections` requests run at
// once, each fetching one chunk's missing bytes with a Range request and
// writing them as they arrive. A request that fails or ends early is retried
// from the byte it stopped at (a few times without progress at most), so a
// dropped connection costs no more than what was in flight. Every 8 MiB and
// at the end of each chunk the file is flushed and KEY.part records how many
// bytes of each chunk are on disk: a download cut off by a reload or a
// failed network resumes from there (if the server's file is still the same:
// its size and ETag or Last-Modified).
//
// A server that answers a Range request with a whole 200 response (no range
// support) gets one plain download, which starts over if it is cut off.
//
// Page → worker: start {url, key, connections, chunkBytes, retries, maxBytes}, abort {}
// Worker → page: progress {loaded, total, ranged, connections, resumed}
//                done {total, ranged, fetched, resumed}
//                error {kind, message, kept (the partial file stays), total?, usage?, quota?}: kind "quota" (the
//                  storage refused the bytes: nothing kept), "tooLarge", "http",
//                  "integrity" (the server's answers disagree: nothing kept),
//                  "network" (retries exhausted: the partial file is kept to
//                  resume, if ranged), "aborted" (kept, if ranged), "unsupported" (no sync access
//                  handles here: nothing was done), "busy" (the file is open
//                  elsewhere, another tab downloading it)
"use strict";

const DIR = "picolm-models-v1";
const COMMIT_BYTES = 8 << 20;

let ctl = null;

self.onmessage = (e) => {
  const m = e.data;
  if (m.type === "abort") {
    if (ctl) ctl.abort();
    return;
  }
  if (m.type !== "start" || ctl) return;
  ctl = new AbortController();
  run(m, ctl.signal).then(
    (r) => self.postMessage({ type: "done", ...r }),
    (err) => self.postMessage({ type: "error", kind: err.kind || (ctl.signal.aborted ? "aborted" : "network"), message: String(err && err.message || err), ...(err.fields || {}) }),
  );
};

class Failure extends Error {
  constructor(kind, message, fields = undefined) {
    super(message);
    this.kind = kind;
    this.fields = fields;
  }
}

const sleep = (ms, signal) => new Promise((resolve) => {
  const t = setTimeout(resolve, ms);
  signal.addEventListener("abort", () => { clearTimeout(t); resolve(); }, { once: true });
});

// parseRange reads a 206's Content-Range, "bytes START-END/TOTAL".
function parseRange(h) {
  const m = /^bytes (\d+)-(\d+)\/(\d+)$/.exec((h || "").trim());
  if (!m) return null;
  const r = { start: Number(m[1]), end: Number(m[2]), total: Number(m[3]) };
  return r.start <= r.end && r.end < r.total && Number.isSafeInteger(r.total) ? r : null;
}

const validatorOf = (resp) => resp.headers.get("etag") || resp.headers.get("last-modified") || "";

async function run(m, signal) {
  if (!navigator.storage || typeof FileSystemFileHandle.prototype.createSyncAccessHandle !== "function") {
    throw new Failure("unsupported", "no FileSystemSyncAccessHandle in this browser");
  }
  const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle(DIR, { create: true });
  const open = async (name) => {
    try {
      return await (await dir.getFileHandle(name, { create: true })).createSyncAccessHandle();
    } catch (e) {
      if (e && e.name === "NoModificationAllowedError") throw new Failure("busy", "the model is being downloaded elsewhere (another tab)");
      throw e;
    }
  };
  const data = await open(m.key + ".gguf");
  let part;
  try {
    part = await open(m.key + ".part");
  } catch (e) {
    data.close();
    throw e;
  }
  let keep = true, failed = false; // keep: whether the partial file stays (to resume) if this fails
  try {
    return await download(m, signal, data, part, () => { keep = false; });
  } catch (e) {
    failed = true;
    if (e.kind === "quota" || e.kind === "integrity" || e.kind === "tooLarge" || e.kind === "http") keep = false;
    if (signal.aborted && !e.kind) e = new Failure("aborted", "the download was aborted");
    if (!(e instanceof Failure)) e = new Failure("network", String(e && e.message || e));
    e.fields = { ...(e.fields || {}), kept: keep };
    throw e;
  } finally {
    data.flush();
    data.close();
    part.close();
    if (failed && !keep) {
      for (const n of [m.key + ".gguf", m.key + ".part"]) await dir.removeEntry(n).catch(() => {});
    }
  }
}

// readRecord is KEY.part's record of an earlier attempt, or null.
function readRecord(part, url) {
  const n = part.getSize();
  if (!n || n > 16 << 20) return null;
  const b = new Uint8Array(n);
  part.read(b, { at: 0 });
  try {
    const r = JSON.parse(new TextDecoder().decode(b));
    const chunks = Math.ceil(r.total / r.chunk);
    if (r.url !== url || !Number.isSafeInteger(r.total) || !(r.chunk > 0) || !Array.isArray(r.got) || r.got.length !== chunks) return null;
    return r;
  } catch {
    return null;
  }
}

function writeRecord(part, rec) {
  const b = new TextEncoder().encode(JSON.stringify(rec));
  part.truncate(0);
  part.write(b, { at: 0 });
  part.flush();
}

// quotaFailure turns the storage's QuotaExceededError into the page's error.
async function quotaFailure(e, total) {
  let est = {};
  try { est = await navigator.storage.estimate(); } catch { /* no estimate */ }
  return new Failure("quota", e.message, { total, usage: est.usage || 0, quota: est.quota || 0 });
}

function quotaGuard(total) {
  return async (e) => {
    if (e && e.name === "QuotaExceededError") throw await quotaFailure(e, total);
    throw e;
  };
}

async function download(m, signal, data, part, discard) {
  const { url } = m;
  const connections = Math.max(1, Math.min(m.connections || 4, 16));
  let rec = readRecord(part, url);
  const chunkBytes = rec ? rec.chunk : Math.max(64 << 10, m.chunkBytes || 16 << 20);
  const len = (i) => Math.min(rec.chunk, rec.total - i * rec.chunk);
  const firstMissing = () => {
    if (!rec) return [0, chunkBytes - 1];
    for (let i = 0; i < rec.got.length; i++) if (rec.got[i] < len(i)) return [i * rec.chunk + rec.got[i], i * rec.chunk + len(i) - 1];
    return null;
  };
  let fetched = 0, loaded = 0, resumed = 0, ranged = true;
  let last = 0;
  const progress = (force = false) => {
    const now = performance.now();
    if (!force && now - last < 100) return;
    last = now;
    self.postMessage({ type: "progress", loaded, total: rec ? rec.total : 0, ranged, connections: ranged ? connections : 1, resumed });
  };

  // The probe: the first missing range. A 206 says the server serves ranges.
  let want = firstMissing();
  const complete = !want; // on disk already (its record was kept): only check the server's file is the same
  if (complete) want = [0, 0];
  let resp;
  for (let attempt = 0; ; attempt++) {
    try {
      resp = await fetch(url, { headers: { Range: `bytes=${want[0]}-${want[1]}` }, cache: "no-store", signal });
      if (resp.status >= 500 && attempt < m.retries) { await resp.body?.cancel(); await sleep(250 * (attempt + 1), signal); continue; }
      break;
    } catch (e) {
      if (signal.aborted || attempt >= m.retries) throw e;
      await sleep(250 * (attempt + 1), signal);
    }
  }
  if (resp.status === 206) {
    const cr = parseRange(resp.headers.get("content-range"));
    if (!cr || cr.start !== want[0]) throw new Failure("integrity", `the server answered the range ${want[0]}-${want[1]} with ${resp.headers.get("content-range") || "no Content-Range"}`);
    if (rec && (rec.total !== cr.total || rec.validator !== validatorOf(resp))) {
      // The server's file changed since the partial download: start over.
      await resp.body?.cancel();
      rec = null;
      data.truncate(0);
      part.truncate(0);
      return download(m, signal, data, part, discard);
    }
    if (cr.total > m.maxBytes) {
      await resp.body?.cancel();
      throw new Failure("tooLarge", "too large", { total: cr.total });
    }
    if (complete) {
      await resp.body?.cancel();
      return { total: rec.total, ranged, fetched, resumed: rec.total };
    }
    if (!rec) {
      rec = { url, total: cr.total, validator: validatorOf(resp), chunk: chunkBytes, got: new Array(Math.ceil(cr.total / chunkBytes)).fill(0) };
      // Reserve the whole file now: a quota too small fails here, before a byte is fetched.
      try { data.truncate(cr.total); } catch (e) { await resp.body?.cancel(); return quotaGuard(cr.total)(e); }
      writeRecord(part, rec);
    } else {
      resumed = rec.got.reduce((a, b) => a + b, 0);
      loaded = resumed;
      if (data.getSize() !== rec.total) {
        try { data.truncate(rec.total); } catch (e) { await resp.body?.cancel(); return quotaGuard(rec.total)(e); }
      }
    }
    progress(true);
    await ranges(m, signal, data, part, rec, len, resp, connections, (n, force) => { fetched += n; loaded += n; progress(force); });
    progress(true);
    return { total: rec.total, ranged, fetched, resumed };
  }
  if (resp.status === 200) {
    ranged = false;
    rec = null;
    part.truncate(0);
    discard(); // without ranges a cut download cannot resume: whatever stops it keeps nothing
    const r = await plain(m, signal, data, resp, (n, reset) => { fetched += n; loaded = reset ? 0 : loaded + n; progress(reset); }, (t) => { rec = { total: t }; progress(true); });
    if (!rec.total) rec.total = r.total;
    progress(true);
    return r;
  }
  await resp.body?.cancel();
  throw new Failure("http", `HTTP ${resp.status} ${resp.statusText}`);
}

// ranges fetches every chunk's missing bytes over `connections` requests at
// once; first is the probe's response, the first missing range.
async function ranges(m, signal, data, part, rec, len, first, connections, count) {
  let sinceCommit = 0;
  const commit = () => {
    data.flush();
    writeRecord(part, rec);
    sinceCommit = 0;
  };
  const taken = new Set();
  const nextChunk = () => {
    for (let i = 0; i < rec.got.length; i++) if (rec.got[i] < len(i) && !taken.has(i)) { taken.add(i); return i; }
    return -1;
  };
  // fill reads one response for chunk i into the file at its offset.
  const fill = async (i, resp, from) => {
    const cr = parseRange(resp.headers.get("content-range"));
    if (resp.status !== 206 || !cr) throw new Failure("integrity", `the server answered a Range request with HTTP ${resp.status}${cr ? "" : " and no Content-Range"}`);
    if (cr.total !== rec.total || cr.start !== from || cr.end > i * rec.chunk + len(i) - 1) throw new Failure("integrity", `the server answered bytes ${from}- of ${rec.total} with ${resp.headers.get("content-range")}: the file changed during the download`);
    if (validatorOf(resp) !== rec.validator) throw new Failure("integrity", "the file changed on the server during the download (its ETag or Last-Modified differ)");
    const reader = resp.body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        if (rec.got[i] + value.byteLength > len(i)) throw new Failure("integrity", `the server sent more bytes than the range ${from}-${cr.end} holds`);
        try {
          data.write(value, { at: i * rec.chunk + rec.got[i] });
        } catch (e) {
          await quotaGuard(rec.total)(e);
        }
        rec.got[i] += value.byteLength;
        sinceCommit += value.byteLength;
        count(value.byteLength);
        if (sinceCommit >= COMMIT_BYTES) commit();
      }
    } finally {
      reader.releaseLock();
    }
  };
  const chunk = async (i, resp) => {
    let fails = 0;
    while (rec.got[i] < len(i)) {
      const from = i * rec.chunk + rec.got[i], to = i * rec.chunk + len(i) - 1;
      const before = rec.got[i];
      try {
        if (!resp) {
          resp = await fetch(m.url, { headers: { Range: `bytes=${from}-${to}` }, cache: "no-store", signal });
          if (resp.status >= 500 || resp.status === 429) throw new Error(`HTTP ${resp.status} ${resp.statusText}`);
          if (resp.status !== 206 && resp.status !== 200) throw new Failure("http", `HTTP ${resp.status} ${resp.statusText} for the bytes ${from}-${to}`);
        }
        await fill(i, resp, from);
      } catch (e) {
        if (e.kind || signal.aborted) throw e;
        if (rec.got[i] > before) fails = 0; // it made progress: a dropped connection, not a dead server
        if (++fails > m.retries) throw new Failure("network", `${e.message || e} (after ${m.retries} retries of the bytes ${from}-${to})`);
        await sleep(200 * fails, signal);
      } finally {
        resp = null;
      }
    }
    commit();
    count(0, true); // a chunk is on disk: the progress says so now
  };
  let failure = null;
  const connection = async (resp, i) => {
    try {
      for (; i >= 0 && !failure; i = nextChunk(), resp = null) await chunk(i, resp);
    } catch (e) {
      if (!failure) failure = e;
    }
  };
  const firstChunk = Math.floor(parseRange(first.headers.get("content-range")).start / rec.chunk);
  taken.add(firstChunk);
  const conns = [connection(first, firstChunk)];
  for (let k = 1; k < connections; k++) {
    const i = nextChunk();
    if (i < 0) break;
    conns.push(connection(null, i));
  }
  await Promise.all(conns);
  if (failure) {
    try { commit(); } catch { /* the record stays as last written */ }
    throw failure;
  }
  commit();
}

// plain writes a whole 200 response from the start, and starts over (at
// most m.retries times) when it is cut off.
async function plain(m, signal, data, resp, count, announce) {
  let fetched = 0;
  for (let attempt = 0; ; attempt++) {
    const encoded = resp.headers.get("content-encoding");
    const total = (!encoded || encoded === "identity") ? Number(resp.headers.get("content-length")) || 0 : 0;
    if (total > m.maxBytes) {
      await resp.body?.cancel();
      throw new Failure("tooLarge", "too large", { total });
    }
    announce(total);
    try {
      data.truncate(0);
      if (total) data.truncate(total);
    } catch (e) {
      await resp.body?.cancel();
      await quotaGuard(total)(e);
    }
    let at = 0;
    try {
      const reader = resp.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (at + value.byteLength > (total || m.maxBytes)) throw new Failure(total ? "integrity" : "tooLarge", total ? `the server sent more than its Content-Length of ${total} bytes` : "too large", { total: at + value.byteLength });
        try {
          data.write(value, { at });
        } catch (e) {
          await quotaGuard(total || at + value.byteLength)(e);
        }
        at += value.byteLength;
        fetched += value.byteLength;
        count(value.byteLength, false);
      }
      if (total && at !== total) throw new Error(`the response ended after ${at} of its ${total} bytes`);
      data.flush();
      return { total: at, ranged: false, fetched, resumed: 0 };
    } catch (e) {
      if (e.kind || signal.aborted) throw e;
      if (attempt >= m.retries) {
        throw new Failure("network", `${e.message || e} (the server does not serve ranges, so a cut download starts over: ${m.retries} retries from the start failed)`);
      }
      count(0, true);
      await sleep(200 * (attempt + 1), signal);
      resp = await fetch(m.url, { cache: "no-store", signal });
      if (!resp.ok) throw new Failure("http", `HTTP ${resp.status} ${resp.statusText}`);
    }
  }
}
