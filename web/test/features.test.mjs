// embeddings.create, logprobs/top_logprobs, tools/tool_choice and seed in the
// OpenAI-shaped JS API (web/openai.js) in headless Chromium, on stories260K:
// embeddings equal to the engine's natively (featref) and equal between 1 and
// 2 Workers, logprobs equal to the native engine's, a named tool_choice whose
// arguments validate against the function's parameters, and the refusals.
// Run by scripts/test-browser.sh.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { copyFileSync } from "node:fs";
import { join } from "node:path";
import Ajv from "ajv";
import { startServer, launch, root, testdata } from "./harness.mjs";

let server, browser, page, errors, stories;

before(async () => {
  server = await startServer();
  copyFileSync(join(testdata, "stories260K.gguf"), join(server.models, "stories.gguf"));
  execFileSync("go", ["run", "./wasm/browser/worker/internal/mkmodel", "-pooling", "0", "-o", join(server.models, "noembed.gguf")], { cwd: root, stdio: "inherit" });
  stories = `${server.url}test-models/stories.gguf`;
  browser = await launch();
  page = await (await browser.newContext()).newPage();
  errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(`${server.url}web/test/features.html`);
  await page.waitForFunction(() => window.ready);
});

after(async () => {
  if (browser) await browser.close();
  if (server) server.stop();
});

// featref: the native engine's embeddings of texts and greedy logprobs.
function native(args) {
  return JSON.parse(execFileSync("go", ["run", "./wasm/browser/worker/internal/featref", ...args], { cwd: root, encoding: "utf8" }));
}

const norm = (v) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));
const maxDiff = (a, b) => a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i])), 0);

test("embeddings.create: OpenAI's shape, unit vectors equal to the engine's natively, 1 and 2 Workers alike", async (t) => {
  const texts = ["Once upon a time", "The little dog ran to the park.", "Lily liked cake"];
  const ref = native(["-prompt", "", ...texts]);
  const one = await page.evaluate(([t]) => window.embed(null, 1, t, [1, 400, 401]), [texts]);
  const two = await page.evaluate(([u, t]) => window.embed(u, 2, t, [1, 400, 401]), [stories, texts]);
  assert.equal(two.info.workers, 2, "the URL model is split over 2 Workers");
  for (const [what, r] of [["1 Worker", one], ["2 Workers", two]]) {
    assert.equal(r.f.object, "list");
    assert.equal(r.f.model, r.info.name);
    assert.equal(r.f.data.length, texts.length);
    assert.deepEqual(r.f.usage, { prompt_tokens: ref.tokens.reduce((a, b) => a + b, 0), total_tokens: ref.tokens.reduce((a, b) => a + b, 0) });
    for (const [i, d] of r.f.data.entries()) {
      assert.deepEqual(Object.keys(d).sort(), ["embedding", "index", "object"]);
      assert.equal(d.object, "embedding");
      assert.equal(d.index, i);
      assert.equal(d.embedding.length, r.info.dim);
      assert.ok(Math.abs(norm(d.embedding) - 1) < 1e-5, `${what} ${i}: norm ${norm(d.embedding)}`);
      // wasm SIMD and native amd64 kernels may round differently in the last bits.
      assert.ok(maxDiff(d.embedding, ref.embeddings[i]) < 1e-4, `${what} ${i}: differs from the native vector by ${maxDiff(d.embedding, ref.embeddings[i])}`);
      assert.deepEqual(r.decoded[i], d.embedding, `${what} ${i}: base64 decodes to the floats`);
    }
    assert.equal(r.base64Type, "string");
    assert.deepEqual(r.one.data[0].embedding, r.f.data[0].embedding, `${what}: a string input is the array's first`);
    assert.equal(r.tok.data.length, 1);
    assert.equal(r.tok.usage.prompt_tokens, 3);
    assert.ok(r.after.length > 0, `${what}: generates after embedding`);
    assert.ok(maxDiff(r.f.data[0].embedding, r.f.data[1].embedding) > 1e-3, `${what}: two texts, two vectors`);
  }
  for (const i of texts.keys()) assert.deepEqual(two.f.data[i].embedding, one.f.data[i].embedding, `text ${i}: 2 Workers differ from 1`);
  t.diagnostic(`dim ${one.info.dim}; largest difference from the native vectors: ${Math.max(...one.f.data.map((d, i) => maxDiff(d.embedding, ref.embeddings[i])))}`);
  assert.deepEqual(two.tok.data[0].embedding, one.tok.data[0].embedding);
  assert.deepEqual(errors, []);
});

