// Browser tests: the page (index.html + build/ui.wasm + build/worker.wasm) and
// the JS API (web/picolm.js) in real headless Chromium, doing what a person
// does. Run by scripts/test-browser.sh (which builds first).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { copyFileSync, readFileSync, writeFileSync, rmSync, mkdirSync, openSync, ftruncateSync, closeSync } from "node:fs";
import { join } from "node:path";
import { startServer, launch, openPage, root, testdata } from "./harness.mjs";

const artifacts = process.env.ARTIFACTS_DIR || join(root, "build", "artifacts");
const references = readFileSync(join(testdata, "reference", "stories260K-greedy.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
const tiny = join(testdata, "llama-2-tiny-random.gguf");

let server, browser;

before(async () => {
  mkdirSync(artifacts, { recursive: true });
  server = await startServer();
  // A copy of the built-in model carrying a Zephyr chat template, for chat mode.
  mkmodel(join(server.models, "stories-zephyr.gguf"), "-chat", "zephyr");
  browser = await launch();
});

after(async () => {
  if (browser) await browser.close();
  if (server) server.stop();
});

// apiPage opens the JS API test page (web/test/api.html) and collects its uncaught errors.
async function apiPage(context) {
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(`${server.url}web/test/api.html`);
  await page.waitForFunction(() => window.ready);
  return { page, errors };
}

// mkmodel writes a test model with wasm/browser/worker/internal/mkmodel.
function mkmodel(out, ...args) {
  execFileSync("go", ["run", "./wasm/browser/worker/internal/mkmodel", ...args, "-o", out], { cwd: root, stdio: "inherit" }); // GOTOOLCHAIN from scripts/test-browser.sh
}

async function fresh() {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await openPage(context, server.url);
  return { context, page };
}

async function generate(page, { prompt, maxTokens, temperature = 0, keyboard = false }) {
  if (prompt !== undefined) await page.fill("#prompt", prompt);
  if (maxTokens !== undefined) await page.fill("#max-tokens", String(maxTokens));
  await page.fill("#temperature", String(temperature));
  const runs = Number(await page.getAttribute("body", "data-runs") || 0);
  if (keyboard) {
    await page.focus("#prompt");
    await page.keyboard.press("Control+Enter");
  } else {
    await page.click("#generate");
  }
  await page.waitForFunction((n) => Number(document.body.dataset.runs || 0) > n && document.body.dataset.state === "idle", runs, { timeout: 60000 });
  const text = await page.evaluate(() => document.querySelector("#output .gen")?.textContent ?? null);
  return { text, stats: await page.textContent("#stats") };
}

test("built-in model: greedy output is llama.cpp's, streamed token by token", async () => {
  const { context, page } = await fresh();
  try {
    assert.match(await page.textContent("#model-status"), /stories260K\.gguf/);
    for (const ref of references) {
      const { text, stats } = await generate(page, { prompt: ref.prompt, maxTokens: ref.n_predict });
      assert.equal(text.replace(/\n$/, ""), ref.continuation.replace(/\n$/, ""), ref.prompt);
      assert.match(stats, new RegExp(`${ref.n_predict} generated.*stop: max tokens`));
      assert.equal(await page.textContent("#output .prompt"), ref.prompt);
    }
    // Streaming: the output grows in many steps while the generation runs.
    await page.evaluate(() => {
      window.lengths = [];
      const out = document.querySelector("#output");
      new MutationObserver(() => {
        const g = out.querySelector(".gen");
        if (g && document.body.dataset.state === "generating") window.lengths.push(g.textContent.length);
      }).observe(out, { subtree: true, childList: true, characterData: true });
    });
    await generate(page, { prompt: "Once upon a time", maxTokens: 400, temperature: 0.8 });
    const lengths = await page.evaluate(() => window.lengths);
    const distinct = new Set(lengths.filter((n) => n > 0));
    assert.ok(distinct.size >= 5, `output updated only ${distinct.size} times while generating: ${lengths}`);
    assert.match(await page.textContent("#stats"), /tok\/s .*400 generated/);
    assert.match(await page.textContent("#memory"), /memory: engine \d/);
    await page.screenshot({ path: join(artifacts, "page-after-generation.png") });
    assert.deepEqual(page.errors, []);
  } finally {
    await context.close();
  }
});

test("JSON toggle: the output parses as JSON", async () => {
  const { context, page } = await fresh();
  try {
    await page.check("#json");
    for (const seed of [1, 2, 3]) {
      await page.fill("#seed", String(seed));
      const { text, stats } = await generate(page, { prompt: "Once upon a time", maxTokens: 120, temperature: 0.9 });
      assert.doesNotThrow(() => JSON.parse(text), `not JSON: ${text} (${stats})`);
    }
  } finally {
    await context.close();
  }
});

test("Stop mid-generation (button and Escape), then generate again (Ctrl+Enter)", async () => {
  const { context, page } = await fresh();
  try {
    for (const how of ["button", "escape"]) {
      await page.fill("#prompt", "Once upon a time");
      await page.fill("#max-tokens", "2000");
      await page.fill("#temperature", "0.8");
      await page.click("#generate");
      await page.waitForFunction(() => (document.querySelector("#output .gen")?.textContent.length ?? 0) > 40);
      if (how === "button") await page.click("#stop");
      else await page.keyboard.press("Escape");
      await page.waitForSelector("body[data-state=idle]", { timeout: 10000 });
      const stats = await page.textContent("#stats");
      assert.match(stats, /stop: stopped/, how);
      const generated = Number(stats.match(/(\d+) generated/)[1]);
      assert.ok(generated > 0 && generated < 2000, `${how}: ${generated} generated`);
    }
    const { text, stats } = await generate(page, { prompt: "The little dog", maxTokens: 30, keyboard: true });
    assert.match(stats, /30 generated.*stop: max tokens/);
    assert.ok(text.length > 20);
  } finally {
    await context.close();
  }
});

test("chat mode formats turns with the model's chat template", async () => {
  const { context, page } = await fresh();
  try {
    await page.fill("#model-url", `${server.url}test-models/stories-zephyr.gguf`);
    await page.click("#load-url");
    await page.waitForSelector("body[data-state=idle]");
    assert.match(await page.textContent("#chat-note"), /chat template: zephyr/);
    await page.click("label:has(#mode-chat)");
    assert.ok(await page.isChecked("#mode-chat"));
    await generate(page, { prompt: "Tell me a story", maxTokens: 20 });
    assert.equal(await page.locator("#output .turn.user").count(), 1);
    assert.equal(await page.locator("#output .turn.assistant").count(), 1);
    assert.match(await page.textContent("#output .turn.user"), /Tell me a story/);
    await generate(page, { prompt: "And then?", maxTokens: 20 });
    assert.equal(await page.locator("#output .turn.user").count(), 2);
    // The second turn reuses the KV cache of the first.
    assert.match(await page.textContent("#stats"), /prompt tokens \((\d+) cached\)/);
    assert.equal(await page.inputValue("#prompt"), "");
  } finally {
    await context.close();
  }
});

test("a local file through the file input", async () => {
  const { context, page } = await fresh();
  try {
    await page.setInputFiles("#model-file", tiny);
    await page.waitForSelector("body[data-state=idle]");
    assert.match(await page.textContent("#model-status"), /llama-2-tiny-random\.gguf/);
    assert.match(await page.textContent("#progress-text"), /1\.8 MB of 1\.8 MB \(100%\)/);
    const { stats } = await generate(page, { prompt: "Hello world", maxTokens: 8 });
    assert.match(stats, /8 generated.*stop: max tokens/);
    assert.equal(await page.textContent("#error"), "");
  } finally {
    await context.close();
  }
});

test("malformed GGUF, non-GGUF and too-large files: an error in the page, the worker lives on", async () => {
  const { context, page } = await fresh();
  const dir = server.models;
  const builtin = readFileSync(join(testdata, "stories260K.gguf"));
  writeFileSync(join(dir, "truncated.gguf"), builtin.subarray(0, 600000));
  writeFileSync(join(dir, "notes.gguf"), "This is a shopping list, not a model.\n".repeat(20));
  const huge = join(dir, "huge.gguf"); // sparse: 5 GB on paper, nothing on disk; over one buffer's limit, so planned from its header (zeros: not a GGUF)
  const fd = openSync(huge, "w");
  ftruncateSync(fd, 5e9);
  closeSync(fd);
  try {
    for (const [file, want] of [["truncated.gguf", /truncated\.gguf/], ["notes.gguf", /notes\.gguf.*(magic|GGUF)/i], ["huge.gguf", /huge\.gguf: gguf: bad magic/]]) {
      await page.setInputFiles("#model-file", join(dir, file));
      await page.waitForSelector("#error.shown", { timeout: 20000 });
      await page.waitForSelector("body[data-state=idle]");
      const msg = await page.textContent("#error");
      assert.match(msg, /^Could not load/, file);
      assert.match(msg, want, file);
      // The page went back to the built-in model in the same worker and still generates.
      assert.match(await page.textContent("#model-status"), /stories260K\.gguf/, file);
      const { stats } = await generate(page, { prompt: "Once upon a time", maxTokens: 10 });
      assert.match(stats, /10 generated/, file);
    }
  } finally {
    rmSync(huge);
    await context.close();
  }
});

test("a model by URL: progress, cached, loaded from the cache when the server no longer has it, deleted", async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const served = join(server.models, "tiny-by-url.gguf");
  copyFileSync(tiny, served);
  const url = `${server.url}test-models/tiny-by-url.gguf`;
  try {
    let page = await openPage(context, server.url);
    await page.fill("#model-url", url);
    await page.click("#load-url");
    await page.waitForSelector("body[data-state=idle]");
    assert.equal(await page.textContent("#error"), "");
    assert.match(await page.textContent("#progress-text"), /1\.8 MB of 1\.8 MB \(100%\)/);
    assert.doesNotMatch(await page.textContent("#progress-text"), /from the cache/);
    assert.match(await page.textContent("#cache-list"), /tiny-by-url\.gguf · 1\.8 MB/);

    rmSync(served); // the server no longer serves it
    const status = await page.evaluate((u) => fetch(u).then((r) => r.status), url);
    assert.equal(status, 404);
    await page.close();

    page = await openPage(context, server.url);
    assert.match(await page.textContent("#cache-list"), /tiny-by-url\.gguf/);
    await page.click(`#cache-list button.cache-load[data-url="${url}"]`);
    await page.waitForSelector("body[data-state=idle]");
    assert.equal(await page.textContent("#error"), "");
    assert.match(await page.textContent("#model-status"), /tiny-by-url\.gguf/);
    assert.match(await page.textContent("#progress-text"), /from the cache/);
    const { stats } = await generate(page, { prompt: "Hello world", maxTokens: 8 });
    assert.match(stats, /8 generated/);

    await page.click(`#cache-list button.cache-delete[data-url="${url}"]`);
    await page.waitForFunction(() => document.querySelectorAll("#cache-list li").length === 0);
    assert.equal(await page.evaluate(() => caches.open("picolm-models-v1").then((c) => c.keys()).then((k) => k.length)), 0);
  } finally {
    rmSync(served, { force: true });
    await context.close();
  }
});

test("the JS API from a separate page (README example)", async () => {
  const context = await browser.newContext();
  const bad = join(server.models, "api-bad.gguf");
  const huge = join(server.models, "api-huge.gguf");
  writeFileSync(bad, "GGUF\x03\x00\x00\x00garbage");
  const fd = openSync(huge, "w");
  ftruncateSync(fd, 4.5e9);
  closeSync(fd);
  try {
    const { page, errors } = await apiPage(context);

    const ref = references[0];
    const r = await page.evaluate((p) => window.runExample(p), ref.prompt);
    assert.equal(r.text.replace(/\n$/, ""), ref.continuation.replace(/\n$/, ""));
    assert.ok(r.pieces > 30, `${r.pieces} pieces`);
    assert.equal(r.stats.generated, 64);
    assert.equal(r.stats.stop, "max_tokens");
    assert.doesNotThrow(() => JSON.parse(r.json), r.json);
    assert.equal(r.early, 5);
    assert.equal(r.abortedStop, "stopped");
    assert.ok(r.abortedGenerated >= 3 && r.abortedGenerated < 1000);

    const b = await page.evaluate((u) => window.runBytes(u), `${server.url}test-models/stories-zephyr.gguf`);
    assert.ok(b.size > 1e6);
    assert.equal(b.after, 0, "the ArrayBuffer was transferred, not cloned");
    assert.equal(b.info.chatTemplate, "zephyr");
    assert.ok(b.n > 0);

    const e = await page.evaluate(([x, y]) => window.runErrors(x, y), [`${server.url}test-models/api-bad.gguf`, `${server.url}test-models/api-huge.gguf`]);
    assert.match(e.bad, /api-bad\.gguf/);
    assert.match(e.huge, /api-huge\.gguf: gguf: bad magic/); // over one buffer's limit: planned from its first bytes (zeros), refused before any download
    assert.equal(e.progressed, 0, "nothing of the huge file was downloaded");
    assert.deepEqual(e.cached, []);
    assert.deepEqual(errors, []);
  } finally {
    rmSync(bad, { force: true });
    rmSync(huge, { force: true });
    await context.close();
  }
});

test("a model split over 2, 3 or 4 Workers generates what 1 Worker does", async () => {
  const context = await browser.newContext();
  // Q8_0, F32 and a mix, and a K-quant mix (Q4_K, Q6_K: the SIMD128 batch kernels of a prompt).
  const names = ["tinyllamas-stories-260k-q8_0.gguf", "stories260K.gguf", "llama-2-tiny-random.gguf", "synth/synth-small-Q4_K_M.gguf"];
  const local = (n) => "split-" + n.replace("/", "-");
  for (const n of names) copyFileSync(join(testdata, n), join(server.models, local(n)));
  const bad = join(server.models, "split-bad.gguf");
  writeFileSync(bad, "GGUF\x03\x00\x00\x00garbage");
  const counts = [2, 3, 4];
  try {
    const { page, errors } = await apiPage(context);
    // A short prompt, and one longer than a prefill batch (16 tokens).
    const prompts = ["Once upon a time", references[1].prompt + " The little dog ran to the park and saw a big red ball under the tree"];
    const r = await page.evaluate(([u, p, c, b]) => window.runSplit(u, p, c, b),
      [names.map((n) => `${server.url}test-models/${local(n)}`), prompts, counts, `${server.url}test-models/split-bad.gguf`]);
    assert.equal(r.isolated, true);
    assert.equal(r.defaultWorkers, 2);
    assert.equal(r.runs.length, names.length * prompts.length * counts.length);
    for (const run of r.runs) {
      const what = `${run.url}, ${run.n} Workers: ${run.prompt}`;
      assert.equal(run.workers2, run.n, what);
      assert.ok(run.stats1.generated > 0, what);
      assert.equal(run.text2, run.text1, what);
      assert.ok(run.sampled1.length > 0, what);
      assert.equal(run.sampled2, run.sampled1, what + " (sampled)");
      assert.equal(run.stats2.generated, run.stats1.generated, what);
      assert.ok(run.memory.shardWasmBytes > 0 && run.memory.totalWasmBytes > run.memory.wasmBytes, JSON.stringify(run.memory));
      // where the time went: per decoded token one exchange of every Worker to start it, four per
      // layer (attention, wo, gate+up, down), one for the logits
      const sp = run.stats2.split, L = run.layers;
      for (const part of [sp.prefill, sp.decode]) {
        assert.equal(part.shardBusyMs.length, run.n - 1, JSON.stringify(sp));
        assert.equal(part.shardAttentionMs.length, run.n - 1, JSON.stringify(sp));
        for (const k of ["leadAttentionMs", "leadProductsMs", "leadSendMs", "leadWaitMs", "leadEmitMs", "leadOtherMs"]) assert.ok(part[k] >= 0, k + " " + JSON.stringify(sp));
      }
      assert.ok(sp.prefill.syncs > 0 && sp.decode.attentionSyncs > 0, JSON.stringify(sp));
      assert.equal(sp.decode.syncs * L, sp.decode.attentionSyncs * (4 * L + 2), JSON.stringify(sp.decode));
    }
    assert.ok(r.runs.some((run) => run.stats1.promptTokens > 16), "a prompt spans prefill batches");
    assert.match(r.bad, /split-bad\.gguf/);
    assert.deepEqual(errors, []);
  } finally {
    for (const n of names) rmSync(join(server.models, local(n)), { force: true });
    rmSync(bad, { force: true });
    await context.close();
  }
});

test("by default a model is split over one Worker per core, at most its KV heads", async () => {
  const names = ["stories260K.gguf", "llama-2-tiny-random.gguf"];
  for (const n of names) copyFileSync(join(testdata, n), join(server.models, "default-" + n));
  try {
    for (const cores of [null, 3, 8]) { // null: this machine's
      const context = await browser.newContext();
      if (cores) await context.addInitScript((c) => Object.defineProperty(Navigator.prototype, "hardwareConcurrency", { get: () => c }), cores);
      try {
        const { page, errors } = await apiPage(context);
        for (const n of names) {
          const r = await page.evaluate((u) => window.runDefaultWorkers(u), `${server.url}test-models/default-${n}`);
          const what = `${n}, ${JSON.stringify(r)}`;
          if (cores) assert.equal(r.cores, cores, what);
          assert.equal(r.defaultWorkers, Math.min(r.cores, 16), what);
          assert.equal(r.workers, Math.min(r.cores, r.kvHeads), what);
          assert.ok(r.text.length > 0, what);
          assert.equal(r.text, r.text1, what);
        }
        assert.deepEqual(errors, []);
      } finally {
        await context.close();
      }
    }
  } finally {
    for (const n of names) rmSync(join(server.models, "default-" + n), { force: true });
  }
});

test("JSON within any budget, and a model with a NaN weight refused (issue 13)", async () => {
  const context = await browser.newContext();
  const tinyURL = "json-tiny.gguf", nanURL = "nan-norm.gguf";
  copyFileSync(tiny, join(server.models, tinyURL));
  // The built-in model with a NaN in a norm: it used to load and print token 0 at every step.
  mkmodel(join(server.models, nanURL), "-nan", "blk.1.attn_norm.weight:9");
  try {
    const { page, errors } = await apiPage(context);
    // json: true with maxTokens 1-4 prints one complete value on both vocabularies (it printed "[" at 1).
    const runs = await page.evaluate((u) => window.runJSONBudgets(u), [null, `${server.url}test-models/${tinyURL}`]);
    assert.equal(runs.length, 2 * 4 * 4);
    for (const r of runs) {
      assert.doesNotThrow(() => JSON.parse(r.text), `${r.url ?? "built-in"} maxTokens ${r.n} seed ${r.seed}: ${JSON.stringify(r.text)}`);
      assert.ok(r.generated >= 1 && r.generated <= r.n, `${r.generated} tokens for maxTokens ${r.n}`);
    }
    const e = await page.evaluate((u) => window.loadErrors(u), `${server.url}test-models/${nanURL}`);
    for (const workers of ["1", "2"]) {
      assert.match(e[workers], /NaN or infinite weight: blk\.1\.attn_norm\.weight \(F32\) block 9 of 64: element 9 is NaN/, `${workers} workers: ${e[workers]}`);
    }
    assert.deepEqual(errors, []);
  } finally {
    rmSync(join(server.models, tinyURL), { force: true });
    rmSync(join(server.models, nanURL), { force: true });
    await context.close();
  }
});
