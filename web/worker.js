// The engine's Web Worker: starts the Go engine (build/worker.wasm), which
// takes over onmessage (see wasm/browser/worker/main_js.go for the protocol).
"use strict";
importScripts("../build/wasm_exec.js");

let memory = null;

// picolmMemory is called by the Go bridge to report memory in use: the wasm
// linear memory (the Go heap, never shrinks: its size is the peak) and the
// worker's JS heap where the browser exposes it.
globalThis.picolmMemory = () => ({
  wasmBytes: memory ? memory.buffer.byteLength : 0,
  jsHeapBytes: self.performance && performance.memory ? performance.memory.usedJSHeapSize : 0,
});

// The lead's wait for a loading shard (wasm/browser/worker/split_js.go's
// channel): one call from Go, without arguments (Go would box them) — Go
// writes them into the channel's slots 24..27 first (slot, value, ms, µs
// of polling).
globalThis.picolmChannel = {
  open(sab) {
    const i32 = new Int32Array(sab);
    return {
      // leadAwait returns slot i32[24] once it no longer holds i32[25], or
      // after about i32[26] ms: polling for i32[27] µs first, then sleeping.
      leadAwait() {
        const i = i32[24], v = i32[25], ms = i32[26], spinMs = i32[27] / 1000;
        const t0 = performance.now();
        for (let n = 1; ; n++) {
          const cur = Atomics.load(i32, i);
          if (cur !== v || ms <= 0) return cur;
          if ((n & 255) === 0) {
            const el = performance.now() - t0;
            if (el >= ms) return cur;
            if (el > spinMs) Atomics.wait(i32, i, v, ms - el);
          }
        }
      },
    };
  },
};

// The synchronisation of a split model's mesh (split_js.go's sabMesh), one
// call each from Go, without arguments: slot 0 counts the arrivals of
// every part at the exchanges (exchange g is complete at g·parts), slot 1
// is set when a part failed, slot 192+part counts the part's sleeps. This
// part's exchange count lives here.
globalThis.picolmMesh = {
  open(sab, parts, part, spinUs, ms) {
    const i32 = new Int32Array(sab);
    const spinMs = spinUs / 1000;
    let gen = 0;
    return {
      // arrive: this part has published its values of the next exchange.
      arrive() {
        gen++;
        const v = Atomics.add(i32, 0, 1) + 1;
        if (((v - gen * parts) | 0) >= 0) Atomics.notify(i32, 0);
      },
      // await returns 0 once every part has arrived at this part's last
      // exchange, 1 when the mesh failed, 2 after about ms ms without
      // either: polling for spinUs µs first, then sleeping.
      await() {
        const target = (gen * parts) | 0;
        const t0 = performance.now();
        for (let n = 1; ; n++) {
          const cur = Atomics.load(i32, 0);
          if (((cur - target) | 0) >= 0) return 0;
          if (Atomics.load(i32, 1) !== 0) return 1;
          if ((n & 63) === 0) {
            const el = performance.now() - t0;
            if (el >= ms) return 2;
            if (el > spinMs) {
              i32[192 + part]++;
              Atomics.wait(i32, 0, cur, ms - el);
            }
          }
        }
      },
      // fail ends every part's waits.
      fail() {
        Atomics.store(i32, 1, 1);
        Atomics.notify(i32, 0);
      },
    };
  },
};

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// STALL_MS is how long one read of a stream (a Blob slice's, a Range
// reply's) may deliver nothing before it is given up and tried again: a
// stream that never settles would otherwise hold a Worker's load forever
// (a split model's lead gives up on a shard that reads nothing for 5
// minutes; three tries fit in that).
const STALL_MS = 60000;
const stalled = () => new Error(`picolm:stalled: a read delivered nothing for ${STALL_MS / 1000} s`);

// timed is p, or a stalled() rejection when p has not settled in STALL_MS.
function timed(p) {
  let t;
  return Promise.race([p, new Promise((_, reject) => { t = setTimeout(() => reject(stalled()), STALL_MS); })])
    .finally(() => clearTimeout(t));
}
const noRange = () => new Error("picolm:no-range: the server answered a Range request with the whole file");

