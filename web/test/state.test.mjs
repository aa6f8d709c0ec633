// Session states (m.saveState, m.restoreState: the CLI's --cache file in
// OPFS) in headless Chromium: a chat restored into a new model continues
// with the same tokens (and log-probabilities) as the unbroken one, reusing
// the restored positions, greedy and seeded; a state of another model, a
// corrupted or truncated one, a missing name and a model split over Workers
// are refused with a StateError.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { startServer, launch, testdata } from "./harness.mjs";

let server, browser, page, context;

before(async () => {
  server = await startServer();
  browser = await launch();
  copyFileSync(join(testdata, "llama-2-tiny-random.gguf"), join(server.models, "other.gguf"));
  copyFileSync(join(testdata, "stories260K.gguf"), join(server.models, "split.gguf"));
  context = await browser.newContext();
  page = await context.newPage();
  page.errors = [];
  page.on("pageerror", (e) => page.errors.push(e.message));
  await page.goto(`${server.url}web/test/store.html`);
  await page.waitForFunction(() => window.ready);
});

after(async () => {
  if (context) await context.close();
  if (browser) await browser.close();
  if (server) server.stop();
});

for (const [label, opts] of [["greedy", { maxTokens: 24, temperature: 0 }], ["seeded sampling", { maxTokens: 24, temperature: 0.9, topP: 0.95, seed: 1234 }]]) {
  test(`a restored chat continues with the same tokens as the unbroken one (${label})`, async () => {
    const r = await page.evaluate(([n, o]) => window.chat(n, o), [label, opts]);
    assert.ok(r.saved.positions > 0 && r.saved.bytes > 0, JSON.stringify(r.saved));
    assert.equal(r.restored.positions, r.saved.positions);
    assert.ok(r.unbroken.generated > 0);
    assert.equal(r.again.text, r.unbroken.text);
    assert.deepEqual(r.again.logprobs, r.unbroken.logprobs, "the same tokens, with the same log-probabilities");
    assert.ok(r.unbroken.cachedTokens > 0, "the unbroken chat reuses its first turn");
    assert.equal(r.again.cachedTokens, r.unbroken.cachedTokens, "the restored chat reuses the restored positions");
    assert.equal(r.fresh.cachedTokens, 0, "without the state nothing is reused");
    assert.ok(r.states.some((s) => s.name === label && s.bytes === r.saved.bytes), JSON.stringify(r.states));
    assert.deepEqual(page.errors, []);
  });
}

test("states of another model, corrupted, truncated, missing, or of a split model are refused with a StateError", async () => {
  const r = await page.evaluate(([o, s]) => window.refusals(o, s), [`${server.url}test-models/other.gguf`, `${server.url}test-models/split.gguf`]);
  const state = (e, re) => {
    assert.equal(e.code, "state", JSON.stringify(e));
    assert.match(e.error, re);
  };
  state(r.corrupted, /^StateError: session state refused: KV cache file rejected: checksum mismatch \(corrupted\)/);
  state(r.truncated, /^StateError: session state refused: KV cache file rejected: \d+ bytes, expected \d+ \(truncated or padded\)/);
  state(r.missing, /^StateError: no state is saved under the name nothing saved/);
  state(r.emptyName, /^StateError: a state's name must be 1 to 200 characters/);
  state(r.other, /^StateError: session state refused: KV cache file rejected: it was made with a different model/);
  assert.equal(r.splitWorkers, 2);
  state(r.splitSave, /^StateError: session state refused: the state of a model split over 2 Workers cannot be saved .* load the model with workers: 1/);
  state(r.splitRestore, /^StateError: session state refused: the state of a model split over 2 Workers cannot be restored/);
  assert.deepEqual(r.states.map((s) => s.name).filter((n) => ["builtin", "bad", "short"].includes(n)), []);
  assert.deepEqual(page.errors, []);
});
