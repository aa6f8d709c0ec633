// The OpenAI-shaped JS API (web/openai.js) in headless Chromium, on the
// built-in stories260K and a copy of it with a Zephyr chat template: the
// response shapes, KV reuse across chat turns, structured output, stop
// sequences, AbortSignal, typed errors. Run by scripts/test-browser.sh.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Ajv from "ajv";
import addFormats from "ajv-formats";
import { startServer, launch, root, testdata } from "./harness.mjs";

const references = readFileSync(join(testdata, "reference", "stories260K-greedy.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));

let server, browser, context, page, errors;

before(async () => {
  server = await startServer();
  execFileSync("go", ["run", "./wasm/browser/worker/internal/mkmodel", "-chat", "zephyr", "-o", join(server.models, "oai-zephyr.gguf")], { cwd: root, stdio: "inherit" });
  writeFileSync(join(server.models, "oai-bad.gguf"), "GGUF\x03\x00\x00\x00garbage");
  browser = await launch();
  context = await browser.newContext();
  page = await context.newPage();
  errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(`${server.url}web/test/openai.html`);
  await page.waitForFunction(() => window.ready);
});

after(async () => {
  if (browser) await browser.close();
  if (server) server.stop();
});

test("chat.completions and completions: OpenAI's shapes, streamed and not, llama.cpp's greedy text", async () => {
  const ref = references[0];
  const r = await page.evaluate(([p, n]) => window.shapes(p, n), [ref.prompt, ref.n_predict]);

  // Not streamed: a ChatCompletion.
  assert.match(r.chat.id, /^chatcmpl-[0-9a-f]{24}$/);
  assert.equal(r.chat.object, "chat.completion");
  assert.ok(Number.isInteger(r.chat.created) && Math.abs(r.chat.created - Date.now() / 1000) < 600);
  assert.equal(r.chat.model, r.info.name);
  assert.equal(r.chat.choices.length, 1);
  const c0 = r.chat.choices[0];
  assert.deepEqual(Object.keys(c0).sort(), ["finish_reason", "index", "logprobs", "message"]);
  assert.equal(c0.message.role, "assistant");
  assert.equal(c0.finish_reason, "length");
  const u = r.chat.usage;
  assert.equal(u.completion_tokens, ref.n_predict);
  assert.equal(u.total_tokens, u.prompt_tokens + u.completion_tokens);
  assert.ok(u.prompt_tokens > 3);

  // Streamed: chunks whose deltas make the same text; the role first, the finish reason last, then usage.
  const chunks = r.chatChunks;
  assert.ok(chunks.length >= ref.n_predict / 2, `${chunks.length} chunks`);
  for (const c of chunks) {
    assert.equal(c.id, chunks[0].id);
    assert.equal(c.object, "chat.completion.chunk");
    assert.notEqual(c.id, r.chat.id);
  }
  assert.deepEqual(chunks[0].choices[0].delta, { role: "assistant", content: "" });
  const usageChunk = chunks.at(-1);
  assert.deepEqual(usageChunk.choices, []);
  assert.equal(usageChunk.usage.completion_tokens, ref.n_predict);
  assert.equal(usageChunk.usage.prompt_tokens, u.prompt_tokens);
  for (const c of chunks.slice(0, -1)) assert.equal(c.usage, null);
  const last = chunks.at(-2).choices[0];
  assert.deepEqual(last.delta, {});
  assert.equal(last.finish_reason, "length");
  const text = chunks.map((c) => c.choices[0]?.delta?.content ?? "").join("");
  assert.equal(text, c0.message.content);
  // Without include_usage there is no usage field at all, and no choice-less chunk.
  assert.ok(r.chatPlain.every((c) => !("usage" in c) && c.choices.length === 1));
  assert.equal(r.chatPlain.map((c) => c.choices[0].delta.content ?? "").join(""), c0.message.content);

  // completions.create: the prompt continued as llama.cpp continues it.
  assert.equal(r.cmpl.object, "text_completion");
  assert.match(r.cmpl.id, /^cmpl-/);
  assert.equal(r.cmpl.choices[0].text.replace(/\n$/, ""), ref.continuation.replace(/\n$/, ""));
  assert.equal(r.cmpl.choices[0].finish_reason, "length");
  const streamed = r.cmplChunks.filter((c) => c.choices.length).map((c) => c.choices[0].text).join("");
  assert.equal(streamed, r.cmpl.choices[0].text);
  assert.equal(r.cmplChunks.at(-1).usage.completion_tokens, ref.n_predict);
  assert.equal(r.cmplChunks.at(-2).choices[0].finish_reason, "length");
  // A prompt array: one choice per prompt.
  assert.deepEqual(r.multi.choices.map((c) => c.index), [0, 1]);
  assert.ok(r.multi.choices.every((c) => c.text.length > 0 && c.finish_reason === "length"));
  assert.equal(r.multi.usage.completion_tokens, 16);
  assert.deepEqual(errors, []);
});

test("a chat's second turn prefills only its new tokens (plain transcript and Zephyr template)", async () => {
  const zephyr = `${server.url}test-models/oai-zephyr.gguf`;
  // (Not the plain transcript's 300-token reply: stories260K generates a BOS, which has no text, at its 246th token.)
  for (const [url, maxTokens, stream] of [[null, 16, false], [null, 60, true], [zephyr, 16, true], [zephyr, 300, false]]) {
    const r = await page.evaluate(([u, n, s]) => window.turns(u, n, s), [url, maxTokens, stream]);
    const what = `${url ? "zephyr" : "plain"}, max_tokens ${maxTokens} (${r.first.finish}), stream ${stream}`;
    assert.equal(r.chatTemplate, url ? "zephyr" : "", what);
    const u1 = r.first.usage, u2 = r.second.usage;
    // Every token of the first turn's prompt and reply is reused from the KV cache...
    assert.equal(u2.prompt_tokens_details.cached_tokens, u1.prompt_tokens + u1.completion_tokens, `${what}: ${JSON.stringify([u1, u2])}`);
    // ...and only the new turn is prefilled: the closing of the reply and "And then?" with its turn markers.
    const prefilled = u2.prompt_tokens - u2.prompt_tokens_details.cached_tokens;
    const newText = url ? "</s>\n<|user|>\nAnd then?</s>\n<|assistant|>\n" : "\nUser: And then?\nAssistant:";
    assert.ok(prefilled >= 3 && prefilled <= newText.length, `${what}: ${prefilled} prefilled tokens for ${JSON.stringify(newText)}`);
    assert.ok(r.second.content.length > 0, what);
  }
  assert.deepEqual(errors, []);
});

test("response_format json_object, json_schema and grammar constrain the output", async () => {
  const schema = {
    type: "object",
    properties: { name: { type: "string", maxLength: 10 }, lives: { type: "integer", minimum: 1, maximum: 9 }, tags: { type: "array", items: { enum: ["black", "white"] }, maxItems: 2 } },
    required: ["name", "lives"],
    additionalProperties: false,
  };
  const seeds = [1, 2, 3, 4, 5];
  const r = await page.evaluate(([s, seeds]) => window.structured(s, seeds), [schema, seeds]);
  const ajv = new Ajv({ strict: true });
  addFormats(ajv);
  const valid = ajv.compile(schema);
  for (const [i, text] of r.json.entries()) assert.doesNotThrow(() => JSON.parse(text), `seed ${seeds[i]}: ${text}`);
  for (const [i, { content, finish }] of r.schema.entries()) {
    const v = JSON.parse(content);
    assert.ok(valid(v), `seed ${seeds[i]}: ${content}: ${JSON.stringify(valid.errors)}`);
    // The schema's grammar (as llama.cpp's converter makes it) allows whitespace after the value:
    // the generation ends there with the model's EOS, the grammar's end or max_tokens.
    assert.ok(finish === "stop" || finish === "length", `seed ${seeds[i]}: ${finish}`);
  }
  for (const text of r.grammar) assert.match(text, /^(meow|purr)( (meow|purr))*$/);
  assert.deepEqual(errors, []);
});

test("bad requests are refused with a BadRequestError naming the field; harmless values are accepted", async () => {
  const msgs = [{ role: "user", content: "Hi" }];
  const cases = [
    ["chat", { messages: msgs, temperature: 3 }, "temperature"],
    ["chat", { messages: msgs, top_p: "0.5" }, "top_p"],
    ["chat", { messages: msgs, max_tokens: 1.5 }, "max_tokens"],
    ["chat", { messages: msgs, max_tokens: 0 }, "max_tokens"],
    ["chat", { messages: msgs, seed: -(2 ** 53) }, "seed"],
    ["chat", { messages: msgs, seed: 2 ** 53 }, "seed"],
    ["chat", { messages: msgs, n: 2 }, "n"],
    ["chat", { messages: msgs, frequency_penalty: 0.5 }, "frequency_penalty"],
    ["chat", { messages: msgs, logprobs: 1 }, "logprobs"],
    ["chat", { messages: msgs, tools: [{ type: "function", function: { name: "f", parameters: [] } }] }, "tools[0].function.parameters"],
    ["chat", { messages: msgs, frobnicate: 1 }, "frobnicate"],
    ["chat", { messages: msgs, prompt: "x" }, "prompt"],
    ["chat", { messages: msgs, stop: ["a", "b", "c", "d", "e"] }, "stop"],
    ["chat", { messages: msgs, stop: [""] }, "stop"],
    ["chat", { messages: msgs, stop: 5 }, "stop"],
    ["chat", { messages: msgs, stream_options: { include_usage: true } }, "stream_options"],
    ["chat", { messages: msgs, stream: "yes" }, "stream"],
    ["chat", { messages: msgs, response_format: { type: "xml" } }, "response_format.type"],
    ["chat", { messages: msgs, response_format: { type: "json_schema", json_schema: { schema: {} } } }, "response_format.json_schema.name"],
    ["chat", { messages: [] }, "messages"],
    ["chat", {}, "messages"],
    ["chat", { messages: [{ role: "function", content: "x" }] }, "messages[0].role"],
    ["chat", { messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "x" } }] }] }, "messages[0].content[0].type"],
    ["chat", { messages: [{ role: "user", content: 5 }] }, "messages[0].content"],
    ["chat", { messages: [{ role: "assistant", content: "", tool_calls: [{ id: "1" }] }] }, "messages[0].tool_calls[0].function"],
    ["chat", { messages: [{ role: "user", content: "x", colour: "red" }] }, "messages[0].colour"],
    ["completions", { prompt: 5 }, "prompt"],
    ["completions", { prompt: [1, 2, 3] }, "prompt"],
    ["completions", { prompt: "x", echo: true }, "echo"],
    ["completions", { prompt: "x", best_of: 3 }, "best_of"],
    ["completions", { prompt: "x", messages: msgs }, "messages"],
  ];
  const r = await page.evaluate((b) => window.refusals(b), cases.map(([endpoint, body]) => ({ endpoint, body })));
  for (const [i, [endpoint, body, param]] of cases.entries()) {
    const e = r[i];
    const what = `${endpoint} ${JSON.stringify(body)}`;
    assert.ok(e.bad && e.picolm && e.name === "BadRequestError" && e.code === "bad_request", `${what}: ${JSON.stringify(e)}`);
    assert.equal(e.param, param, `${what}: ${e.message}`);
  }
  const ok = await page.evaluate((b) => window.accepted(b), [
    { endpoint: "chat", body: { messages: msgs, max_tokens: 2, n: 1, logprobs: false, tools: [], tool_choice: "none", frequency_penalty: 0, user: "u", model: "anything", stream: false, stop: null, store: false, metadata: { a: "b" } } },
    { endpoint: "chat", body: { messages: [{ role: "developer", content: "Be brief." }, { role: "user", content: [{ type: "text", text: "Hi" }] }, { role: "assistant", content: "Hello", refusal: null, annotations: [] }, { role: "user", content: "Bye" }], max_completion_tokens: 2 } },
    { endpoint: "completions", body: { prompt: "x", max_tokens: 2, echo: false, best_of: 1, logprobs: null, suffix: null, response_format: { type: "text" } } },
  ]);
  assert.deepEqual(ok, [{ finish: "length" }, { finish: "length" }, { finish: "length" }]);
  assert.deepEqual(errors, []);
});

