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

// The primitives of a split model's channel (wasm/browser/worker/split_js.go), one
// call each from Go: a call from Go into JS costs far more than an
// Atomics.load, so the polling happens here. Slots: 0 request sequence,
// 1 response sequence, 3 status, 4 group id, 5 activations, 6 bytes per
// activation, 7 results, 12 the shard's busy µs, 13 requests served, 14 and
// 15 the shard's and the lead's sleeps.
globalThis.picolmChannel = {
  // request publishes a product for the shard (the lead).
  request(i32, group, acts, actLen, outLen, seq) {
    i32[4] = group; i32[5] = acts; i32[6] = actLen; i32[7] = outLen;
    Atomics.store(i32, 0, seq);
    Atomics.notify(i32, 0);
  },
  // reply publishes the shard's answer to request seq.
  reply(i32, status, outLen, seq, busyUs) {
    i32[3] = status; i32[7] = outLen; i32[12] = busyUs; i32[13]++;
    Atomics.store(i32, 1, seq);
    Atomics.notify(i32, 1);
  },
  // await returns slot i once it no longer holds v, or after about ms
  // milliseconds: polling for spinMs first, then sleeping.
  await(i32, i, v, ms, spinMs) {
    const t0 = performance.now();
    for (let n = 1; ; n++) {
      const cur = Atomics.load(i32, i);
      if (cur !== v || ms <= 0) return cur;
      if ((n & 255) === 0) {
        const el = performance.now() - t0;
        if (el >= ms) return cur;
        if (el > spinMs) {
          if (i < 2) i32[14 + i]++; // the shard's or the lead's sleeps (slots 14, 15)
          Atomics.wait(i32, i, v, ms - el);
        }
      }
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
