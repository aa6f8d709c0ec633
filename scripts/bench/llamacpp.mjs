// node-llama-cpp runner of scripts/bench: one greedy generation on the CPU,
// timed, printed as one JSON line.
//   NODE_PATH=<dir with node_modules> node llamacpp.mjs MODEL THREADS PROMPT_TOKENS_JSON GEN
// The prompt is given as token ids (the bench's 64-token prompt, BOS first),
// so every engine runs the same tokens.
import { createRequire } from "node:module";
import { join } from "node:path";

const [model, threads, promptJSON, gen] = process.argv.slice(2);
const require = createRequire(join(process.env.BENCH_NPM, "node_modules", "x.js"));
const { getLlama } = await import(require.resolve("node-llama-cpp"));

const llama = await getLlama({ gpu: false, build: "never", progressLogs: false, logLevel: "error" });
const t0 = performance.now();
const m = await llama.loadModel({ modelPath: model, gpuLayers: 0, useMmap: true });
const ctx = await m.createContext({ contextSize: 2048, threads: Number(threads), batchSize: 512, sequences: 1 });
const loadMs = performance.now() - t0;
const seq = ctx.getSequence();
const prompt = JSON.parse(promptJSON);

const n = Number(gen);
let first = 0, count = 0;
const start = performance.now();
for await (const _ of seq.evaluate(prompt, { temperature: 0 })) {
  count++;
  if (count === 1) first = performance.now();
  if (count >= n) break;
}
const end = performance.now();
const ttft = first - start;
console.log(JSON.stringify({
  loadMs,
  ttftMs: ttft,
  prefillTokS: prompt.length / (ttft / 1000),
  decodeTokS: (count - 1) / ((end - first) / 1000),
  generated: count,
  rssMB: process.memoryUsage().rss / 2 ** 20,
}));
await ctx.dispose();
await m.dispose();
await llama.dispose();
