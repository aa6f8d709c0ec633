// A model split over Workers that each read only their own rows (no
// whole-file buffer; wasm/browser/worker/parts_js.go), in headless Chromium:
// loaded by HTTP Range requests from build/serve, which logs every request
// (-log-requests) with its Referer, the Worker's script URL (?part=k for
// a shard Worker): each Worker's bytes are about its share of the file,
// the file is read about once in all, and the tokens are the whole-buffer
// path's. A split GGUF set loads the same way; a server without Range
// support falls back to the whole-buffer path and says so.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServer, launch, testdata, picolmCLI, root } from "./harness.mjs";

let server, browser, plain, log;
const prompt = "Once upon a time";

before(async () => {
  plain = mkdtempSync(join(tmpdir(), "picolm-plain-"));
  log = join(mkdtempSync(join(tmpdir(), "picolm-log-")), "requests.jsonl");
  server = await startServer(undefined, ["-mount-no-range", `/plain/=${plain}`, "-log-requests", log]);
  browser = await launch();
});

after(async () => {
  if (browser) await browser.close();
  if (server) server.stop();
});

// requests are the logged requests for paths under prefix since mark.
function requests(mark, prefix) {
  return readFileSync(log, "utf8").slice(mark).split("\n").filter(Boolean).map((l) => JSON.parse(l)).filter((r) => r.path.startsWith(prefix));
}
const mark = () => { try { return readFileSync(log, "utf8").length; } catch { return 0; } };
// part is the Worker a request came from: 0 the lead, k a shard Worker (?part=k).
const part = (r) => Number(new URL(r.referer).searchParams.get("part") || 0);

async function page(context) {
  const p = await context.newPage();
  const errors = [];
  p.on("pageerror", (e) => errors.push(e.message));
  if (process.env.PARTS_DEBUG) { p.on("console", (m) => console.error("console:", m.text())); p.on("worker", (w) => w.on("console", (m) => console.error("worker:", m.text()))); }
  await p.goto(`${server.url}web/test/shards.html`);
  await p.waitForFunction(() => window.ready);
  return { page: p, errors };
}

