// Measures the memory of loading models in the browser: the engine worker's
// wasm memory (Go's heap; it never shrinks, so after loading it is the peak)
// and the peak resident memory (VmHWM) of Chromium's renderer processes,
// which hold the page, the worker and their JS heaps.
//
//   scripts/serve.sh --build-only
//   node web/test/measure.mjs DIR_WITH_MODELS model.gguf...
//
// Each model is loaded in a fresh browser through the file input (streamed
// into the worker), by URL (fetched, cached) and as an ArrayBuffer through
// the JS API (transferred), then generates 16 tokens.
import { spawn } from "node:child_process";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { launch, openPage, root } from "./harness.mjs";

const [dir, ...models] = process.argv.slice(2);
if (!dir || models.length === 0) {
  console.error("usage: node web/test/measure.mjs DIR model.gguf...");
  process.exit(2);
}

function renderers() {
  const out = [];
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (!cmd.includes("chromium") || !cmd.includes("--type=renderer")) continue;
      const st = readFileSync(`/proc/${pid}/status`, "utf8");
      out.push({ pid, hwm: Number(st.match(/VmHWM:\s+(\d+)/)[1]) * 1024, rss: Number(st.match(/VmRSS:\s+(\d+)/)[1]) * 1024 });
    } catch { /* gone */ }
  }
  return out;
}

const mb = (n) => (n / 1e6).toFixed(1) + " MB";
const server = spawn(join(root, "build", "serve"), ["-addr", "127.0.0.1:0", "-root", root, "-mount", `/m/=${dir}`], { stdio: ["ignore", "pipe", "inherit"] });
const url = await new Promise((resolve) => server.stdout.on("data", (d) => { const m = String(d).match(/http:\/\/\S+/); if (m) resolve(m[0]); }));

try {
  for (const model of models) {
    const size = statSync(join(dir, model)).size;
    for (const how of ["file", "url", "bytes"]) {
      const browser = await launch();
      try {
        const context = await browser.newContext();
        const page = await openPage(context, url);
        page.on("crash", () => console.error(`${model} via ${how}: the page crashed`));
        browser.on("disconnected", () => console.error("browser disconnected"));
        const base = renderers().reduce((a, r) => a + r.rss, 0);
        const t0 = Date.now();
        let info;
        if (how === "file") {
          await page.setInputFiles("#model-file", join(dir, model));
        } else if (how === "url") {
          await page.fill("#model-url", `${url}m/${model}`);
          await page.click("#load-url");
        }
        if (how === "bytes") {
          info = await page.evaluate(async (u) => {
            const buf = await (await fetch(u)).arrayBuffer();
            const m = await PicoLM.load(buf, { name: "bytes.gguf" });
            let n = 0;
            for await (const _ of m.generate("Once", { maxTokens: 16, temperature: 0 })) n++;
            return { memory: m.memory, info: m.info };
          }, `${url}m/${model}`);
        } else {
          await page.waitForFunction((name) => document.body.dataset.state === "idle" && document.querySelector("#model-status").textContent.includes(name), model, { timeout: 300000 });
          const err = await page.textContent("#error");
          if (err) throw new Error(err);
          await page.fill("#max-tokens", "16");
          await page.click("#generate");
          await page.waitForFunction(() => document.body.dataset.runs === "1", null, { timeout: 300000 });
          info = { memory: null, stats: await page.textContent("#stats"), mem: await page.textContent("#memory") };
        }
        const secs = (Date.now() - t0) / 1000;
        const rs = renderers();
        const hwm = Math.max(...rs.map((r) => r.hwm));
        console.log(`${model} (${mb(size)}) via ${how}: ${secs.toFixed(1)} s; peak renderer RSS ${mb(hwm)} (before loading ${mb(base)});` +
          (info.mem ? ` page: ${info.mem}` : ` engine wasm memory ${mb(info.memory.wasmBytes)}`) + (info.stats ? ` | ${info.stats}` : ""));
      } finally {
        await browser.close();
      }
    }
  }
} finally {
  server.kill();
}
