// Chromium runner of the kernel table (scripts/bench's kernels): serves DIR
// (kernels.html, wasm_exec.js, kernels.wasm: scripts/bench/kernels built for
// GOOS=js) with SERVE (build/serve), runs the Go program in a page of headless
// Chromium with ARGS as its arguments, and prints its stdout (one JSON line
// per format).
//   node kernels.mjs SERVE DIR [ARGS...]
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const [serve, dir, ...args] = process.argv.slice(2);
const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const { chromium } = createRequire(join(root, "package.json"))("playwright-core");
const server = spawn(serve, ["-addr", "127.0.0.1:0", "-root", dir], { stdio: ["ignore", "pipe", "inherit"] });
const url = await new Promise((resolve, reject) => {
  let out = "";
  server.stdout.on("data", (d) => { out += d; const m = out.match(/http:\/\/[^\s]+/); if (m) resolve(m[0].replace(/\/$/, "")); });
  server.on("exit", (c) => reject(new Error("server exited " + c)));
});
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium", headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync"],
});
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
