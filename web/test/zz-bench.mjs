import { startServer, launch } from "./harness.mjs";
const [pattern, reps, ...bins] = process.argv.slice(2);
const server = await startServer();
const browser = await launch();
try {
  const page = await (await browser.newContext()).newPage();
  await page.goto(`${server.url}web/test/relaxed.html`);
  await page.waitForFunction(() => window.ready);
  for (let rep = 0; rep < Number(reps); rep++) for (const b of bins) {
    const r = await page.evaluate(([u, a]) => window.runTest(u, a), [`${server.url}build/${b}`, ["-test.run", "^$", "-test.bench", pattern, "-test.benchtime", "20x", "-test.count", "5"]]);
    for (const l of r.output.split("\n").filter((l) => l.startsWith("Bench"))) console.log(b, l.replace(/\s+/g, " "));
  }
} finally { await browser.close(); server.stop(); }