test("logprobs and top_logprobs: OpenAI's shapes, streamed and not, equal to the native engine's", async (t) => {
  const prompt = "Once upon a time", n = 12, top = 4;
  const r = await page.evaluate(([p, k, t]) => window.logprobs(p, k, t), [prompt, n, top]);
  const c = r.chat.choices[0];
  const content = c.logprobs.content;
  assert.equal(content.length, r.chat.usage.completion_tokens);
  assert.equal(content.length, n);
  for (const [i, e] of content.entries()) {
    assert.deepEqual(Object.keys(e).sort(), ["bytes", "logprob", "token", "top_logprobs"]);
    assert.equal(e.top_logprobs.length, top);
    assert.ok(e.logprob <= 0);
    // Greedy: the chosen token is the most likely one.
    assert.equal(e.top_logprobs[0].token, e.token, `token ${i}`);
    assert.equal(e.top_logprobs[0].logprob, e.logprob, `token ${i}`);
    const sum = e.top_logprobs.reduce((s, t) => s + Math.exp(t.logprob), 0);
    assert.ok(sum <= 1 + 1e-6, `token ${i}: the top probabilities sum to ${sum}`);
    for (let k = 1; k < top; k++) assert.ok(e.top_logprobs[k].logprob <= e.top_logprobs[k - 1].logprob);
    if (!e.token.startsWith("bytes:")) assert.deepEqual(e.bytes, Array.from(new TextEncoder().encode(e.token)));
  }
  assert.equal(content.filter((e) => !e.token.startsWith("bytes:")).map((e) => e.token).join(""), c.message.content);

  // Streamed: the chunks' entries are the same.
  const streamed = r.chatChunks.flatMap((ch) => ch.choices[0]?.logprobs?.content ?? []);
  assert.deepEqual(streamed, content);

  // Completions: the legacy shape, the same numbers as the native engine's greedy run of this prompt.
  const ref = native(["-prompt", prompt, "-n", String(n), "-top", String(top)]);
  const lp = r.cmpl.choices[0].logprobs;
  assert.deepEqual(Object.keys(lp).sort(), ["text_offset", "token_logprobs", "tokens", "top_logprobs"]);
  assert.equal(lp.tokens.length, n);
  for (let i = 0; i < n; i++) {
    assert.ok(Math.abs(lp.token_logprobs[i] - ref.logprobs[i].logprob) < 1e-3, `token ${i}: ${lp.token_logprobs[i]} vs native ${ref.logprobs[i].logprob}`);
    assert.equal(Object.keys(lp.top_logprobs[i]).length <= top, true);
    const natTop = ref.logprobs[i].top.map((t) => t.logprob);
    const ours = Object.values(lp.top_logprobs[i]).sort((a, b) => b - a);
    for (let k = 0; k < ours.length; k++) assert.ok(Math.abs(ours[k] - natTop[k]) < 1e-3, `token ${i} alternative ${k}`);
  }
  // text_offset: code points from the start of the prompt (OpenAI's, and the Worker's), each token's text after the one before.
  let at = [...prompt].length;
  for (let i = 0; i < n; i++) {
    assert.equal(lp.text_offset[i], at, `token ${i}`);
    at += [...lp.tokens[i]].length;
  }
  assert.equal(lp.tokens.join(""), r.cmpl.choices[0].text);
  t.diagnostic(`largest difference from the native logprobs: ${Math.max(...lp.token_logprobs.map((x, i) => Math.abs(x - ref.logprobs[i].logprob)))}; first tokens ${JSON.stringify(lp.tokens.slice(0, 4))} ${JSON.stringify(lp.token_logprobs.slice(0, 4))}`);
  const sLp = r.cmplChunks.filter((ch) => ch.choices.length && ch.choices[0].logprobs).map((ch) => ch.choices[0].logprobs);
  assert.deepEqual(sLp.flatMap((l) => l.token_logprobs), lp.token_logprobs);
  assert.deepEqual(sLp.flatMap((l) => l.text_offset), lp.text_offset);

  // Sampled tokens need not be the most likely; their logprob is still theirs.
  for (const e of r.sampled.choices[0].logprobs.content) {
    assert.deepEqual(e.top_logprobs, []);
    assert.ok(e.logprob <= 0 && e.logprob >= -9999);
  }
  assert.deepEqual(errors, []);
});

