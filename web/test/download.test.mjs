// Downloads into the model store (web/cache.js, web/store-worker.js) in
// headless Chromium, from a model host on another origin
// (harness.startRangeServer) that cuts connections, stalls, serves no
// ranges or a broken file: the model loads with the same output as the
// file itself, over parallel ranged requests, fetching barely more than its
// size; a download cut off resumes after a reload; a file that fails the
// size and GGUF checks, one that changes on the server midway, or a quota
// too small, keeps nothing; a stored model loads with no request.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServer, startRangeServer, launch, testdata } from "./harness.mjs";

let server, host, browser, dir, size, reference;
const CHUNK = 256 << 10;

before(async () => {
  server = await startServer();
  dir = mkdtempSync(join(tmpdir(), "picolm-host-"));
  host = await startRangeServer(dir);
  browser = await launch();
  const model = join(testdata, "stories260K.gguf");
  size = statSync(model).size;
  for (const n of ["a.gguf", "b.gguf", "c.gguf", "d.gguf", "quota.gguf", "changed.gguf"]) copyFileSync(model, join(dir, n));
  copyFileSync(model, join(server.models, "ref.gguf"));
  const bytes = readFileSync(model);
  writeFileSync(join(dir, "cut.gguf"), bytes.subarray(0, Math.floor(size * 0.7)));
  const junk = Buffer.alloc(300000);
  for (let i = 0; i < junk.length; i++) junk[i] = (i * 2654435761) >>> 24;
  writeFileSync(join(dir, "junk.gguf"), junk);
  await withPage(async (page) => {
    reference = await page.evaluate((u) => window.gen(u, { cache: false, workers: 1 }), `${server.url}test-models/ref.gguf`);
  });
  assert.ok(reference.text && reference.text.length > 20, JSON.stringify(reference));
});

after(async () => {
  if (browser) await browser.close();
  if (host) host.stop();
  if (server) server.stop();
});

async function withPage(f) {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(e.message));
    page.open = async () => {
      await page.goto(`${server.url}web/test/store.html`);
      await page.waitForFunction(() => window.ready);
    };
    await page.open();
    await f(page);
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
}

function reset() {
  host.stats.requests.length = 0;
  host.stats.bytes = 0;
  host.stats.maxOpen = 0;
  Object.assign(host.faults, { ranges: true, drops: 0, dropAfter: 0, stalls: 0, stallAfter: 0, delayMs: 0, changeAfter: -1 });
}

test("ranged connections in parallel survive dropped connections; the stored model loads with no request", async () => {
  reset();
  await withPage(async (page) => {
    host.faults.drops = 2;
    host.faults.dropAfter = 100000;
    host.faults.delayMs = 100;
    const r = await page.evaluate((u) => window.gen(u, { chunkBytes: 256 << 10, connections: 4, workers: 1 }), `${host.url}a.gguf`);
    assert.equal(r.text, reference.text, JSON.stringify(r.error));
    const chunks = Math.ceil(size / CHUNK);
    assert.ok(host.stats.requests.every((q) => q.range && q.status === 206), JSON.stringify(host.stats.requests));
    assert.equal(host.stats.requests.length, chunks + 2, "one request per chunk and one per dropped connection");
    assert.ok(host.stats.maxOpen >= 2, `at most ${host.stats.maxOpen} requests were open at once`);
    assert.ok(host.stats.bytes <= size + 2 * 100000, `${host.stats.bytes} bytes sent for a file of ${size}`);
    const last = r.events.at(-1);
    assert.deepEqual([last.loaded, last.total, last.ranged, last.connections, last.resumed], [size, size, true, 4, 0]);
    for (let i = 1; i < r.events.length; i++) assert.ok(r.events[i].loaded >= r.events[i - 1].loaded, "one progress figure over all connections");
    assert.deepEqual(r.cached.map((c) => [c.url, c.bytes, !!c.partial]), [[`${host.url}a.gguf`, size, false]]);
    const names = await page.evaluate(() => window.opfs());
    assert.equal(names.length, 2, names.join(" ")); // the model and its record: no .part left
    assert.ok(!names.some((n) => n.endsWith(".part")));

    host.stats.requests.length = 0;
    const again = await page.evaluate((u) => window.gen(u, { workers: 1 }), `${host.url}a.gguf`);
    assert.equal(again.text, reference.text);
    assert.deepEqual(host.stats.requests, [], "a cached model loads with no network request");

    const st = await page.evaluate(() => window.storage());
    assert.equal(typeof st.persisted, "boolean");
    assert.ok(st.quota > 0 && st.usage >= size, JSON.stringify(st));
  });
});

test("a download cut off resumes where it stopped, after a reload", async () => {
  reset();
  await withPage(async (page) => {
    host.faults.stalls = 1;
    host.faults.stallAfter = 50000;
    const url = `${host.url}b.gguf`;
    const cut = await page.evaluate(([u, at]) => window.gen(u, { chunkBytes: 256 << 10, workers: 1 }, at), [url, Math.floor(size / 2)]);
    assert.match(cut.error, /^AbortError/);
    const part = cut.cached.find((c) => c.url === url);
    assert.ok(part && part.partial && part.bytes > 0 && part.bytes < size && part.total === size, JSON.stringify(cut.cached));
    const sent = host.stats.bytes;

    await page.reload();
    await page.waitForFunction(() => window.ready);
    host.stats.requests.length = 0;
    const r = await page.evaluate((u) => window.gen(u, { chunkBytes: 256 << 10, workers: 1 }), url);
    assert.equal(r.text, reference.text, r.error);
    assert.equal(r.events[0].resumed, part.bytes, "resumed from the bytes on disk");
    assert.ok(host.stats.requests.every((q) => q.status === 206));
    // What the first attempt sent beyond what it kept was in flight when it was aborted (the other connections' chunks).
    assert.ok(sent <= part.bytes + 4 * CHUNK, `${sent} bytes sent, ${part.bytes} kept`);
    assert.equal(host.stats.bytes - sent, size - part.bytes, "the second attempt fetched only the missing bytes");
    assert.deepEqual(r.cached.map((c) => [c.url, !!c.partial]), [[url, false]]);
  });
});

