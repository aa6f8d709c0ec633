// bigmodel.mjs — a model over 4 GiB in headless Chromium, split over Workers
// that each read only their rows by HTTP Range requests (run by hand; see
// README "Models over 4 GiB"):
//
//   go run ./scripts/synth -preset llama3-8b -random-blocks -sparse -o /tmp/l3-8b.gguf
//   scripts/serve.sh --build-only
//   node web/test/bigmodel.mjs /tmp/l3-8b.gguf [WORKERS] [TOKENS]
//
// It serves the file (hard-linked into a temporary directory, so the file
// must be on the same file system as the system's temporary directory)
// from build/serve, loads it with {workers: WORKERS (default 2), cache:
// false}, generates TOKENS (default 8) greedy tokens, and prints the load
// time, tok/s, the Workers' wasm memories, the memory once loaded (settled, 2 s
// after) and after generating, and the peaks (sampled every 200 ms from /proc's smaps_rollup)
// of the renderer's RSS (the page and its Workers) and of the summed RSS and PSS
// of every Chromium process, and the renderers' RSS split by mapping (idle,
// loaded and at the peak: breakdown), as JSON.
import { linkSync, readFileSync, statSync } from "node:fs";
import { join, basename } from "node:path";
import { startServer, launch } from "./harness.mjs";
import { descendants } from "./procs.mjs";

const [file, workersArg, tokensArg] = process.argv.slice(2);
if (!file) {
  console.error("usage: node web/test/bigmodel.mjs MODEL.gguf [WORKERS] [TOKENS]");
  process.exit(2);
}
const workers = Number(workersArg || 2), tokens = Number(tokensArg || 8);
const size = statSync(file).size;

// rss sums the resident memory of the Chromium processes among pid's descendants (bytes), and of the renderers.
function rss(root) {
  let all = 0, renderer = 0, allPss = 0;
  const pids = [];
  for (const { pid } of descendants(root)) {
    let cmd, roll;
    try {
      cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (!cmd.includes("chrom")) continue;
      roll = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
    } catch { continue; /* gone */ }
    const kb = Number(/Rss:\s+(\d+)/.exec(roll)?.[1] || 0);
    all += kb * 1024;
    allPss += Number(/Pss:\s+(\d+)/.exec(roll)?.[1] || 0) * 1024;
    if (cmd.includes("--type=renderer")) { renderer += kb * 1024; pids.push(pid); }
  }
  return { all, allPss, renderer, pids };
}

// breakdown splits the renderers' RSS by mapping (bytes): "big" the
// writable anonymous mappings of 64 MiB or more (the wasm memories'
// accessible parts, large ArrayBuffers), "anon" the other anonymous
// mappings (V8's heaps and code, malloc), "file" the file-backed ones
// (shared libraries, fonts) and "shmem" the shared memory (/dev/shm,
// memfd: IPC). anonBySize is the anon RSS (MB) and mapping count by
// permissions and size (a power of two of MiB).
function breakdown(pids) {
  const out = { big: 0, anon: 0, file: 0, shmem: 0, bigMaps: [], anonBySize: {} };
  for (const p of pids) {
    let smaps;
    try { smaps = readFileSync(`/proc/${p}/smaps`, "utf8"); } catch { continue; }
    let kind = "anon", size = 0, perms = "";
    for (const line of smaps.split("\n")) {
      const h = /^[0-9a-f]+-[0-9a-f]+ (\S+) \S+ \S+ (\d+)\s*(.*)$/.exec(line);
      if (h) {
        const path = h[3];
        perms = h[1];
        kind = path.startsWith("/dev/shm") || path.includes("memfd:") ? "shmem" : h[2] !== "0" ? "file" : "anon";
        continue;
      }
      const m = /^(Size|Rss):\s+(\d+)/.exec(line);
      if (!m) continue;
      const kb = Number(m[2]);
      if (m[1] === "Size") { size = kb; continue; }
      let k = kind;
      if (k === "anon" && perms.startsWith("rw") && size >= 64 << 10) { k = "big"; out.bigMaps.push(kb * 1024); }
      out[k] += kb * 1024;
      if (k === "anon" && kb > 0) {
        const b = `${perms} ${size >= 1024 ? `${2 ** Math.floor(Math.log2(size >> 10))}M+` : "<1M"}`;
        const e = (out.anonBySize[b] = out.anonBySize[b] || { maps: 0, mb: 0 });
        e.maps++;
        e.mb = +(e.mb + kb / 1024).toFixed(1);
      }
    }
  }
  return out;
}

const server = await startServer();
linkSync(file, join(server.models, basename(file)));
const browser = await launch();
const pid = process.pid; // the Chromium processes are this one's descendants
let peak = { all: 0, allPss: 0, renderer: 0 };
let peakBreakdown = null; // breakdown() at the renderers' peak RSS
const timer = setInterval(() => {
  const r = rss(pid);
  if (r.renderer > peak.renderer) peakBreakdown = breakdown(r.pids);
  for (const k of Object.keys(peak)) peak[k] = Math.max(peak[k], r[k]);
}, 200);
try {
  const page = await browser.newPage();
  page.on("console", (m) => { if (m.type() === "error") console.error("page:", m.text()); });
  await page.goto(`${server.url}web/test/shards.html`);
  await page.waitForFunction(() => window.ready);
  const idle = rss(pid);
  const idleBreakdown = breakdown(idle.pids);
  const r = await page.evaluate(async ([u, w]) => {
    const { PicoLM } = await import("../picolm.js");
    const t0 = performance.now();
    window.model = await PicoLM.load(u, { workers: w, cache: false });
    return { loadMs: performance.now() - t0, info: window.model.info, memory: window.model.memory };
  }, [`${server.url}test-models/${basename(file)}`, workers]);
  const loadPeak = { ...peak };
  await new Promise((res) => setTimeout(res, 2000));
  const loaded = rss(pid); // settled, before generating
  const loadedBreakdown = breakdown(loaded.pids);
  const g = await page.evaluate(async (n) => {
    const it = window.model.generate("Once upon a time", { maxTokens: n, temperature: 0 });
    let text = "";
    for await (const t of it) text += t;
    return { text, stats: it.stats };
  }, tokens);
  const genPeak = rss(pid);
  await page.evaluate(() => window.model.unload());
  r.text = g.text;
  r.stats = g.stats;
  console.log(JSON.stringify({
    file: basename(file), bytes: size, workers: r.info.workers, loadSeconds: +(r.loadMs / 1000).toFixed(1),
    promptTokens: r.stats.promptTokens, generated: r.stats.generated, prefillMs: r.stats.prefillMs, decodeTokensPerSec: +r.stats.tokensPerSec.toFixed(3),
    wasmBytes: r.memory, idle, loadPeak, loaded, afterGenerating: genPeak, peak,
    idleBreakdown, loadedBreakdown, peakBreakdown,
    peakRendererOverModel: +(peak.renderer / size).toFixed(3), peakAllPssOverModel: +(peak.allPss / size).toFixed(3), text: r.text,
  }, null, 1));
} finally {
  clearInterval(timer);
  await browser.close();
  server.stop();
}
