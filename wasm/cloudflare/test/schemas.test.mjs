// The JSON Schema set (engine/grammar/testdata/schemas, read by
// scripts/schemas.mjs: llama.cpp's json-schema-to-grammar test schemas and
// ours, the files the CLI's TestJSONSchemaFlag uses) through the Worker on
// workerd with the official openai npm client: chat.completions and
// completions with response_format json_schema at temperature 1 on the
// embedded stories260K, every output validated with ajv.
// scripts/test-workers.sh runs a sample (jobsOf: every third schema, one seed
// each); PICOLM_SCHEMA_SEEDS=N runs seeds 1..N for every schema
// (scripts/schema-ajv.sh: the full run, N = 10). PICOLM_WORKER_URL is the
// Worker's address.
import { test } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import { loadSchemas, seedsOf, jobsOf, schemaName, validateAll } from "../../../scripts/schemas.mjs";

const base = process.env.PICOLM_WORKER_URL;
if (!base) {
  console.log("PICOLM_WORKER_URL not set: run scripts/test-workers.sh");
  process.exit(0);
}
const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: "unused", maxRetries: 0, timeout: 120_000 });
const MAX_TOKENS = 96; // as the CLI's TestJSONSchemaFlag

test("response_format json_schema over the schema set: every output of the Worker validates (ajv)", { timeout: 3_600_000 }, async () => {
  const schemas = loadSchemas();
  assert.ok(schemas.length >= 30, `${schemas.length} schemas`);
  const jobs = jobsOf(schemas, seedsOf(0));
  const started = Date.now();
  const failed = [];
  const finishes = {};
  const cases = [];
  for (const { name, schema, seeds } of jobs) {
    const response_format = { type: "json_schema", json_schema: { name: schemaName(name), schema, strict: true } };
    const outputs = [];
    for (const seed of seeds) {
      const common = { max_tokens: MAX_TOKENS, temperature: 1, seed, response_format };
      try {
        let text, finish;
        if (seed % 2) {
          const r = await client.chat.completions.create({ messages: [{ role: "user", content: "Once upon a time" }], ...common });
          [text, finish] = [r.choices[0].message.content, r.choices[0].finish_reason];
        } else {
          const r = await client.completions.create({ prompt: "Once upon a time", ...common });
          [text, finish] = [r.choices[0].text, r.choices[0].finish_reason];
        }
        outputs.push(text);
        finishes[finish] = (finishes[finish] || 0) + 1;
      } catch (e) {
        failed.push(`${name} seed ${seed}: ${e.status ?? ""} ${e.message}`);
      }
    }
    cases.push({ name, schema, outputs });
  }
  const v = validateAll(cases);
  console.log(`Worker: ${v.total + failed.length} generations of ${schemas.length} schemas: ${v.valid} valid under ajv, ${v.failures.length} invalid, ${failed.length} refused; finish reasons ${JSON.stringify(finishes)}; ${((Date.now() - started) / 1000).toFixed(1)} s`);
  assert.deepEqual(failed, []);
  assert.deepEqual(v.failures, []);
  assert.equal(v.total, jobs.reduce((n, j) => n + j.seeds.length, 0));
});