test("tools: a named tool_choice calls that function with arguments valid under its parameters, streamed as OpenAI's deltas, fed back", async (t) => {
  const tool = { type: "function", function: { name: "get_weather", description: "The weather in a city", parameters: { type: "object", properties: { city: { type: "string", maxLength: 6 }, unit: { enum: ["C", "F"] }, days: { type: "integer", minimum: 1, maximum: 7 } }, required: ["city", "unit", "days"], additionalProperties: false } } };
  const validate = new Ajv().compile(tool.function.parameters);
  for (const [seed, parallel] of [[1, true], [2, false]]) {
    const r = await page.evaluate(([t, s, p]) => window.tools(t, s, p), [tool, seed, parallel]);
    const c = r.whole.choices[0];
    assert.equal(c.finish_reason, "tool_calls");
    assert.equal(c.message.content, null);
    if (parallel) assert.ok(c.message.tool_calls.length >= 1);
    else assert.equal(c.message.tool_calls.length, 1, "parallel_tool_calls: false");
    for (const [i, call] of c.message.tool_calls.entries()) {
      assert.deepEqual(Object.keys(call).sort(), ["function", "id", "type"]);
      assert.equal(call.type, "function");
      assert.equal(call.id, `call_${r.whole.id.slice("chatcmpl-".length)}_${i}`);
      assert.equal(call.function.name, "get_weather");
      const args = JSON.parse(call.function.arguments);
      assert.ok(validate(args), `seed ${seed}: ${call.function.arguments}: ${JSON.stringify(validate.errors)}`);
    }

    // Streamed, the same seed: the role first, then per call index/id/type/name with arguments "", then pieces.
    const chunks = r.chunks;
    assert.deepEqual(chunks[0].choices[0].delta, { role: "assistant", content: "" });
    assert.equal(chunks.at(-1).choices[0].finish_reason, "tool_calls");
    const calls = [];
    for (const ch of chunks.slice(1, -1)) {
      const d = ch.choices[0].delta;
      assert.equal(ch.choices[0].finish_reason, null);
      assert.equal(d.content, undefined, "no content in a call");
      assert.equal(d.tool_calls.length, 1);
      const tc = d.tool_calls[0];
      if (tc.id !== undefined) {
        assert.equal(tc.index, calls.length);
        assert.equal(tc.type, "function");
        assert.equal(tc.function.arguments, "");
        calls.push({ id: tc.id, type: tc.type, function: { name: tc.function.name, arguments: "" } });
      } else {
        assert.deepEqual(Object.keys(tc).sort(), ["function", "index"]);
        assert.deepEqual(Object.keys(tc.function), ["arguments"]);
        calls[tc.index].function.arguments += tc.function.arguments;
      }
    }
    assert.ok(chunks.length > 4, `${chunks.length} chunks`);
    assert.deepEqual(calls.map((x) => x.function), c.message.tool_calls.map((x) => x.function), "streamed and whole calls agree (one seed)");
    t.diagnostic(`seed ${seed}: ${c.message.tool_calls.map((x) => x.function.arguments).join(" ")} in ${chunks.length} chunks`);

    // Fed back (the assistant message as returned, a tool result): the prompt holds both and reuses the cache.
    assert.ok(r.next.usage.prompt_tokens > r.whole.usage.prompt_tokens + r.whole.usage.completion_tokens, JSON.stringify(r.next.usage));
    assert.equal(typeof r.next.choices[0].message.content === "string" || r.next.choices[0].message.tool_calls !== undefined, true);
    // tool_choice "none": text, no calls.
    assert.equal(r.none.choices[0].message.tool_calls, undefined);
    assert.equal(typeof r.none.choices[0].message.content, "string");
  }
  assert.deepEqual(errors, []);
});

test("seed: the same seed gives the same sampled text, other seeds others, negative seeds too", async () => {
  const t = await page.evaluate(() => window.seeds([5, 5, 6, 7, 8, -5, -5]));
  assert.equal(t[0], t[1]);
  assert.ok(new Set(t.slice(1, 5)).size > 1, JSON.stringify(t));
  // A negative seed, as the Cloudflare Worker takes it (int64, two's
  // complement: host.SeedOf): reproducible, and not seed 5's sampling.
  assert.equal(t[5], t[6]);
  assert.notEqual(t[5], t[0]);
});