test("a Worker's Range read that stalls is given up and tried again: the model loads over 2 Workers with the file's output", async () => {
  reset();
  await withPage(async (page) => {
    // Two replies send 1000 bytes and then nothing, never closing: the
    // Workers' reads of them (the header's probe, rows) are given up after
    // the worker script's stallMs and asked for again.
    host.faults.stalls = 2;
    host.faults.stallAfter = 1000;
    const url = `${host.url}d.gguf`;
    const opts = { cache: false, workers: 2, workerURL: "/web/worker.js?stallMs=1500" };
    const r = await page.evaluate(([u, o]) => window.gen(u, o), [url, opts]);
    assert.equal(r.text, reference.text, r.error);
    assert.equal(r.workers, 2);
    assert.equal(host.faults.stalls, 0, "both stalls were served");
    const ranges = host.stats.requests.map((q) => q.range).filter(Boolean);
    const again = ranges.filter((q, i) => ranges.indexOf(q) !== i);
    assert.ok(again.length >= 2, `the stalled ranges asked for again: ${JSON.stringify(host.stats.requests)}`);
    assert.deepEqual(r.cached.filter((c) => c.url === url), [], "nothing stored with cache: false");
  });
});

test("a server without range support: one plain download, and the progress says so", async () => {
  reset();
  await withPage(async (page) => {
    host.faults.ranges = false;
    host.faults.drops = 1;
    host.faults.dropAfter = 300000;
    const r = await page.evaluate((u) => window.gen(u, { workers: 1 }), `${host.url}c.gguf`);
    assert.equal(r.text, reference.text, r.error);
    assert.ok(r.events.length > 0 && r.events.every((e) => e.ranged === false && e.connections === 1), JSON.stringify(r.events));
    assert.equal(r.events.at(-1).loaded, size);
    assert.equal(host.stats.requests.length, 2, "the cut download started over once");
    assert.ok(host.stats.requests.every((q) => q.status === 200));
    const names = await page.evaluate(() => window.opfs());
    assert.ok(names.length === 2 && !names.some((n) => n.endsWith(".part")), names.join(" "));
  });
});

test("a truncated or foreign file, a file changed during the download, and a quota too small are refused clearly and keep nothing", async () => {
  reset();
  await withPage(async (page) => {
    const cut = await page.evaluate((u) => window.gen(u, { workers: 1 }), `${host.url}cut.gguf`);
    assert.match(cut.error, /^ModelLoadError: cut\.gguf is not a complete GGUF file: tensor .* ends past the end of the file \(\d+ bytes\): it is truncated\. Nothing was stored\./);
    const junk = await page.evaluate((u) => window.gen(u, { workers: 1 }), `${host.url}junk.gguf`);
    assert.match(junk.error, /^ModelLoadError: junk\.gguf is not a complete GGUF file: it does not start with GGUF's magic/);
    assert.deepEqual(await page.evaluate(() => window.opfs()), []);
    assert.deepEqual(cut.cached.concat(junk.cached), []);

    host.faults.changeAfter = 2; // the third response is of another file
    const changed = await page.evaluate((u) => window.gen(u, { workers: 1, chunkBytes: 256 << 10, connections: 1 }), `${host.url}changed.gguf`);
    assert.match(changed.error, /^ModelLoadError: could not fetch .*changed\.gguf: the file changed on the server during the download \(its ETag or Last-Modified differ\)\. Nothing was kept\./);
    assert.deepEqual(await page.evaluate(() => window.opfs()), []);
    host.faults.changeAfter = -1;

    const bad = await page.evaluate((u) => window.gen(u, { workers: 1, connections: 0 }), `${host.url}a.gguf`);
    assert.match(bad.error, /^BadRequestError: connections must be an integer from 1 to 16, got 0/);
    const small = await page.evaluate((u) => window.gen(u, { workers: 1, chunkBytes: 1000 }), `${host.url}a.gguf`);
    assert.match(small.error, /^BadRequestError: chunkBytes must be an integer of at least 65536, got 1000/);

    const q = await page.evaluate((u) => window.gen(u, { workers: 1, storeWorkerURL: "quota-worker.js?quota=100000" }), `${host.url}quota.gguf`);
    assert.match(q.error, /^ModelLoadError: quota\.gguf is \d\.\d MB: more than the browser lets this site store \(.* free of a quota of .*, .* in use\)\. Nothing was kept\./);
    assert.equal(q.code, "model_load");
    assert.deepEqual(await page.evaluate(() => window.opfs()), [], "nothing half-written is kept");
    assert.ok(host.stats.requests.filter((x) => x.range && x.range.startsWith("bytes=")).length >= 3);
  });
});
