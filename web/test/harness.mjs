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

// startRangeServer serves the files of dir over HTTP on a free port of
// 127.0.0.1 as a model host on another origin would (CORS, ETag, Range
// requests answered with 206), with faults to test downloads against, set
// by server.faults (changeable between requests):
//   ranges: false   Range headers are ignored (a whole 200, no Accept-Ranges)
//   drops: n, dropAfter: b   the next n responses are cut (socket destroyed) after b body bytes
//   stalls: n, stallAfter: b the next n responses send b body bytes, then nothing more
//   delayMs: ms     each body is sent ms after its headers (requests overlap)
//   changeAfter: n  responses after the next n have another ETag (the file changed)
// server.stats: {requests: [{range, status}], bytes (body bytes written),
// maxOpen (the most responses open at once)}.
// Resolves {url (ending in /), faults, stats, stop}.
export async function startRangeServer(dir) {
  const { createServer } = await import("node:http");
  const { readFileSync, statSync } = await import("node:fs");
  const faults = { ranges: true, drops: 0, dropAfter: 0, stalls: 0, stallAfter: 0, delayMs: 0, changeAfter: -1 };
  const stats = { requests: [], bytes: 0, maxOpen: 0 };
  const hung = new Set();
  let open = 0;
  const server = createServer((req, res) => {
    open++;
    stats.maxOpen = Math.max(stats.maxOpen, open);
    res.on("close", () => open--);
    res.setHeader("Access-Control-Allow-Origin", "*");
    res.setHeader("Access-Control-Expose-Headers", "Content-Range, Accept-Ranges, ETag, Content-Length");
    res.setHeader("Cross-Origin-Resource-Policy", "cross-origin");
    if (req.method === "OPTIONS") {
      res.writeHead(204, { "Access-Control-Allow-Headers": "Range", "Access-Control-Allow-Methods": "GET, HEAD" });
      return res.end();
    }
    const file = join(dir, decodeURIComponent(new URL(req.url, "http://x").pathname).replace(/^\/+/, ""));
    let st;
    try { st = statSync(file); } catch { res.writeHead(404); return res.end(); }
    const size = st.size;
    let etag = `"${st.mtimeMs.toString(36)}-${size}"`;
    if (faults.changeAfter === 0) etag = `"changed-${size}"`;
    else if (faults.changeAfter > 0) faults.changeAfter--;
    let start = 0, end = size - 1, status = 200;
    const m = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range || "");
    const headers = { "Content-Type": "application/octet-stream", ETag: etag };
    if (faults.ranges) headers["Accept-Ranges"] = "bytes";
    if (m && faults.ranges) {
      start = Number(m[1]);
      end = m[2] ? Math.min(Number(m[2]), size - 1) : size - 1;
      if (start >= size || start > end) {
        stats.requests.push({ range: req.headers.range, status: 416 });
        res.writeHead(416, { "Content-Range": `bytes */${size}` });
        return res.end();
      }
      status = 206;
      headers["Content-Range"] = `bytes ${start}-${end}/${size}`;
    }
    headers["Content-Length"] = String(end - start + 1);
    stats.requests.push({ range: req.headers.range || "", status });
    res.writeHead(status, headers);
    if (req.method === "HEAD") return res.end();
    res.flushHeaders();
    if (faults.delayMs > 0) setTimeout(() => send(req, res, file, start, end), faults.delayMs);
    else send(req, res, file, start, end);
  });
  const send = (req, res, file, start, end) => {
    let body = readFileSync(file).subarray(start, end + 1);
    if (faults.drops > 0 && body.length > faults.dropAfter) {
      faults.drops--;
      body = body.subarray(0, faults.dropAfter);
      stats.bytes += body.length;
      res.write(body, () => setTimeout(() => res.socket && res.socket.destroy(), 20));
      return;
    }
    if (faults.stalls > 0 && body.length > faults.stallAfter) {
      faults.stalls--;
      body = body.subarray(0, faults.stallAfter);
      stats.bytes += body.length;
      hung.add(res);
      res.write(body);
      return;
    }
    stats.bytes += body.length;
    res.end(body);
  };
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/`,
    faults, stats,
    stop: () => {
      for (const r of hung) r.socket && r.socket.destroy();
      server.closeAllConnections();
      server.close();
    },
  };
}
