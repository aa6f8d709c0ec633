// The npm package as a web developer gets it: `npm pack` the repo, install
// the tarball into a fresh app directory, compile web/types/example.ts (every
// call of the API) with tsc (strict) against the installed package's
// declarations (`npm run typecheck` checks it against the repo's, with no
// pack), serve the app with the static server and run it in headless
// Chromium: the engine's Worker and wasm load from node_modules/picolm-wasm
// (URLs resolved from import.meta.url) and the built-in model generates. Run
// by scripts/test-browser.sh, after its build.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync, copyFileSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServer, launch, root, testdata } from "./harness.mjs";

const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
const references = readFileSync(join(testdata, "reference", "stories260K-greedy.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
let dir, server, browser, packed;

before(() => {
  dir = mkdtempSync(join(tmpdir(), "picolm-package-"));
  // --ignore-scripts is not used: prepack (scripts/checkpack.mjs) refuses a missing build.
  const out = execFileSync("npm", ["pack", "--json", "--pack-destination", dir], { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  packed = JSON.parse(out.slice(out.search(/^\[/m)))[0]; // after any lifecycle output
});

after(async () => {
  if (browser) await browser.close();
  if (server) server.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test("npm pack ships the JS API, its types and the built engine, and nothing else", () => {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  assert.equal(packed.name, pkg.name);
  const files = packed.files.map((f) => f.path).sort();
  assert.equal(pkg.license, "MIT");
  assert.match(readFileSync(join(root, "LICENSE"), "utf8"), /^MIT License\n/);
  for (const f of ["package.json", "README.md", "LICENSE", "web/picolm.js", "web/picolm.d.ts", "web/errors.js", "web/openai.js", "web/worker.js", "web/store-worker.js",
    "build/worker.wasm", "build/worker-relaxed.wasm", "build/wasm_exec.js", "wasm/internal/defaultmodel/LICENSE.stories260K"]) {
    assert.ok(files.includes(f), `${f} is not in the package: ${files.join(", ")}`);
  }
  assert.deepEqual(files.filter((f) => /\.go$|\/test\/|\.gguf$|ui\.wasm$|serve$/.test(f)), []);
  // Every file the JS imports or loads is shipped: the imports of the modules, and worker.js's ../build/ files.
  for (const mod of ["web/picolm.js", "web/openai.js", "web/cache.js"]) {
    for (const [, spec] of readFileSync(join(root, mod), "utf8").matchAll(/^(?:import|export) [^;]*? from "\.\/([^"]+)";$/gm)) {
      assert.ok(files.includes(`web/${spec}`), `${mod} imports ./${spec}, which is not shipped`);
    }
  }
  for (const [, f] of readFileSync(join(root, "web/worker.js"), "utf8").matchAll(/"\.\.\/(build\/[^"]+)"/g)) assert.ok(files.includes(f), `worker.js loads ../${f}, not shipped`);
});

test("the packed package installed in an app: the typed example compiles and runs in Chromium", async () => {
  const app = join(dir, "app");
  mkdirSync(join(app, "src"), { recursive: true });
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
  execFileSync("npm", ["install", "--offline", "--no-audit", "--no-fund", "--no-package-lock", join(dir, packed.filename)], { cwd: app, stdio: "inherit" });
  copyFileSync(join(root, "web", "types", "example.ts"), join(app, "src", "example.ts"));
  writeFileSync(join(app, "tsconfig.json"), JSON.stringify({
    compilerOptions: { target: "es2022", module: "es2022", moduleResolution: "bundler", lib: ["es2022", "dom", "dom.iterable"], strict: true, outDir: "out", rootDir: "src" },
    files: ["src/example.ts"],
  }));
  execFileSync(process.execPath, [tsc, "-p", app], { stdio: "inherit" });
  writeFileSync(join(app, "index.html"), `<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,">
<script type="importmap">{"imports": {"picolm-wasm": "./node_modules/picolm-wasm/web/picolm.js"}}</script></head>
<body><script type="module">import { main } from "./out/example.js"; window.main = main; window.ready = true;</script></body></html>`);
  writeFileSync(join(app, "bad.gguf"), "GGUF\x03\x00\x00\x00garbage");

  server = await startServer(app);
  browser = await launch();
  const page = await browser.newPage();
  const errors = [], requests = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("request", (r) => requests.push(new URL(r.url()).pathname));
  await page.goto(server.url);
  await page.waitForFunction(() => window.ready);
  const r = await page.evaluate((u) => window.main(u), `${server.url}bad.gguf`);

  // The engine came from the installed package.
  assert.ok(requests.includes("/node_modules/picolm-wasm/web/worker.js"), requests.join(" "));
  assert.ok(requests.some((p) => /^\/node_modules\/picolm-wasm\/build\/worker(-relaxed)?\.wasm$/.test(p)), requests.join(" "));
  assert.ok(requests.includes("/node_modules/picolm-wasm/build/wasm_exec.js"));
  assert.ok(r.builds.includes(r.build));
  assert.equal(r.sameClass, true);
  assert.equal(r.canSplit, true); // build/serve sends COOP/COEP
  assert.ok(r.maxModelBytes > 3e9);
  assert.match(r.model, /stories260K/);

  // What it generated: llama.cpp's greedy text where the prompt is one of the references.
  const ref = references[0];
  assert.equal(ref.prompt, "Once upon a time");
  assert.equal(r.runStats.generated, 16);
  assert.ok(r.greedy.length > 10 && ref.continuation.startsWith(r.greedy), `${JSON.stringify(r.greedy)} is not the start of ${JSON.stringify(ref.continuation)}`);
  assert.ok(r.completion.choices[0].text === r.completionStreamed && r.completion.choices[0].text === r.afterAbort, JSON.stringify(r));
  assert.ok(r.chat.choices[0].message.content.length > 0);
  assert.ok(r.streamed.length > 0 && r.chunks > 3 && r.finish === "length" && r.usageChunk);
  assert.equal(r.secondTurnCached, r.firstTurnTokens);
  assert.ok(r.secondTurnPrompt > r.secondTurnCached);
  assert.ok(typeof r.json.name === "string" && Number.isInteger(r.json.age), JSON.stringify(r.json));
  assert.match(r.grammar, /^(yes|no)$/);
  assert.equal(r.badParam, "temperature");
  assert.equal(r.badCode, "bad_request");
  assert.equal(r.contextCode, "context_full");
  assert.equal(r.aborted, "AbortError");
  assert.equal(r.stoppedFinish, "abort");
  assert.equal(r.loadError, "model_load");
  assert.ok(r.progress >= 0 && r.cached >= 0 && r.deleted === false);
  assert.match(r.formatted, /^\d+(\.\d)? (KB|MB)$/);
  assert.ok(r.embeddingDim > 0 && Math.abs(r.embeddingNorm - 1) < 1e-5, `embeddings: ${r.embeddingDim}, norm ${r.embeddingNorm}`);
  assert.equal(r.logprobTokens, 4);
  assert.equal(r.completionLogprobTokens, 3);
  assert.equal(r.toolFinish, "tool_calls");
  assert.ok(typeof r.toolArgs.city === "string" && r.toolArgs.city.length <= 8, JSON.stringify(r.toolArgs));
  assert.ok(r.toolFedBack > 10);
  assert.ok(r.statePositions > 8 && r.restoredPositions === r.statePositions && r.stateRestoredSame, JSON.stringify([r.statePositions, r.restoredPositions]));
  assert.deepEqual([r.states, r.stateError, r.stateDeleted], [1, "state", true]);
  assert.ok(typeof r.storage.persisted === "boolean" && r.storage.quota > 0, JSON.stringify(r.storage));
  assert.deepEqual(errors, []);
});
