// The relaxed-SIMD build (build/worker-relaxed.wasm, quant's relaxedsimd
// kernels) in headless Chromium, whose relaxed dot is checked first (Node
// 20's is wrong, so these tests run nowhere else): the patched quant test
// binary validates and passes its twin tests, the two builds generate the
// same tokens, and web/picolm.js picks the build it should. Run by
// scripts/test-browser.sh (which builds the workers first).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { startServer, launch, root, testdata } from "./harness.mjs";

let server, browser, page;
const errors = [];

before(async () => {
  server = await startServer();
  browser = await launch();
  const context = await browser.newContext();
  page = await context.newPage();
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(`${server.url}web/test/relaxed.html`);
  await page.waitForFunction(() => window.ready);
});

after(async () => {
  if (browser) await browser.close();
  if (server) server.stop();
});

test("Chromium computes the relaxed dot right, and both builds are there", async () => {
  assert.equal(await page.evaluate(() => window.relaxedDotOnes()), 4);
  assert.deepEqual(await page.evaluate(() => window.builds()), { wasmBuild: "relaxed", BUILDS: ["relaxed", "simd128"] });
  assert.ok(existsSync(join(root, "build", "worker-relaxed.wasm")), "scripts/serve.sh built build/worker-relaxed.wasm");
});

test("picolm.js's probe finds the relaxed dot right and relaxed_madd fused, and picks simd128 where either is not", async () => {
  const p = await page.evaluate(() => window.probe());
  assert.deepEqual(p.here, { dot: 4, madd: 2 ** -24 });
  assert.deepEqual(p.picks, ["simd128", "relaxed", "simd128", "simd128"]);
});

test("the patched quant test binary validates (the unpatched one does not) and its relaxed kernels pass the twin tests", async () => {
  const env = { ...process.env, GOOS: "js", GOARCH: "wasm", GOEXPERIMENT: "simd" }; // GOTOOLCHAIN from scripts/test-browser.sh
  const raw = join(root, "build", "quant-relaxed.test.raw.wasm"), patched = join(root, "build", "quant-relaxed.test.wasm");
  execFileSync("go", ["test", "-c", "-tags", "relaxedsimd", "-o", raw, "./quant"], { cwd: root, env, stdio: "inherit" });
  execFileSync("go", ["run", "./scripts/relaxpatch", raw, patched], { cwd: root, stdio: "inherit" });
  // A page of its own: the test binary's runtime may still be called after it exits.
  const tp = await page.context().newPage();
  await tp.goto(`${server.url}web/test/relaxed.html`);
  await tp.waitForFunction(() => window.ready);
  try {
    const unpatched = await tp.evaluate((u) => window.runTest(u, []), `${server.url}build/quant-relaxed.test.raw.wasm`);
    assert.equal(unpatched.valid, false, "Go's encoding of the relaxed ops does not validate");
    const run = ["TestKernelTables", "TestTableTwins", "TestDotTwinsRandom", "TestDotNRandom", "TestDotTwinsManyBlocks",
      "TestDotScalesAllFP16", "TestMatVecTwins", "TestMatVec", "TestMatMulManyRows", "TestMatVecQ8_0Signs", "TestQ8_0RelaxedPaths",
      "TestExpTwins", "TestExpSweep", "TestExpHalfwayLanes", "TestExpRelaxedFallback",
      "TestIQ4Signs", "TestIQ4RelaxedPaths", "TestMatMul", "TestMatVecX86Midpoint",
      "TestQ5_KDoubleRounding", "TestQ3_KDoubleRounding", "TestQ2_KDoubleRounding"];
    const r = await tp.evaluate(([u, a]) => window.runTest(u, a), [`${server.url}build/quant-relaxed.test.wasm`, ["-test.v", "-test.run", `^(${run.join("|")})$`]]);
    assert.equal(r.valid, true);
    assert.equal(r.code, 0, r.output.slice(-4000));
    assert.match(r.output, /platform tables: SIMD128, relaxed SIMD\n/);
    for (const f of ["Q4_K", "Q6_K", "Q4_0", "Q8_0", "IQ4_XS", "IQ4_NL", "Q4_1", "Q5_0", "Q5_1", "Q5_K", "Q3_K", "Q2_K"]) assert.match(r.output, new RegExp(`--- PASS: TestTableTwins/relaxed_SIMD/${f} `), f);
    // the x86-order K-quants' exact path (a float64 sum on a float32 midpoint)
    for (const t of ["Q5_K", "Q3_K"]) assert.match(r.output, new RegExp(`--- PASS: Test${t}DoubleRounding/Go\\+SIMD128\\+relaxed_SIMD `), t);
    for (const s of ["mins", "lanes"]) assert.match(r.output, new RegExp(`--- PASS: TestQ2_KDoubleRounding/${s}/Go\\+SIMD128\\+relaxed_SIMD `), s);
    assert.match(r.output, /--- PASS: TestDotTwinsRandom\/Go\+SIMD128\+relaxed_SIMD /);
    assert.match(r.output, /--- PASS: TestMatVecTwins/);
    assert.match(r.output, /--- PASS: TestMatMulManyRows\/Go\+SIMD128\+relaxed_SIMD /);
    assert.match(r.output, /--- PASS: TestMatVecQ8_0Signs\/Go\+SIMD128\+relaxed_SIMD /);
    assert.match(r.output, /--- PASS: TestQ8_0RelaxedPaths /);
    for (const f of ["TestExpTwins", "TestExpSweep", "TestExpHalfwayLanes"]) assert.match(r.output, new RegExp(`--- PASS: ${f}/Go\\+SIMD128\\+relaxed_SIMD `), f);
    assert.match(r.output, /--- PASS: TestExpRelaxedFallback /);
    assert.match(r.output, /--- PASS: TestIQ4Signs\/Go\+SIMD128\+relaxed_SIMD /);
    assert.match(r.output, /--- PASS: TestIQ4RelaxedPaths /);
    assert.match(r.output, /--- PASS: TestMatMul\/Go\+SIMD128\+relaxed_SIMD /);
    // Q4_1, Q5_0 and Q5_1 make ggml's fused multiply-adds with f32x4.relaxed_madd
    assert.match(r.output, /--- PASS: TestMatVecX86Midpoint\/Go\+SIMD128\+relaxed_SIMD /);
    assert.doesNotMatch(r.output, /--- (FAIL|SKIP): .*relaxed/);
  } finally {
    await tp.close();
    rmSync(raw, { force: true });
    rmSync(patched, { force: true });
  }
});

