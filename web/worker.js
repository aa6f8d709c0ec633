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

// The synchronisation of a split model's mesh (split_js.go's sabMesh), one
// call each from Go, without arguments: slot 0 counts the arrivals of
// every part at the exchanges (exchange g is complete at g·parts), slot 1
// is set when a part failed, slot 192+part counts the part's sleeps. This
// part's exchange count lives here.
//
// A wait polls, then sleeps in Atomics.wait. How long it polls adapts
// between SPIN_MIN and spinUs (split_js.go's meshSpinUs): a wait that slept
// but ended within twice the polling time doubles it; one that ended later
// than 8 times it halves it. Polling pays while the other parts arrive soon
// (waking from Atomics.wait costs a futex wake-up on both sides) and costs
// a core when the cores are shared (a descheduled part makes the waits run
// long, and the polling shrinks).
globalThis.picolmMesh = {
  open(sab, parts, part, spinUs, ms) {
    const SPIN_MIN = 20;
    const i32 = new Int32Array(sab);
    let gen = 0;
    let us = spinUs;
    const adapt = (el, spinMs) => {
      if (el > spinMs && el <= 2 * spinMs) us = Math.min(spinUs, 2 * us);
      else if (el > 8 * spinMs) us = Math.max(SPIN_MIN, us >> 1);
    };
    return {
      // arrive: this part has published its values of the next exchange.
      arrive() {
        gen++;
        const v = Atomics.add(i32, 0, 1) + 1;
        if (((v - gen * parts) | 0) >= 0) Atomics.notify(i32, 0);
      },
      // await returns 0 once every part has arrived at this part's last
      // exchange, 1 when the mesh failed, 2 after about ms ms without
      // either.
      await() {
        const target = (gen * parts) | 0;
        const spinMs = us / 1000;
        const t0 = performance.now();
        for (let n = 1; ; n++) {
          const cur = Atomics.load(i32, 0);
          if (((cur - target) | 0) >= 0) {
            adapt(performance.now() - t0, spinMs);
            return 0;
          }
          if (Atomics.load(i32, 1) !== 0) return 1;
          if ((n & 63) === 0) {
            const el = performance.now() - t0;
            if (el >= ms) {
              adapt(el, spinMs);
              return 2;
            }
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

const noRange = () => new Error("picolm:no-range: the server answered a Range request with the whole file");

// STALL_MS is how long one read of a stream (a Blob slice's, a Range
// reply's) may deliver nothing before it is given up and tried again: a
// read that never settles would otherwise hold a Worker's load forever (a
// split model's lead gives up on a shard that reads nothing for 5 minutes;
// three tries fit in that). The worker script's URL may set it (?stallMs=,
// 100 ms to 100 s: load's workerURL option), as the tests do.
const STALL_MS = (() => {
  const ms = Number(new URL(self.location.href).searchParams.get("stallMs"));
  return ms >= 100 && ms <= 100000 ? ms : 30000;
})();

// timed is p, or a picolm:stalled rejection when p has not settled in STALL_MS.
function timed(p) {
  let t;
  const stall = new Promise((_, reject) => {
    t = setTimeout(() => reject(new Error(`picolm:stalled: a read delivered nothing for ${STALL_MS / 1000} s`)), STALL_MS);
  });
  return Promise.race([p, stall]).finally(() => clearTimeout(t));
}

// readInto reads the first n bytes of a byte stream into the staging
// buffer (picolmSource.stage) and resolves with how many came. The stream
// is read to its end (its last read says done) and only cancelled when it
// fails or holds more than n bytes: in Chromium 156 a fetch body cancelled
// after its last byte keeps every chunk it delivered in memory (about one
// 1–2 MiB allocation per chunk, still there after a garbage collection,
// until the Worker ends), which was most of a model's size again while it
// loaded. byob (a fetch body) reads with a BYOB reader straight into stage,
// whose buffer each read hands back (src.stage is replaced by the returned
// view's buffer), so the body allocates nothing per chunk; where the
// browser has no BYOB reader for the stream, and for Blob slices (a BYOB
// read of one was left pending for good in Chromium 156 in about half the
// first loads of a model split over two Workers), a default reader copies
// the chunks in (short-lived garbage).
async function readInto(body, n, byob) {
  const src = globalThis.picolmSource;
  src.reserve(n); // a read given up on (stalled) kept the buffer it was filling
  let reader = null;
  if (byob) {
    try { reader = body.getReader({ mode: "byob" }); } catch { /* not a byte stream: a default reader */ }
  }
  const inPlace = !!reader;
  if (!reader) reader = body.getReader();
  let off = 0, ended = false;
  try {
    while (off < n) {
      let r;
      if (inPlace) {
        r = await timed(reader.read(new Uint8Array(src.stage.buffer, off, n - off)));
        if (r.value) src.stage = new Uint8Array(r.value.buffer);
        if (r.done) { ended = true; break; }
        off += r.value.byteLength;
        continue;
      }
      r = await timed(reader.read());
      if (r.done) { ended = true; break; }
      const take = Math.min(r.value.byteLength, n - off);
      src.stage.set(r.value.subarray(0, take), off);
      off += take;
    }
    if (!ended) {
      // n bytes came: one more read sees the end (into a byte of its own, so
      // that a stream longer than n leaves stage's bytes as they are).
      const r = await timed(inPlace ? reader.read(new Uint8Array(1)) : reader.read());
      ended = r.done;
    }
  } finally {
    if (ended) reader.releaseLock();
    else await reader.cancel().catch(() => {}); // failed, or longer than n: its bytes past n are not wanted
  }
  return off;
}

// fetchRange reads bytes [start, end) of url into the staging buffer:
// {n, size (the file's, from Content-Range)}. A dropped connection or a
// stalled read is tried again, three times in all.
async function fetchRange(url, start, end) {
  for (let attempt = 1; ; attempt++) {
    const abort = new AbortController(); // a stalled attempt's connection is let go
    try {
      const resp = await timed(fetch(url, { headers: { Range: `bytes=${start}-${end - 1}` }, cache: "no-store", signal: abort.signal }));
      if (resp.status === 200) {
        resp.body && resp.body.cancel().catch(() => {});
        throw noRange();
      }
      if (resp.status !== 206) throw new Error(`HTTP ${resp.status} ${resp.statusText} for bytes ${start}-${end - 1}`);
      const m = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(resp.headers.get("content-range") || "");
      if (!m || Number(m[1]) !== start) throw noRange();
      const n = await readInto(resp.body, Math.min(end, Number(m[2]) + 1) - start, true);
      return { n, size: m[3] === "*" ? NaN : Number(m[3]) };
    } catch (e) {
      abort.abort();
      if (String(e.message).startsWith("picolm:no-range") || attempt >= 3) throw e;
      await sleep(250 * attempt);
    }
  }
}

// readBlob reads bytes [start, end) of a Blob into the staging buffer; a
// stalled read is tried again, three times in all.
async function readBlob(blob, start, end) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await readInto(blob.slice(start, end).stream(), end - start, false);
    } catch (e) {
      if (!String(e.message).startsWith("picolm:stalled") || attempt >= 3) throw e;
      console.warn(`picolm: reading bytes ${start}-${end - 1} of ${blob.name || "a Blob"} stalled; trying again`);
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
    if (typeof src !== "string") return readBlob(src, start, end);
    return (await fetchRange(src, start, end)).n;
  },
  // probe reads the first n bytes (fewer when the file is shorter) into
  // stage: {size, n}, or {noRange: true} for a server without Range support.
  async probe(src, n) {
    this.reserve(n);
    if (typeof src !== "string") return { size: src.size, n: await readBlob(src, 0, Math.min(n, src.size)) };
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
