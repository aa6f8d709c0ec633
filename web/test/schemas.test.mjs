// The JSON Schema set (engine/grammar/testdata/schemas, read by
// scripts/schemas.mjs: llama.cpp's json-schema-to-grammar test schemas and
// ours, the files the CLI's TestJSONSchemaFlag uses) through the browser JS
// API in headless Chromium on the built-in stories260K: chat.completions and
// completions with response_format json_schema at temperature 1, every output
// validated with ajv. scripts/test-browser.sh runs a sample (jobsOf: every
// third schema, one seed each); PICOLM_SCHEMA_SEEDS=N runs seeds 1..N for
// every schema (scripts/schema-ajv.sh: the full run, N = 10).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { loadSchemas, seedsOf, jobsOf, schemaName, validateAll } from "../../scripts/schemas.mjs";
import { startServer, launch } from "./harness.mjs";

const MAX_TOKENS = 96; // as the CLI's TestJSONSchemaFlag
let server, browser, page, errors;

before(async () => {
  server = await startServer();
  browser = await launch();
  page = await (await browser.newContext()).newPage();
  errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(`${server.url}web/test/openai.html`);
  await page.waitForFunction(() => window.ready);
});

after(async () => {
  if (browser) await browser.close();
  if (server) server.stop();
});

test("response_format json_schema over the schema set: every output of the JS API validates (ajv)", { timeout: 3_600_000 }, async () => {
  const schemas = loadSchemas();
  assert.ok(schemas.length >= 30, `${schemas.length} schemas`);
  const jobs = jobsOf(schemas, seedsOf(0)).map((j) => ({ ...j, title: schemaName(j.name) }));
  const started = Date.now();
  const results = await page.evaluate(([j, n]) => window.schemaOutputs(j, n), [jobs, MAX_TOKENS]);
  const failed = results.flatMap((r) => r.errors.map((e) => `${r.name}: ${e}`));
  const finishes = {};
  for (const r of results) for (const f of r.finishes) finishes[f] = (finishes[f] || 0) + 1;
  const v = validateAll(results.map((r, i) => ({ name: r.name, schema: jobs[i].schema, outputs: r.outputs })));
  console.log(`JS API: ${v.total + failed.length} generations of ${schemas.length} schemas: ${v.valid} valid under ajv, ${v.failures.length} invalid, ${failed.length} refused; finish reasons ${JSON.stringify(finishes)}; ${((Date.now() - started) / 1000).toFixed(1)} s`);
  assert.deepEqual(failed, []);
  assert.deepEqual(v.failures, []);
  assert.equal(v.total, jobs.reduce((n, j) => n + j.seeds.length, 0));
  assert.deepEqual(errors, []);
});
