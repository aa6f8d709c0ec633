// The engine's Web Worker: starts the Go engine (build/worker.wasm), which
// takes over onmessage (see wasm/worker/main_js.go for the protocol).
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

(async () => {
  try {
    const go = new Go();
    const url = new URL("../build/worker.wasm", self.location.href);
    const { instance } = await WebAssembly.instantiateStreaming(fetch(url), go.importObject);
    memory = instance.exports.mem;
    await go.run(instance);
    self.postMessage({ type: "fatal", message: "the engine exited" });
  } catch (e) {
    self.postMessage({ type: "fatal", message: "the engine failed to start: " + (e && e.message ? e.message : e) });
  }
})();
