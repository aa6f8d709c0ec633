// Browser runner of scripts/bench: serves the repo (build/serve, with COOP/COEP)
// with the model directory and wllama mounted, opens scripts/bench/page.html in
// headless Chromium and runs one generation; prints one JSON line.
//   node browser.mjs picolm|wllama MODEL_DIR MODEL_FILE PROMPT GEN THREADS [BUILD]
// THREADS is wllama's thread count, or the Workers picolm splits the model over;
// BUILD (relaxed or simd128) the engine build picolm runs (default: picolm.js's choice).
// BENCH_CLOCK=cpu (picolm only) adds the CPU time of the whole browser (every
// Chromium process, from /proc: user + system) spent in the prompt and in the
// generated tokens, as cpuPrefillS and cpuDecodeS: a machine busy with other
// jobs inflates wall-clock rates far more than CPU time, so two builds can be
// compared on a shared machine. The generation is then run a second time
// with the prompt already in the KV cache: its CPU time is the generated
// tokens', and the first run's less that is the prompt's.
// BENCH_CHROMIUM_ARGS adds Chromium flags (space-separated), such as
// --js-flags=--perf-basic-prof to profile the run with Linux perf.
import { join } from "node:path";
import { descendants } from "../../web/test/procs.mjs";
import { root, serve, launch } from "./chromium.mjs";

const [engine, modelDir, modelFile, prompt, gen, threads, build = ""] = process.argv.slice(2);
const wllamaDir = join(process.env.BENCH_NPM || "", "node_modules", "@wllama", "wllama", "esm");

const { server, url } = await serve(join(root, "build", "serve"), ["-root", root,
  "-mount", `/bench-models/=${modelDir}`, "-mount", `/wllama/=${wllamaDir}`]);
const browser = await launch(["--enable-precise-memory-info", ...(process.env.BENCH_CHROMIUM_ARGS || "").split(/\s+/).filter(Boolean)]);

// cpuSeconds sums user + system time of this process's descendants but the
// server: Chromium's processes (Linux /proc; clock ticks of 1/100 s).
const cpuSeconds = () => descendants(process.pid)
  .filter((p) => p.pid !== server.pid)
  .reduce((sum, p) => sum + +p.stat[11] + +p.stat[12], 0) / 100;
let code = 0;
try {
  const page = await browser.newPage();
  if (process.env.BENCH_CLOCK === "cpu") await page.exposeFunction("benchCPU", cpuSeconds);
  page.on("pageerror", (e) => console.error("page error:", e.message));
  await page.goto(url + "/scripts/bench/page.html");
  await page.waitForFunction(() => window.benchReady, null, { timeout: 30000 });
  const model = url + "/bench-models/" + modelFile;
  const fn = engine === "wllama" ? "benchWllama" : "benchPicoLM";
  const res = await page.evaluate(([fn, model, prompt, gen, threads, build]) => window[fn](model, prompt, gen, threads, build),
    [fn, model, prompt, Number(gen), Number(threads), build]);
  console.log(JSON.stringify(res));
} catch (e) {
  console.error(e.message);
  code = 1;
} finally {
  await browser.close();
  server.kill();
}
process.exit(code);
