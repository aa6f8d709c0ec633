// Shared setup of the browser tests: the Go static server (build/serve, made
// by scripts/serve.sh --build-only) and headless Debian Chromium through
// playwright-core.
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

export const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const testdata = join(root, "..", "shared", "testdata");

export const chromiumArgs = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
  "--enable-precise-memory-info",
];

// startServer runs build/serve on a free port, serving dir (default the
// repo root) with the test models directory mounted at /test-models/, and
// resolves with {url, models, stop}; args are more flags of build/serve
// (-mount-no-range, -log-requests).
export async function startServer(dir = root, args = []) {
  const models = mkdtempSync(join(tmpdir(), "picolm-models-"));
  const proc = spawn(join(root, "build", "serve"), ["-addr", "127.0.0.1:0", "-root", dir, "-mount", `/test-models/=${models}`, ...args], { stdio: ["ignore", "pipe", "inherit"] });
  const url = await new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error("server did not start: " + out)), 15000);
    proc.stdout.on("data", (d) => {
      out += d;
      const m = out.match(/http:\/\/[^\s]+/);
      if (m) { clearTimeout(timer); resolve(m[0]); }
    });
    proc.on("exit", (code) => reject(new Error("server exited with " + code)));
  });
  return { url, models, stop: () => proc.kill() };
}

export async function launch() {
  return chromium.launch({ executablePath: process.env.CHROMIUM || "/usr/bin/chromium", args: chromiumArgs, headless: true });
}

// openPage opens the UI and waits for the built-in model.
export async function openPage(context, url) {
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
  page.errors = errors;
  await page.goto(url);
  await page.waitForSelector("body[data-state=idle]", { timeout: 30000 });
  return page;
}

// picolmCLI builds the CLI (wasm/cli) once into a temporary directory and
// returns its path, for tests that make model files with it (picolm split).
let cli = null;
export function picolmCLI() {
  if (!cli) {
    cli = join(mkdtempSync(join(tmpdir(), "picolm-cli-")), "picolm");
    execFileSync("go", ["build", "-o", cli, "./wasm/cli"], { cwd: root, stdio: "inherit" }); // GOTOOLCHAIN from scripts/test-browser.sh
  }
  return cli;
}