test("the shared table of bad requests (wasm/cloudflare/internal/server/testdata): the Worker's param and message, word for word", async () => {
  const cases = JSON.parse(readFileSync(join(root, "wasm", "cloudflare", "internal", "server", "testdata", "bad-requests.json"), "utf8"));
  assert.ok(cases.length >= 40, `${cases.length} cases`);
  const r = await page.evaluate((b) => window.refusals(b), cases.map(({ endpoint, body }) => ({ endpoint, body })));
  for (const [i, c] of cases.entries()) {
    const e = r[i];
    const what = `${c.endpoint} ${JSON.stringify(c.body)}`;
    assert.ok(e.bad && e.name === "BadRequestError" && e.code === "bad_request", `${what}: ${JSON.stringify(e)}`);
    assert.deepEqual({ param: e.param, message: e.message }, { param: c.param, message: c.message }, what);
  }
  assert.deepEqual(errors, []);
});

test("stop sequences cut the text before them and end the generation", async () => {
  const r = await page.evaluate((p) => window.stops(p), "Once upon a time");
  const at = r.full.indexOf(r.stop);
  assert.ok(at > 0, JSON.stringify(r));
  assert.equal(r.cut, r.full.slice(0, at));
  assert.equal(r.streamed, r.cut);
  assert.equal(r.finish, "stop");
  assert.ok(r.completion < 48, `${r.completion} tokens generated`);
});

