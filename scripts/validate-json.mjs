// Validates generated JSON against JSON Schemas with ajv (and ajv-formats), for wasm/cli's
// TestJSONSchemaFlag. Input: a file holding [{name, schema, outputs: [string, ...]}, ...]. Every output
// must parse as JSON and validate against its schema; the exit code is 1 if any does not.
// A schema with an array prefixItems is draft 2020-12 (ajv/dist/2020); the others are draft-07.
import { readFileSync } from "node:fs";
import Ajv from "ajv";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

function has2020(s) {
  if (Array.isArray(s)) return s.some(has2020);
  if (s === null || typeof s !== "object") return false;
  if (Array.isArray(s.prefixItems)) return true;
  return Object.values(s).some(has2020);
}

const cases = JSON.parse(readFileSync(process.argv[2], "utf8"));
let bad = 0;
let total = 0;
for (const c of cases) {
  const ajv = has2020(c.schema) ? new Ajv2020({ strict: false, allErrors: true }) : new Ajv({ strict: false, allErrors: true, validateSchema: false });
  addFormats(ajv);
  const validate = ajv.compile(c.schema);
  for (const text of c.outputs) {
    total++;
    let value;
    try {
      value = JSON.parse(text);
    } catch (e) {
      bad++;
      console.log(`${c.name}: not JSON: ${JSON.stringify(text)}`);
      continue;
    }
    if (!validate(value)) {
      bad++;
      console.log(`${c.name}: invalid ${JSON.stringify(text)}: ${ajv.errorsText(validate.errors)}`);
    }
  }
}
console.log(`${total} outputs of ${cases.length} schemas: ${total - bad} valid, ${bad} invalid`);
process.exit(bad ? 1 : 0);