// readInto reads the first n bytes of a byte stream into the staging
// buffer (picolmSource.stage) and resolves with how many came: a BYOB
// reader fills the one buffer (it moves from read to read: stage is
// replaced by its latest view), so no array is made per read; elsewhere
// the chunks are copied in.
async function readInto(body, n) {
  const src = globalThis.picolmSource;
  let reader = null;
  try { reader = body.getReader({ mode: "byob" }); } catch { /* not a byte stream */ }
  let off = 0;
  if (reader) {
    let buf = src.stage.buffer;
    try {
      while (off < n) {
        const { value, done } = await timed(reader.read(new Uint8Array(buf, off, n - off)));
        if (value) buf = value.buffer;
        if (done) break;
        off += value.byteLength;
      }
    } finally {
      src.stage = new Uint8Array(buf);
      reader.cancel().catch(() => {});
    }
    return off;
  }
  reader = body.getReader();
  try {
    while (off < n) {
      const { value, done } = await timed(reader.read());
      if (done) break;
      const take = Math.min(value.byteLength, n - off);
      src.stage.set(value.subarray(0, take), off);
      off += take;
    }
  } finally {
    reader.cancel().catch(() => {});
  }
  return off;
}

// fetchRange reads bytes [start, end) of url into the staging buffer:
// {n, size (the file's, from Content-Range)}.
async function fetchRange(url, start, end) {
  for (let attempt = 1; ; attempt++) {
    try {
      const resp = await timed(fetch(url, { headers: { Range: `bytes=${start}-${end - 1}` }, cache: "no-store" }));
      if (resp.status === 200) {
        resp.body && resp.body.cancel().catch(() => {});
        throw noRange();
      }
      if (resp.status !== 206) throw new Error(`HTTP ${resp.status} ${resp.statusText} for bytes ${start}-${end - 1}`);
      const m = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(resp.headers.get("content-range") || "");
      if (!m || Number(m[1]) !== start) throw noRange();
      const n = await readInto(resp.body, Math.min(end, Number(m[2]) + 1) - start);
      return { n, size: m[3] === "*" ? NaN : Number(m[3]) };
    } catch (e) {
      if (String(e.message).startsWith("picolm:no-range") || attempt >= 3) throw e;
      await sleep(250 * attempt); // a dropped connection, a stalled read: try again
    }
  }
}

// picolmSource reads a model's files for a Worker that loads only its own
// rows (wasm/browser/worker/parts_js.go): a URL by HTTP Range requests (no
// HTTP cache: the bytes go straight into the engine's memory), a Blob (a
// picked File, the OPFS cache's disk-backed File) by slices. Each read
// lands in stage, which Go copies out of.
globalThis.picolmSource = {
  stage: new Uint8Array(0),
  // release drops stage (called once a Worker's rows are read).
  release() { this.stage = new Uint8Array(0); },
  // reserve makes stage at least n bytes.
  reserve(n) { if (this.stage.byteLength < n) this.stage = new Uint8Array(n); },
  // read reads bytes [start, end) of src into stage and resolves with their count.
  async read(src, start, end) {
    this.reserve(end - start);
    if (typeof src === "string") return (await fetchRange(src, start, end)).n;
    for (let attempt = 1; ; attempt++) {
      try {
        return await readInto(src.slice(start, end).stream(), end - start);
      } catch (e) {
        if (!String(e.message).startsWith("picolm:stalled") || attempt >= 3) throw e;
        console.warn(`picolm: reading bytes ${start}-${end - 1} of ${src.name || "a Blob"} stalled; trying again`);
      }
    }
  },
  // probe reads the first n bytes (fewer when the file is shorter) into
  // stage: {size, n}, or {noRange: true} for a server without Range support.
  async probe(src, n) {
    this.reserve(n);
    if (typeof src !== "string") return { size: src.size, n: await readInto(src.slice(0, n).stream(), Math.min(n, src.size)) };
    try {
      const r = await fetchRange(src, 0, n);
      if (!Number.isFinite(r.size)) return { noRange: true };
      return r;
    } catch (e) {
      if (String(e.message).startsWith("picolm:no-range")) return { noRange: true };
      throw e;
    }
  },
};

(async () => {
  try {
    const go = new Go();
    // The build web/picolm.js chose (?wasm=relaxed or simd128); a page
    // served without the relaxed build gets the SIMD128 one.
    let build = new URL(self.location.href).searchParams.get("wasm") === "relaxed" ? "relaxed" : "simd128";
    const file = (b) => new URL(b === "relaxed" ? "../build/worker-relaxed.wasm" : "../build/worker.wasm", self.location.href);
    let resp = await fetch(file(build));
    if (!resp.ok && build === "relaxed") {
      build = "simd128";
      resp = await fetch(file(build));
    }
    self.postMessage({ type: "build", build });
    const { instance } = await WebAssembly.instantiateStreaming(resp, go.importObject);
    memory = instance.exports.mem;
    await go.run(instance);
    self.postMessage({ type: "fatal", message: "the engine exited" });
  } catch (e) {
    self.postMessage({ type: "fatal", message: "the engine failed to start: " + (e && e.message ? e.message : e) });
  }
})();
