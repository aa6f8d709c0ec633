// Split GGUF files (llama.cpp's gguf-split layout, written by `picolm split`)
// in headless Chromium: loaded from the first shard's URL (1 Worker and
// several), from Files picked in the page and through the JS API, each
// generating what the unsplit file generates; broken sets refused by name.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { copyFileSync, renameSync, writeFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { startServer, launch, openPage, testdata, picolmCLI } from "./harness.mjs";

let server, browser;
const prompt = "Once upon a time";

// split runs `picolm split` (the CLI) on a test model into the served directory.
function split(model, prefix, ...flags) {
  execFileSync(picolmCLI(), ["split", ...flags, join(testdata, model), join(server.models, prefix)], { stdio: ["ignore", "ignore", "inherit"] });
  return readdirSync(server.models).filter((n) => n.startsWith(prefix + "-") && n.endsWith(".gguf")).sort();
}

before(async () => {
  server = await startServer();
  browser = await launch();
});

after(async () => {
  if (browser) await browser.close();
  if (server) server.stop();
});

async function shardsPage(context) {
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(`${server.url}web/test/shards.html`);
  await page.waitForFunction(() => window.ready);
  return { page, errors };
}

test("a split GGUF from its first shard's URL or its Files generates what the unsplit file does", async () => {
  const stories = split("stories260K.gguf", "stories", "--split-max-tensors", "20");
  const q4 = split("synth/synth-small-Q4_K_M.gguf", "q4km", "--split-max-size", "300K");
  assert.equal(stories.length, 3);
  assert.ok(q4.length >= 3, q4.join(" "));
  copyFileSync(join(testdata, "stories260K.gguf"), join(server.models, "stories-whole.gguf"));
  copyFileSync(join(testdata, "synth/synth-small-Q4_K_M.gguf"), join(server.models, "q4km-whole.gguf"));
  const u = (n) => `${server.url}test-models/${n}`;
  const context = await browser.newContext();
  try {
    const { page, errors } = await shardsPage(context);
    const gen = (src, opts) => page.evaluate(([s, o, p]) => window.generate(s, o, p), [src, opts, prompt]);
    for (const [whole, shards] of [["stories-whole.gguf", stories], ["q4km-whole.gguf", q4]]) {
      const want = await gen(u(whole), { workers: 1, cache: false });
      assert.ok(want.text.length > 20, want.text);
      for (const workers of [1, 2]) {
        const got = await gen(u(shards[0]), { workers, cache: false });
        assert.equal(got.text, want.text, `${shards[0]}, ${workers} Workers`);
        assert.equal(got.info.bytes, shards.reduce((n, s) => n + statSync(join(server.models, s)).size, 0));
        assert.match(got.info.name, new RegExp(shards[0].replace(/[.]/g, "\\.")));
        assert.equal(got.info.workers, workers);
      }
      // Files, in any order (as a file picker may give them).
      const files = [...shards].reverse().map((n) => ({ url: u(n), name: n }));
      const got = await gen({ files }, { workers: 1 });
      assert.equal(got.text, want.text, `${shards.length} Files`);
    }
    // Cached by URL: one entry per shard; loaded again from the cache.
    const first = await gen(u(stories[0]), { workers: 1 });
    assert.deepEqual(first.cached.filter((c) => /\/stories-000/.test(c)).sort(), stories.map(u));
    const again = await gen(u(stories[0]), { workers: 2 });
    assert.equal(again.text, first.text);
    await page.evaluate(() => window.clearCache());
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
});

test("broken split GGUF sets are refused, naming the shard, before any download", async () => {
  const a = split("stories260K.gguf", "a", "--split-max-tensors", "20"); // a-0000{1,2,3}-of-00003.gguf
  const b = split("synth/synth-small-Q4_K_M.gguf", "b", "--split-max-tensors", "8");
  const c = split("tinyllamas-stories-260k-q8_0.gguf", "c", "--split-max-tensors", "20"); // the layout of a, another model
  assert.equal(b.length, 3);
  assert.equal(c.length, 3);
  const u = (n) => `${server.url}test-models/${n}`;
  const context = await browser.newContext();
  try {
    const { page, errors } = await shardsPage(context);
    const refused = (src, opts = {}) => page.evaluate(([s, o]) => window.refused(s, o), [src, opts]);
    let r;

    // A missing shard on the server: named, nothing downloaded or cached.
    renameSync(join(server.models, a[1]), join(server.models, "a-moved.gguf"));
    for (const workers of [1, 2]) {
      r = await refused(u(a[0]), { workers });
      assert.match(r.message, /^ModelLoadError: missing shard: a-00002-of-00003\.gguf of the 3 shards of a\. Nothing was loaded\./, r.message);
      assert.equal(r.progress, 0);
      assert.deepEqual(r.cached, []);
    }
    renameSync(join(server.models, "a-moved.gguf"), join(server.models, a[1]));
    // A first shard that claims 9999: four missing are named after four HEAD requests, not 9998.
    copyFileSync(join(server.models, a[0]), join(server.models, "many-00001-of-09999.gguf"));
    r = await refused(u("many-00001-of-09999.gguf"), { workers: 1 });
    assert.match(r.message, /missing shards: many-00002-of-09999\.gguf, many-00003-of-09999\.gguf, many-00004-of-09999\.gguf, many-00005-of-09999\.gguf \(and maybe more: the rest were not checked\) of the 9999 shards of many/, r.message);

    // Files: one missing, two models' names, a file that is not a shard, a repeated shard.
    const f = (n, name = n) => ({ url: u(n), name });
    r = await refused({ files: [f(a[0]), f(a[2])] });
    assert.match(r.message, /missing shard: a-00002-of-00003\.gguf of the 3 shards of a/);
    r = await refused({ files: [f(a[0]), f(b[1]), f(a[2])] });
    assert.match(r.message, /a-00001-of-00003\.gguf and b-00002-of-00003\.gguf are not shards of the same split model/);
    r = await refused({ files: [f(a[0]), f(a[1], "notes.gguf")] });
    assert.match(r.message, /notes\.gguf is not named as a shard of a split model/);
    r = await refused({ files: [f(a[0]), f(a[1]), f(a[1])] });
    assert.match(r.message, /shard 2 of 3 is given twice/);

    // Shards of two models with the same layout and names (split ids differ): the engine refuses them by name.
    for (const workers of [1, 2]) {
      r = await refused({ files: [f(a[0]), f(c[1], a[1]), f(a[2])] }, { workers });
      assert.match(r.message, /a-00001-of-00003\.gguf and a-00002-of-00003\.gguf are shards of different split models \(picolm\.split\.id/, `${workers} Workers: ${r.message}`);
    }
    // A shard that is not GGUF, by URL: refused by name — by the header read before a load by parts, or by the
    // download's header check; the refused set is not kept in the cache.
    const d = split("stories260K.gguf", "d", "--split-max-tensors", "24");
    assert.deepEqual(d, ["d-00001-of-00002.gguf", "d-00002-of-00002.gguf"]);
    writeFileSync(join(server.models, d[1]), "<html>Not Found</html>");
    r = await refused(u("d-00001-of-00002.gguf"));
    assert.match(r.message, /d-00002-of-00002\.gguf(: gguf: bad magic at byte offset 0| is not a complete GGUF file: it does not start with GGUF's magic\. Nothing was stored\.)/, r.message);
    assert.deepEqual(r.cached, []);
    // The first shard alone under another name: the engine says what it is.
    copyFileSync(join(server.models, a[0]), join(server.models, "renamed.gguf"));
    r = await refused(u("renamed.gguf"), { workers: 1, cache: false });
    assert.match(r.message, /renamed\.gguf is shard 1 of 3 of a split model, but its name does not end in -00001-of-00003\.gguf/, r.message);
    // The first shard alone under its own name: the others are named.
    r = await refused({ files: [f(a[0])] }, { workers: 1 });
    assert.match(r.message, /a-00002-of-00003\.gguf, a-00003-of-00003\.gguf of the 3 shards of a-00001-of-00003\.gguf/, r.message);
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
});

test("the page loads a split GGUF picked as several files", async () => {
  const shards = split("stories260K.gguf", "ui", "--split-max-tensors", "16");
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    const page = await openPage(context, server.url);
    await page.setInputFiles("#model-file", shards.map((n) => join(server.models, n)));
    await page.waitForSelector("body[data-state=idle]");
    assert.equal(await page.textContent("#error"), "");
    assert.match(await page.textContent("#model-status"), /ui-00001-of-00003\.gguf/);
    await page.fill("#prompt", prompt);
    await page.fill("#max-tokens", "16");
    await page.fill("#temperature", "0");
    await page.click("#generate");
    await page.waitForFunction(() => Number(document.body.dataset.runs || 0) > 0 && document.body.dataset.state === "idle", null, { timeout: 60000 });
    assert.match(await page.textContent("#stats"), /16 generated/);
    assert.deepEqual(page.errors, []);
  } finally {
    await context.close();
  }
});
