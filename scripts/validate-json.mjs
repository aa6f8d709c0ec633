// Validates generated JSON against JSON Schemas with ajv (and ajv-formats),
// for wasm/cli's TestJSONSchemaFlag. Input: a file holding [{name, schema,
// outputs: [string, ...]}, ...]. Every output must parse as JSON and validate
// against its schema (scripts/schemas.mjs's validator); the exit code is 1 if
// any does not.
import { readFileSync } from "node:fs";
import { validateAll } from "./schemas.mjs";

const cases = JSON.parse(readFileSync(process.argv[2], "utf8"));
const r = validateAll(cases);
for (const f of r.failures) console.log(f);
console.log(`${r.total} outputs of ${cases.length} schemas: ${r.valid} valid, ${r.failures.length} invalid`);
process.exit(r.failures.length ? 1 : 0);
