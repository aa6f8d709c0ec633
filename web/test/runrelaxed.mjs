// Runs the relaxedsimd quant test binary in headless Chromium with the given
// -test.run pattern and prints its output (a debugging aid for kernel work):
//   node web/test/runrelaxed.mjs PATTERN
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { startServer, launch, root } from "./harness.mjs";

const pattern = process.argv[2] || ".";
const env = { ...process.env, GOOS: "js", GOARCH: "wasm", GOEXPERIMENT: "simd" };
const raw = join(root, "build", "quant-relaxed.test.raw.wasm"), patched = join(root, "build", "quant-relaxed.test.wasm");
execFileSync("go", ["test", "-c", "-tags", "relaxedsimd", "-o", raw, "./quant"], { cwd: root, env, stdio: "inherit" });
execFileSync("go", ["run", "./scripts/relaxpatch", raw, patched], { cwd: root, stdio: "inherit" });
const server = await startServer();
const browser = await launch();
try {
  const page = await (await browser.newContext()).newPage();
  await page.goto(`${server.url}web/test/relaxed.html`);
  await page.waitForFunction(() => window.ready);
  const r = await page.evaluate(([u, a]) => window.runTest(u, a), [`${server.url}build/quant-relaxed.test.wasm`, ["-test.v", "-test.run", pattern]]);
  console.log(r.output);
  process.exitCode = r.code;
} finally {
  await browser.close();
  server.stop();
}