test("the relaxed and SIMD128 builds generate the same tokens, greedy and sampled, on 1 and 2 Workers", async () => {
  const files = ["synth-small-Q4_K_M.gguf", "synth-small-Q6_K.gguf", "synth-small-Q4_0.gguf", "synth-small-Q8_0.gguf", "synth-small-IQ4_XS.gguf"];
  for (const f of files) copyFileSync(join(testdata, "synth", f), join(server.models, f));
  try {
    // A short prompt, and one longer than a prefill batch (16 tokens).
    const prompts = ["Once upon a time", "The little dog ran to the park and saw a big red ball under the old tree, and then it began to rain on the town"];
    const urls = [null, ...files.map((f) => `${server.url}test-models/${f}`)];
    for (const workers of [1, 2]) {
      const runs = await page.evaluate(([u, p, w]) => window.generate(u, p, ["relaxed", "simd128"], w), [workers === 1 ? urls : urls.slice(1), prompts, workers]);
      assert.equal(runs.length, (workers === 1 ? urls.length : urls.length - 1) * 2 * prompts.length);
      for (let i = 0; i < runs.length; i += 2 * prompts.length) {
        for (let j = 0; j < prompts.length; j++) {
          const a = runs[i + j], b = runs[i + prompts.length + j];
          const what = `${a.url ?? "built-in"}, ${workers} Workers: ${a.prompt}`;
          assert.equal(a.got, "relaxed", what);
          assert.equal(b.got, "simd128", what);
          assert.equal(a.workers, a.url === null ? 1 : workers, what);
          assert.ok(a.greedy.split("\u0001").length >= 8, `${what}: ${a.greedy}`);
          assert.equal(a.greedy, b.greedy, `${what} (greedy)`);
          assert.equal(a.sampled, b.sampled, `${what} (sampled)`);
        }
      }
    }
    assert.deepEqual(errors, []);
  } finally {
    for (const f of files) rmSync(join(server.models, f), { force: true });
  }
});

test("picolm.js picks relaxed where it validates, simd128 where it does not, and either when asked", async () => {
  const auto = await page.evaluate(() => window.choose({}, false));
  assert.equal(auto.chosen, "relaxed");
  assert.equal(auto.build, "relaxed");
  const refused = await page.evaluate(() => window.choose({}, true));
  assert.equal(refused.chosen, "simd128");
  assert.equal(refused.build, "simd128");
  assert.equal(refused.text, auto.text);
  for (const build of ["relaxed", "simd128"]) {
    const r = await page.evaluate((b) => window.choose({ build: b }, false), build);
    assert.equal(r.build, build);
    assert.equal(r.text, auto.text);
  }
  const bad = await page.evaluate(() => window.choose({ build: "avx" }, false));
  assert.match(bad.error, /build must be one of relaxed, simd128, got avx/);
  assert.deepEqual(errors, []);
});
