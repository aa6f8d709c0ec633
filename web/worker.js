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

// The primitives of a split model's channel (wasm/browser/worker/split_js.go),
// one call each from Go: a call from Go into JS costs far more than an
// Atomics.load, so the polling happens here, and the calls take no
// arguments (Go would box them: an allocation per call) — Go writes each
// side's fields into the channel's slots first. Slots: 0 request sequence,
// 1 response sequence, 14 the request's sequence, 19 the reply's, 20
// requests served, 22 and 23 the shard's and the lead's sleeps, 24..27 the
// lead's await arguments (slot, value, ms, µs of polling), 28..31 the
// shard's.
globalThis.picolmChannel = {
  open(sab) {
    const i32 = new Int32Array(sab);
    // wait returns slot i32[a] once it no longer holds i32[a+1], or after
    // about i32[a+2] ms: polling for i32[a+3] µs first, then sleeping
    // (counted in slot sleeps).
    const wait = (a, sleeps) => {
      const i = i32[a], v = i32[a + 1], ms = i32[a + 2], spinMs = i32[a + 3] / 1000;
      const t0 = performance.now();
      for (let n = 1; ; n++) {
        const cur = Atomics.load(i32, i);
        if (cur !== v || ms <= 0) return cur;
        if ((n & 255) === 0) {
          const el = performance.now() - t0;
          if (el >= ms) return cur;
          if (el > spinMs) {
            i32[sleeps]++;
            Atomics.wait(i32, i, v, ms - el);
          }
        }
      }
    };
    return {
      // request publishes the lead's request (slots 8..14).
      request() {
        Atomics.store(i32, 0, i32[14]);
        Atomics.notify(i32, 0);
      },
      // reply publishes the shard's reply (slots 16..21).
      reply() {
        Atomics.store(i32, 1, i32[19]);
        Atomics.notify(i32, 1);
      },
      leadAwait: () => wait(24, 23),
      shardAwait: () => wait(28, 22),
    };
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
