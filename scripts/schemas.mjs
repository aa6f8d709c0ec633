// The JSON Schema test set, read as data, and its ajv validation: one module
// for every surface that runs it. engine/grammar/testdata/schemas/*.json
// (llama.cpp's json-schema-to-grammar test schemas and ours; the CLI's
// TestJSONSchemaFlag globs the same files in the same order) are generated
// through the CLI (scripts/validate-json.mjs validates its outputs), the
// browser JS API (web/test/schemas.test.mjs) and the Cloudflare Worker
// (wasm/cloudflare/test/schemas.test.mjs); scripts/schema-ajv.sh is the full
// run of the last two, 10 seeds per schema.
import { readFileSync, readdirSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import Ajv from "ajv";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

export const schemaDir = join(dirname(fileURLToPath(import.meta.url)), "..", "engine", "grammar", "testdata", "schemas");

// loadSchemas returns [{name, schema}] for every *.json of schemaDir, sorted
// by file name (as Go's filepath.Glob sorts them).
export function loadSchemas(dir = schemaDir) {
  const names = readdirSync(dir).filter((f) => f.endsWith(".json")).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return names.map((name) => ({ name, schema: JSON.parse(readFileSync(join(dir, name), "utf8")) }));
}

// seedsOf is how many seeds a run takes per schema: PICOLM_SCHEMA_SEEDS, or
// def when it is not set.
export function seedsOf(def) {
  const v = process.env.PICOLM_SCHEMA_SEEDS;
  if (v === undefined || v === "") return def;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new Error(`PICOLM_SCHEMA_SEEDS=${v}: want a whole number of seeds, at least 1`);
  return n;
}

// jobsOf gives each schema its seeds: with n, seeds 1..n for every schema;
// without (the tests' cheap sample), every third schema (0, 3, 6, ...) with
// one seed, 1 + (its index mod 10), so the sample spans the set and the seeds.
export function jobsOf(schemas, n) {
  if (n) return schemas.map(({ name, schema }) => ({ name, schema, seeds: Array.from({ length: n }, (_, k) => k + 1) }));
  return schemas.flatMap(({ name, schema }, i) => (i % 3 ? [] : [{ name, schema, seeds: [1 + (i % 10)] }]));
}

// schemaName is a json_schema.name for a schema's file name (OpenAI's: 1 to
// 64 of a-z, A-Z, 0-9, _ and -).
export function schemaName(file) {
  return file.replace(/\.json$/, "").replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64) || "schema";
}

function has2020(s) {
  if (Array.isArray(s)) return s.some(has2020);
  if (s === null || typeof s !== "object") return false;
  if (Array.isArray(s.prefixItems)) return true;
  return Object.values(s).some(has2020);
}

// validator compiles schema with ajv and ajv-formats: a schema with an array
// prefixItems is draft 2020-12 (ajv/dist/2020), the others draft-07. It
// returns text => null when text is JSON valid under schema, else why not.
export function validator(schema) {
  const ajv = has2020(schema) ? new Ajv2020({ strict: false, allErrors: true }) : new Ajv({ strict: false, allErrors: true, validateSchema: false });
  addFormats(ajv);
  const validate = ajv.compile(schema);
  return (text) => {
    let value;
    try {
      value = JSON.parse(text);
    } catch {
      return `not JSON: ${JSON.stringify(text)}`;
    }
    return validate(value) ? null : `invalid ${JSON.stringify(text)}: ${ajv.errorsText(validate.errors)}`;
  };
}

// validateAll validates [{name, schema, outputs: [text]}]: {total, valid,
// failures: ["name: why"]}.
export function validateAll(cases) {
  let total = 0;
  const failures = [];
  for (const c of cases) {
    const check = validator(c.schema);
    for (const text of c.outputs) {
      total++;
      const why = check(text);
      if (why) failures.push(`${c.name}: ${why}`);
    }
  }
  return { total, valid: total - failures.length, failures };
}
