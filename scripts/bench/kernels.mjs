// Chromium runner of the kernel table (scripts/bench's kernels): serves DIR
// (kernels.html, wasm_exec.js, kernels.wasm: scripts/bench/kernels built for
// GOOS=js) with SERVE (build/serve), runs the Go program in a page of headless
// Chromium with ARGS as its arguments, and prints its stdout (one JSON line
// per format).
//   node kernels.mjs SERVE DIR [ARGS...]
import { serve as startServer, launch } from "./chromium.mjs";

const [serve, dir, ...args] = process.argv.slice(2);
const { server, url } = await startServer(serve, ["-root", dir]);
const browser = await launch();
let code = 0;
try {
  const page = await browser.newPage();
  page.on("pageerror", (e) => console.error("page error:", e.message));
  await page.goto(url + "/kernels.html");
  const res = await page.evaluate((a) => window.runKernels(a), args);
  process.stdout.write(res.out);
  if (res.code !== 0) throw new Error(`exit code ${res.code}: ${res.err}`);
} catch (e) {
  console.error(e.message);
  code = 1;
} finally {
  await browser.close();
  server.kill();
}
process.exit(code);
