// ref.mjs: llama.cpp's greedy continuations of the models in a manifest
// written by `go run ./scripts/llamaref -o DIR`, as JSON lines on stdout (the
// format of ../shared/testdata/synth/greedy.jsonl, plus the model's spec and
// sha256 so a test can regenerate it):
//
//	node scripts/llamaref/ref.mjs DIR > engine/testdata/arch-refs.jsonl
//
// Each line names the CPU that made it (cpu: its model and the x86 features
// ggml's CPU backend chooses its kernels by, from /proc/cpuinfo), since
// llama.cpp's sums, and so the margins, depend on the path it picks.
//
// It needs node-llama-cpp 3.21.1, which is not a dependency of the project:
// install it in some directory and name that directory in NLC_DIR (see
// README.md). Flash attention is off: the engine reproduces llama.cpp's
// plain attention (fp16 K·q and fp16 softmax weights).
import fs from "node:fs";
import {createRequire} from "node:module";
import os from "node:os";
import path from "node:path";
import {pathToFileURL} from "node:url";

const from = process.env.NLC_DIR ? path.join(path.resolve(process.env.NLC_DIR), "package.json") : import.meta.filename;
const {getLlama} = await import(pathToFileURL(createRequire(from).resolve("node-llama-cpp")).href);

const dir = process.argv[2];
if (!dir) {
  console.error("usage: node ref.mjs DIR");
  process.exit(2);
}
const prompts = ["Once upon a time", "The cat sat on the", "Hello, wörld! 123"];
const nPredict = 32;
const manifest = JSON.parse(fs.readFileSync(path.join(dir, "manifest.json"), "utf8"));
const cpu = cpuName();
const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});

// cpuName returns the CPU's model and its kernel-relevant features.
function cpuName() {
  let flags = [];
  try {
    const m = fs.readFileSync("/proc/cpuinfo", "utf8").match(/^flags\s*:(.*)$/m);
    const have = new Set(m ? m[1].trim().split(/\s+/) : []);
    flags = ["avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512_vnni", "avx512_bf16", "avx_vnni", "amx_int8", "amx_bf16"].filter(f => have.has(f));
  } catch {}
  return `${os.cpus()[0]?.model.trim() ?? "unknown"} (${os.arch()}${flags.length ? ", " + flags.join(", ") : ""})`;
}

// top2 returns the most probable token and log(p1/p2) = logit1 - logit2.
function top2(probs) {
  let best = -1, bp = -1, sp = -1;
  for (const [tok, p] of probs) {
    if (p > bp) { sp = bp; bp = p; best = tok; } else if (p > sp) { sp = p; }
  }
  return [best, Math.log(bp / sp)];
}

for (const m of manifest) {
  const model = await llama.loadModel({modelPath: m.file, gpuLayers: 0, useMmap: true});
  for (const prompt of prompts) {
    const ctx = await model.createContext({contextSize: 256, threads: 1, batchSize: 512, sequences: 1, flashAttention: false});
    const seq = ctx.getSequence();
    const gen = {generateNext: {probabilities: true, options: {temperature: 1, topK: 0, topP: 1, minP: 0}}};
    const promptIDs = [...(model.tokens.shouldPrependBosToken && model.tokens.bos != null ? [model.tokens.bos] : []), ...model.tokenize(prompt, false)];
    let res = await seq.controlledEvaluate(promptIDs.map((t, i) => i === promptIDs.length - 1 ? [t, gen] : t));
    const ids = [], margins = [];
    for (let i = 0; i < nPredict; i++) {
      const [tok, margin] = top2(res[res.length - 1].next.probabilities);
      ids.push(tok);
      margins.push(Number(margin.toPrecision(5)));
      if (i + 1 < nPredict) res = await seq.controlledEvaluate([[tok, gen]]);
    }
    console.log(JSON.stringify({
      model: m.spec.name, spec: m.spec, sha256: m.sha256, cpu, prompt, n_predict: nPredict, temp: 0,
      prompt_ids: promptIDs, ids, min_margin: Math.min(...margins), margins,
    }));
    await ctx.dispose();
  }
  await model.dispose();
}
