// npm pack's prepack step: the package ships the built engine, so refuse to
// pack without it (build it with `npm run build`, i.e. scripts/serve.sh
// --build-only).
import { statSync } from "node:fs";

const need = ["build/worker.wasm", "build/worker-relaxed.wasm", "build/wasm_exec.js"];
const missing = need.filter((f) => { try { return !statSync(f).isFile(); } catch { return true; } });
if (missing.length) {
  console.error(`npm pack: ${missing.join(", ")} missing: run \`npm run build\` (scripts/serve.sh --build-only) first`);
  process.exit(1);
}