test("each Worker reads its own rows by Range requests, the file once in all, with the whole buffer's tokens", async () => {
  const models = [["synth-small-F32.gguf", "synth/synth-small-F32.gguf"], ["stories260K.gguf", "stories260K.gguf"]];
  for (const [name, src] of models) {
    copyFileSync(join(testdata, src), join(server.models, name));
    copyFileSync(join(testdata, src), join(plain, name));
  }
  const context = await browser.newContext();
  try {
    const { page: p, errors } = await page(context);
    const gen = (src, opts) => p.evaluate(([s, o, q]) => window.generate(s, o, q), [src, opts, prompt]);
    for (const [name] of models) {
      const size = statSync(join(server.models, name)).size;
      const want = await gen(`${server.url}test-models/${name}`, { workers: 1, cache: false });
      assert.ok(want.text.length > 20, want.text);
      for (const workers of [2, 3, 4]) {
        const m = mark();
        const got = await gen(`${server.url}test-models/${name}`, { workers, cache: false });
        const what = `${name}, ${workers} Workers`;
        assert.equal(got.text, want.text, what);
        assert.equal(got.info.workers, workers, what);
        const rs = requests(m, `/test-models/${name}`);
        const by = new Array(workers).fill(0);
        for (const r of rs) {
          assert.equal(r.status, 206, `${what}: ${JSON.stringify(r)}`);
          assert.ok(/^bytes=\d+-\d+$/.test(r.range), r.range);
          assert.ok(r.bytes <= 16 << 20);
          by[part(r)] += r.bytes;
        }
        const total = by.reduce((a, b) => a + b, 0);
        // Once, never twice: the data once, the header's prefix again (the plan's), norms and samples per Worker.
        assert.ok(total >= 0.9 * size && total <= 1.35 * size, `${what}: ${total} bytes read of a ${size}-byte file (${by})`);
        for (let k = 1; k < workers; k++) assert.ok(by[k] > 0 && by[k] <= 1.5 * size / workers, `${what}: Worker ${k} read ${by[k]} of ${size} (${by})`);
      }
      // Without Range support: the whole-buffer path, announced in the progress.
      const m = mark();
      const got = await p.evaluate(async ([u, q]) => {
        const { PicoLM } = await import("../picolm.js");
        let noRange = false;
        const mdl = await PicoLM.load(u, { workers: 2, cache: false, onProgress: (e) => { if (e.noRange) noRange = true; } });
        let text = "";
        for await (const t of mdl.generate(q, { maxTokens: 40, temperature: 0 })) text += t;
        const workers = mdl.info.workers;
        mdl.unload();
        return { text, noRange, workers };
      }, [`${server.url}plain/${name}`, prompt]);
      assert.deepEqual(got, { text: want.text, noRange: true, workers: 2 }, name);
      assert.ok(requests(m, `/plain/${name}`).every((r) => r.status === 200));
    }
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
});

test("a split GGUF set loads by Range requests over Workers, each shard read once", async () => {
  execFileSync(picolmCLI(), ["split", "--split-max-size", "2M", join(testdata, "synth/synth-small-F32.gguf"), join(server.models, "rs")], { stdio: ["ignore", "ignore", "inherit"] });
  const shards = readdirSync(server.models).filter((n) => /^rs-\d{5}-of-\d{5}\.gguf$/.test(n)).sort();
  assert.ok(shards.length >= 3, shards.join(" "));
  const size = shards.reduce((n, s) => n + statSync(join(server.models, s)).size, 0);
  const context = await browser.newContext();
  try {
    const { page: p, errors } = await page(context);
    const gen = (src, opts) => p.evaluate(([s, o, q]) => window.generate(s, o, q), [src, opts, prompt]);
    const want = await gen(`${server.url}test-models/${shards[0]}`, { workers: 1, cache: false });
    const m = mark();
    const got = await gen(`${server.url}test-models/${shards[0]}`, { workers: 2, cache: false });
    assert.equal(got.text, want.text);
    assert.equal(got.info.bytes, size);
    const rs = requests(m, "/test-models/rs-");
    const total = rs.filter((r) => r.method === "GET").reduce((n, r) => n + r.bytes, 0);
    assert.ok(rs.filter((r) => r.method === "GET").every((r) => r.status === 206));
    assert.ok(total >= 0.9 * size && total <= 1.35 * size, `${total} bytes read of ${size}`);
    for (const s of shards) assert.ok(rs.some((r) => r.path.endsWith(s) && r.method === "GET"), s);
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
});

test("a model over 4 GiB is planned from its header alone: refused in one Worker, saying what it needs, before any download", async () => {
  // The header of a Llama-3-8B-shaped Q4_K_M (4.9 GB), its tensor data a hole: no disk, nothing to load.
  execFileSync("go", ["run", "./scripts/synth", "-preset", "llama3-8b", "-sparse", "-o", join(server.models, "big-8b.gguf")], { cwd: root, stdio: ["ignore", "ignore", "inherit"] });
  const size = statSync(join(server.models, "big-8b.gguf")).size;
  assert.ok(size > 4.8e9, String(size));
  const context = await browser.newContext();
  try {
    const { page: p, errors } = await page(context);
    const u = `${server.url}test-models/big-8b.gguf`;
    for (const opts of [{ workers: 1 }, { workers: 1, cache: false }]) {
      const m = mark();
      const r = await p.evaluate(([s, o]) => window.refused(s, o), [u, opts]);
      const what = JSON.stringify(opts);
      assert.match(r.message, /^ModelLoadError: model too large for the browser engine: big-8b\.gguf is 4\.9 GB: it does not fit in 1 Worker: the Worker needs 4\.\d\d GiB; a wasm memory holds 4\.00 GiB, 3\.75 GiB of it for a Worker's part of the model, its KV cache and tokenizer\. Split over 2 Workers it fits \(the lead needs 2\.\d\d GiB and the other Worker 2\.\d\d GiB\): load it with workers: 2\. Nothing was downloaded/, `${what}: ${r.message}`);
      assert.deepEqual(r.cached.filter((c) => c.includes("big-8b")), [], what);
      const read = requests(m, "/test-models/big-8b.gguf").reduce((n, q) => n + q.bytes, 0);
      assert.ok(read < 16 << 20, `${what}: ${read} bytes read to refuse it`);
    }
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
});