test("bad requests: BadRequestError naming the field; a model that cannot embed", async () => {
  const msgs = [{ role: "user", content: "hi" }];
  const fn = (name, parameters) => ({ type: "function", function: { name, parameters } });
  const cases = [
    ["embeddings", { input: "" }, "input"],
    ["embeddings", { input: [] }, "input"],
    ["embeddings", { input: ["a", 3] }, "input[1]"],
    ["embeddings", { input: [1, 1.5] }, "input[1]"],
    ["embeddings", { input: [1, 1 << 20] }, "input"],
    ["embeddings", { input: "a", encoding_format: "int8" }, "encoding_format"],
    ["embeddings", { input: "a", dimensions: 3 }, "dimensions"],
    ["embeddings", { input: "a", extra: 1 }, "extra"],
    ["chat", { messages: msgs, logprobs: "yes" }, "logprobs"],
    ["chat", { messages: msgs, top_logprobs: 3 }, "top_logprobs"],
    ["chat", { messages: msgs, logprobs: true, top_logprobs: 21 }, "top_logprobs"],
    ["completions", { prompt: "x", logprobs: 6 }, "logprobs"],
    ["completions", { prompt: "x", logprobs: true }, "logprobs"],
    ["completions", { prompt: "x", tools: [] }, "tools"],
    ["chat", { messages: msgs, tools: {} }, "tools"],
    ["chat", { messages: msgs, tools: [{ type: "retrieval" }] }, "tools[0].type"],
    ["chat", { messages: msgs, tools: [fn("bad name!", null)] }, "tools[0].function.name"],
    ["chat", { messages: msgs, tools: [fn("f", "schema")] }, "tools[0].function.parameters"],
    ["chat", { messages: msgs, tools: [fn("f", { type: "string" })] }, "tools[0].function.parameters"],
    ["chat", { messages: msgs, tools: [fn("f", { type: "object", properties: { a: { type: "frob" } } })] }, "tools[0].function.parameters"],
    ["chat", { messages: msgs, tools: [fn("f", null), fn("f", null)] }, "tools[1].function.name"],
    ["chat", { messages: msgs, tools: [fn("f", null)], tool_choice: "sometimes" }, "tool_choice"],
    ["chat", { messages: msgs, tools: [fn("f", null)], tool_choice: { type: "function", function: { name: "g" } } }, "tool_choice.function.name"],
    ["chat", { messages: msgs, tool_choice: "required" }, "tool_choice"],
    ["chat", { messages: msgs, tools: [fn("f", null)], response_format: { type: "json_object" } }, "response_format"],
    ["chat", { messages: msgs, tools: [fn("f", null)], parallel_tool_calls: "yes" }, "parallel_tool_calls"],
    ["chat", { messages: [{ role: "tool", content: "x" }] }, "messages[0].tool_call_id"],
    ["chat", { messages: [{ role: "user", content: "x", tool_calls: [{ function: { name: "f" } }] }] }, "messages[0].tool_calls"],
    ["chat", { messages: [{ role: "assistant", content: null, tool_calls: [{ type: "function", function: { name: "f", arguments: "{oops" } }] }] }, "messages[0].tool_calls[0].function.arguments"],
    ["chat", { messages: msgs, functions: [{ name: "f" }] }, "functions"],
  ];
  const r = await page.evaluate(([cs]) => window.refusals(null, cs), [cases.map(([e, b]) => [e, b])]);
  for (const [i, [endpoint, body, param]] of cases.entries()) {
    assert.ok(r[i].bad && r[i].code === "bad_request", `${endpoint} ${JSON.stringify(body)}: ${JSON.stringify(r[i])}`);
    assert.equal(r[i].param, param, `${endpoint} ${JSON.stringify(body)}: ${r[i].message}`);
  }
  const ne = await page.evaluate(([u]) => window.refusals(u, [["embeddings", { input: "a" }], ["chat", { messages: [{ role: "user", content: "hi" }], max_tokens: 2 }]]), [`${server.url}test-models/noembed.gguf`]);
  assert.ok(ne[0].bad && ne[0].code === "embeddings_not_supported" && ne[0].param === "model", JSON.stringify(ne[0]));
  assert.match(ne[0].message, /no sequence embeddings.*pooling/);
  assert.equal(ne[1].ok, true, "the model still generates");
  assert.deepEqual(errors, []);
});