test("an AbortSignal ends a request with an AbortError; the model stays usable", async () => {
  const ref = references[1];
  const r = await page.evaluate(([p, n]) => window.aborts(p, n), [ref.prompt, ref.n_predict]);
  for (const k of ["mid", "nonStream", "pre"]) {
    assert.ok(r[k].abort && r[k].picolm && r[k].name === "AbortError" && r[k].code === "aborted", `${k}: ${JSON.stringify(r[k])}`);
  }
  assert.ok(r.seen >= 4, `${r.seen} chunks`);
  // A signal aborted before run(), or while the request waited behind another, generates nothing.
  assert.equal(r.preRun.generated, 0);
  assert.equal(r.preRun.stop, "stopped");
  assert.equal(r.long.stop, "stopped");
  assert.ok(r.long.generated >= 5 && r.long.generated < 3000, `${r.long.generated}`);
  assert.equal(r.queued.generated, 0, JSON.stringify(r.queued));
  assert.equal(r.queued.stop, "stopped");
  assert.equal(r.firstFinish, "abort");
  assert.ok(r.stoppedFirst >= 5 && r.stoppedFirst < 400, `${r.stoppedFirst} chunks after stop()`);
  assert.equal(r.second.choices[0].finish_reason, "length");
  assert.equal(r.second.usage.completion_tokens, 20);
  assert.equal(r.greedy.replace(/\n$/, ""), ref.continuation.replace(/\n$/, ""));
  assert.deepEqual(errors, []);
});

test("typed errors: context full, bad schema or grammar, model load, bad options, unloaded", async () => {
  const r = await page.evaluate((u) => window.errors(u), `${server.url}test-models/oai-bad.gguf`);
  assert.ok(r.context.context && r.context.code === "context_full" && r.context.name === "ContextFullError", JSON.stringify(r.context));
  assert.match(r.context.message, /context/);
  assert.ok(r.schema.bad && r.schema.code === "bad_request", JSON.stringify(r.schema));
  assert.match(r.schema.message, /frobnicate/);
  assert.ok(r.grammar.bad, JSON.stringify(r.grammar));
  assert.match(r.grammar.message, /undefined rule nowhere/);
  assert.ok(r.load.load && r.load.code === "model_load" && r.load.name === "ModelLoadError", JSON.stringify(r.load));
  assert.match(r.load.message, /oai-bad\.gguf/);
  assert.ok(r.workers.bad && r.workers.param === "workers", JSON.stringify(r.workers));
  assert.ok(r.unloaded.picolm && r.unloaded.code === "no_model", JSON.stringify(r.unloaded));
  assert.deepEqual(errors, []);
});
