// bigmodel.mjs — the memory of a model over 4 GiB in headless Chromium,
// split over Workers that each read only their rows (run by hand; see
// README "Models over 4 GiB"):
//
//   go run ./scripts/synth -preset llama3-8b -random-blocks -sparse -o /tmp/l3-8b.gguf
//   scripts/serve.sh --build-only
//   node web/test/bigmodel.mjs [-cache] /tmp/l3-8b.gguf [WORKERS] [TOKENS]
//
// It serves the file (hard-linked into a temporary directory, so the file
// must be on the same file system as the system's temporary directory)
// from build/serve and opens web/test/bigmodel.html in a Chromium of its
// own, which loads it with {workers: WORKERS (default 2), cache: false}
// (Range requests straight into each Worker's memory) and generates TOKENS
// (default 8) greedy tokens. With -cache it loads with {cache: true}
// instead: downloaded into the OPFS cache and read from there ("download"),
// unloaded, then loaded and run again from the cache alone ("cached"); the
// file is deleted from the cache after, but it takes the model's size on
// disk meanwhile (in a temporary profile, removed at the end).
//
// Chromium is started directly, without DevTools: under Playwright (any
// CDP client with the Network domain enabled, which Playwright enables in
// every Worker) Chromium's DevTools network agent keeps the bodies of the
// Workers' Range replies for the inspector, up to its buffer limits
// (hundreds of MB per Worker), memory a user's tab does not spend: it was
// most of the "model + 18.5%" measured with Playwright on 2026-12-02. The
// page reports each step by a request the server logs (-log-requests).
//
// It prints, as JSON: the load times, tok/s, the Workers' wasm memories,
// the renderers' RSS (the page and its Workers) and the summed RSS and PSS
// of every Chromium process, sampled every 200 ms from /proc's
// smaps_rollup: idle (the page loaded, no model), and for each step
// (loading, generating, per phase) its peak, with the renderers' RSS split
// by mapping at that peak (breakdown), and the overall peak over the
// model's size.
import { spawn } from "node:child_process";
import { existsSync, linkSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, basename } from "node:path";
import { chromiumArgs, startServer } from "./harness.mjs";
import { descendants } from "./procs.mjs";

const args = process.argv.slice(2);
const cache = args[0] === "-cache";
if (cache) args.shift();
const [file, workersArg, tokensArg] = args;
if (!file) {
  console.error("usage: node web/test/bigmodel.mjs [-cache] MODEL.gguf [WORKERS] [TOKENS]");
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
      if (k === "anon" && perms.startsWith("rw") && size >= 64 << 10) { k = "big"; if (kb > 0) out.bigMaps.push(kb * 1024); }
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

const bare = ({ all, allPss, renderer }) => ({ all, allPss, renderer });
const over = (n) => +(n / size).toFixed(3);

const log = join(mkdtempSync(join(tmpdir(), "picolm-bigmodel-")), "requests.jsonl");
const server = await startServer(undefined, ["-log-requests", log]);
linkSync(file, join(server.models, basename(file)));
const profile = mkdtempSync(join(tmpdir(), "picolm-profile-"));
const page = new URL("web/test/bigmodel.html", server.url);
page.search = new URLSearchParams({ url: `${server.url}test-models/${basename(file)}`, workers, tokens, cache: cache ? 1 : 0 }).toString();
const chromium = spawn(process.env.CHROMIUM || "/usr/bin/chromium", [...chromiumArgs, `--user-data-dir=${profile}`, page.href], { stdio: "ignore" });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// reports reads the page's reports from the server's log.
let seen = 0;
function reports() {
  if (!existsSync(log)) return [];
  const lines = readFileSync(log, "utf8").split("\n").filter((l) => l.includes("/bigmodel-report/"));
  const out = lines.slice(seen).map((l) => {
    const path = JSON.parse(l).path;
    return JSON.parse(Buffer.from(path.slice(path.indexOf("/bigmodel-report/") + 17), "base64url").toString());
  });
  seen = lines.length;
  return out;
}

const out = { file: basename(file), bytes: size, workers, cache, steps: [] };
// Each sample is {t, all, allPss, renderer, breakdown}; a step's samples are
// those taken before its report's time (reports can arrive late, or two at once).
let idle = null, samples = [], peak = { all: 0, allPss: 0, renderer: 0 };
let error = null;
try {
  for (let done = false; !done;) {
    await sleep(200);
    if (chromium.exitCode !== null) throw new Error(`chromium exited with ${chromium.exitCode}`);
    const r = rss(process.pid);
    if (idle) {
      const s = { t: Date.now(), ...bare(r), breakdown: null };
      if (!samples.some((x) => x.renderer >= r.renderer)) s.breakdown = breakdown(r.pids); // the step's peak so far
      samples.push(s);
      for (const k of Object.keys(peak)) peak[k] = Math.max(peak[k], r[k]);
    }
    for (const m of reports()) {
      if (m.step === "ready") {
        await sleep(1000);
        const i = rss(process.pid);
        idle = { ...bare(i), breakdown: breakdown(i.pids) };
        out.idle = idle;
      } else if (m.step === "done") {
        error = m.error || null;
        done = true;
      } else {
        const mine = samples.filter((x) => x.t <= m.at);
        samples = samples.filter((x) => x.t > m.at);
        const top = mine.reduce((a, x) => (x.renderer > a.renderer || (x.renderer === a.renderer && x.breakdown) ? x : a), { renderer: -1 });
        const stepPeak = { all: 0, allPss: 0, renderer: 0 };
        for (const x of mine) for (const k of Object.keys(stepPeak)) stepPeak[k] = Math.max(stepPeak[k], x[k]);
        out.steps.push({ ...m, samples: mine.length, peak: mine.length ? stepPeak : null, peakBreakdown: top.breakdown || null });
      }
    }
  }
} finally {
  chromium.kill();
  await new Promise((r) => (chromium.exitCode !== null ? r() : chromium.on("exit", r)));
  server.stop();
  rmSync(profile, { recursive: true, force: true });
  rmSync(join(log, ".."), { recursive: true, force: true });
  rmSync(server.models, { recursive: true, force: true });
}
if (error) {
  console.error(`the page failed: ${error}`);
  process.exitCode = 1;
}
out.peak = peak;
out.peakRendererOverModel = over(peak.renderer);
out.peakAllPssOverModel = over(peak.allPss);
for (const s of out.steps) {
  if (s.peak) s.peakRendererOverModel = over(s.peak.renderer);
  if (s.step === "loaded") s.loadSeconds = +(s.loadMs / 1000).toFixed(1);
  if (s.stats) s.decodeTokensPerSec = +s.stats.tokensPerSec.toFixed(3);
}
console.log(JSON.stringify(out, null, 1));
