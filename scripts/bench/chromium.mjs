// What the bench's Chromium runners (browser.mjs, kernels.mjs) share:
// starting the static server and headless Chromium.
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository's root. */
export const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/**
 * serve starts the static server serve (build/serve) with args and
 * resolves with {server, url}: its process and the URL it prints (no
 * trailing slash).
 */
export async function serve(serve, args) {
  const server = spawn(serve, ["-addr", "127.0.0.1:0", ...args], { stdio: ["ignore", "pipe", "inherit"] });
  const url = await new Promise((resolve, reject) => {
    let out = "";
    server.stdout.on("data", (d) => { out += d; const m = out.match(/http:\/\/[^\s]+/); if (m) resolve(m[0].replace(/\/$/, "")); });
    server.on("exit", (c) => reject(new Error("server exited " + c)));
  });
  return { server, url };
}

/**
 * launch starts headless Chromium ($CHROMIUM, default /usr/bin/chromium,
 * through the repo's playwright-core) with the project's flags and extra.
 */
export function launch(extra = []) {
  const { chromium } = createRequire(join(root, "package.json"))("playwright-core");
  return chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium", headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
      "--disable-component-update", "--disable-sync", ...extra],
  });
}
