// The model store (web/cache.js, the Origin Private File System) in headless
// Chromium: a model downloaded once is one file on disk, listed with its
// size, loaded again with no network request (with the server no longer
// serving it), and deleted; a split GGUF's shards likewise.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { copyFileSync, rmSync, statSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { startServer, launch, testdata, picolmCLI } from "./harness.mjs";

let server, browser;

before(async () => {
  server = await startServer();
  browser = await launch();
});

after(async () => {
  if (browser) await browser.close();
  if (server) server.stop();
});

test("a model is stored once in OPFS, listed with its size, loaded with no network request, deleted", async () => {
  const name = "store-tiny.gguf";
  const file = join(server.models, name);
  copyFileSync(join(testdata, "llama-2-tiny-random.gguf"), file);
  const size = statSync(file).size;
  execFileSync(picolmCLI(), ["split", "--split-max-tensors", "20", join(testdata, "stories260K.gguf"), join(server.models, "store-s")], { stdio: ["ignore", "ignore", "inherit"] });
  const shards = readdirSync(server.models).filter((n) => n.startsWith("store-s-")).sort();
  assert.equal(shards.length, 3);
  const url = `${server.url}test-models/${name}`;
  const surl = `${server.url}test-models/${shards[0]}`;
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(e.message));
    const requests = [];
    page.on("request", (r) => { if (r.url().includes("/test-models/")) requests.push(`${r.method()} ${r.url()}`); });
    await page.goto(`${server.url}web/test/shards.html`);
    await page.waitForFunction(() => window.ready);
    const gen = (u, workers) => page.evaluate(([s, w]) => window.generate(s, { workers: w }, "Hello"), [u, workers]);

    const first = await gen(url, 1);
    assert.equal(first.fromCache, false);
    assert.deepEqual(first.listed.map((c) => [c.url, c.bytes]), [[url, size]]);
    let st = await page.evaluate(() => window.stored());
    assert.equal(st.opfs.length, 2, st.opfs.join(" ")); // the model and its record
    assert.equal(st.legacy, 0, "stored once: not in the Cache API too");

    rmSync(file); // the server no longer has it
    requests.length = 0;
    for (const workers of [1, 2]) {
      const again = await gen(url, workers);
      assert.equal(again.text, first.text);
      assert.equal(again.fromCache, true);
    }
    assert.deepEqual(requests, [], "a cached model loads with no network request");

    // A split GGUF: each shard stored; loaded again with no request.
    const split = await gen(surl, 1);
    assert.equal(split.listed.length, 4);
    for (const s of shards) rmSync(join(server.models, s));
    requests.length = 0;
    const splitAgain = await gen(surl, 2);
    assert.equal(splitAgain.text, split.text);
    assert.deepEqual(requests, []);

    assert.equal(await page.evaluate((u) => window.deleteCached(u), url), true);
    assert.equal(await page.evaluate((u) => window.deleteCached(u), url), false);
    await page.evaluate(() => window.clearCache());
    st = await page.evaluate(() => window.stored());
    assert.deepEqual(st.opfs, []);
    assert.deepEqual(errors, []);
  } finally {
    rmSync(file, { force: true });
    await context.close();
  }
});
