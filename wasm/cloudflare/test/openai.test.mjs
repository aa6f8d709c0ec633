// The Worker's OpenAI API through the official `openai` npm client, end to
// end on workerd: structured output (response_format json_schema, validated
// with ajv), tools (tool_calls, streaming deltas, results fed back),
// embeddings, logprobs, seeds, and the 400s for what cannot be done. Run by
// scripts/test-workers.sh against the embedded-model bundle, after the Go
// end-to-end test (PICOLM_WORKER_URL is the Worker's address).
import { test } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import Ajv from "ajv";
import addFormats from "ajv-formats";

const base = process.env.PICOLM_WORKER_URL;
if (!base) {
  console.log("PICOLM_WORKER_URL not set: run scripts/test-workers.sh");
  process.exit(0);
}
const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: "unused", maxRetries: 0, timeout: 60_000 });
const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv);

const user = (content) => [{ role: "user", content }];

// badRequest runs fn, which must fail with a 400 whose param is param and
// whose message matches says.
async function badRequest(fn, param, says) {
  let err;
  try {
    await fn();
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof OpenAI.APIError, `want an APIError, got ${err}`);
  assert.equal(err.status, 400, err.message);
  assert.equal(err.param ?? err.error?.param, param, err.message);
  assert.match(err.message, says);
  return err;
}

const schemas = {
  person: {
    type: "object",
    properties: {
      name: { type: "string", maxLength: 12 },
      age: { type: "integer", minimum: 0, maximum: 120 },
      pet: { enum: ["cat", "dog", "bird"] },
    },
    required: ["name", "age", "pet"],
    additionalProperties: false,
  },
  list: {
    type: "object",
    properties: {
      tags: { type: "array", items: { type: "string", pattern: "^[a-z]{1,6}$" }, minItems: 1, maxItems: 3 },
      done: { type: "boolean" },
    },
    required: ["tags", "done"],
    additionalProperties: false,
  },
  event: {
    type: "object",
    properties: {
      day: { type: "string", format: "date" },
      score: { type: "number", exclusiveMinimum: 0, maximum: 10 },
      where: { anyOf: [{ type: "null" }, { $ref: "#/$defs/place" }] },
    },
    required: ["day", "score", "where"],
    additionalProperties: false,
    $defs: { place: { type: "object", properties: { city: { type: "string", maxLength: 8 } }, required: ["city"], additionalProperties: false } },
  },
};

test("response_format json_schema: every output validates (ajv), at temperature 1", async () => {
  let n = 0;
  for (const [name, schema] of Object.entries(schemas)) {
    const validate = ajv.compile(schema);
    for (const seed of [1, 2]) {
      const r = await client.chat.completions.create({
        messages: user("Give me the data."),
        max_tokens: 200,
        temperature: 1,
        seed,
        response_format: { type: "json_schema", json_schema: { name, schema, strict: true } },
      });
      const text = r.choices[0].message.content;
      const value = JSON.parse(text);
      assert.ok(validate(value), `${name} seed ${seed}: ${text}: ${ajv.errorsText(validate.errors)}`);
      assert.equal(r.choices[0].finish_reason, "stop");
      n++;
    }
  }
  // Streamed, the same schema and seed give the same text.
  const req = {
    messages: user("Again."),
    max_tokens: 200,
    temperature: 1,
    seed: 9,
    response_format: { type: "json_schema", json_schema: { name: "person", schema: schemas.person } },
  };
  const whole = (await client.chat.completions.create(req)).choices[0].message.content;
  let streamed = "";
  for await (const chunk of await client.chat.completions.create({ ...req, stream: true })) {
    streamed += chunk.choices[0]?.delta?.content ?? "";
  }
  assert.equal(streamed, whole);
  assert.ok(ajv.validate(schemas.person, JSON.parse(streamed)));
  console.log(`json_schema: ${n + 2} outputs of ${Object.keys(schemas).length} schemas valid`);
});

test("response_format json_object gives JSON", async () => {
  const r = await client.chat.completions.create({ messages: user("JSON"), max_tokens: 60, temperature: 1, seed: 5, response_format: { type: "json_object" } });
  JSON.parse(r.choices[0].message.content);
});

// Small tools: stories260K's context is 512 positions and its tokens are
// short, and the tools go into the prompt.
const weather = {
  type: "function",
  function: {
    name: "get_weather",
    parameters: { type: "object", properties: { city: { type: "string", maxLength: 10 }, unit: { enum: ["c", "f"] } }, required: ["city", "unit"] },
  },
};
const time = {
  type: "function",
  function: { name: "get_time", parameters: { type: "object", properties: { zone: { type: "string", pattern: "^[A-Z]{3}$" } }, required: ["zone"] } },
};
const toolSchema = Object.fromEntries([weather, time].map((t) => [t.function.name, ajv.compile(t.function.parameters)]));

function checkCall(call, names) {
  assert.equal(call.type, "function");
  assert.match(call.id, /^call_/);
  assert.ok(names.includes(call.function.name), call.function.name);
  const args = JSON.parse(call.function.arguments);
  const validate = toolSchema[call.function.name];
  assert.ok(validate(args), `${call.function.arguments}: ${ajv.errorsText(validate.errors)}`);
}

test("tools: tool_choice required and named give valid tool_calls", async () => {
  for (const seed of [1, 2]) {
    const r = await client.chat.completions.create({
      messages: user("What is the weather in Paris?"),
      tools: [weather, time],
      tool_choice: "required",
      parallel_tool_calls: false,
      max_tokens: 120,
      temperature: 1,
      seed,
    });
    const c = r.choices[0];
    assert.equal(c.finish_reason, "tool_calls");
    assert.equal(c.message.content, null);
    assert.equal(c.message.tool_calls.length, 1);
    checkCall(c.message.tool_calls[0], ["get_weather", "get_time"]);
  }
  for (const name of ["get_weather", "get_time"]) {
    const r = await client.chat.completions.create({
      messages: user("Call it."),
      tools: [weather, time],
      tool_choice: { type: "function", function: { name } },
      parallel_tool_calls: false,
      max_tokens: 120,
      temperature: 0.8,
      seed: 4,
    });
    assert.equal(r.choices[0].finish_reason, "tool_calls");
    for (const call of r.choices[0].message.tool_calls) checkCall(call, [name]);
  }
});

test("tools: streaming deltas (index, id, type, name first, then argument pieces) equal the whole answer", async () => {
  // Parallel calls (the default): the model goes on calling until max_tokens.
  const req = { messages: user("Weather?"), tools: [weather, time], tool_choice: "required", max_tokens: 100, temperature: 1, seed: 11 };
  const whole = (await client.chat.completions.create(req)).choices[0].message;
  const calls = [];
  let finish;
  for await (const chunk of await client.chat.completions.create({ ...req, stream: true })) {
    const ch = chunk.choices[0];
    if (!ch) continue;
    if (ch.finish_reason) finish = ch.finish_reason;
    for (const d of ch.delta.tool_calls ?? []) {
      assert.equal(typeof d.index, "number");
      if (d.index === calls.length) {
        // The first delta of a call: id, type and name, no arguments yet.
        assert.match(d.id, /^call_/);
        assert.equal(d.type, "function");
        assert.ok(d.function.name);
        assert.equal(d.function.arguments, "");
        calls.push({ id: d.id, type: d.type, function: { name: d.function.name, arguments: "" } });
      } else {
        assert.equal(d.index, calls.length - 1);
        assert.equal(d.id, undefined);
        assert.equal(d.function.name, undefined);
        calls[d.index].function.arguments += d.function.arguments;
      }
    }
  }
  assert.equal(finish, "tool_calls");
  assert.deepEqual(calls.map((c) => c.function), whole.tool_calls.map((c) => c.function));
  console.log(`streamed ${calls.length} parallel calls: ${calls.map((c) => c.function.name).join(", ")}`);
  calls.forEach((c) => checkCall(c, ["get_weather", "get_time"]));

  // The client's own accumulator reads the same stream into the same calls.
  const final = await client.chat.completions.stream(req).finalChatCompletion();
  assert.deepEqual(final.choices[0].message.tool_calls.map((c) => c.function), whole.tool_calls.map((c) => c.function));
  assert.equal(final.choices[0].finish_reason, "tool_calls");
});

test("tools: auto gives text or valid calls; none gives text", async () => {
  let texts = 0;
  for (const seed of [1, 2, 3]) {
    const r = await client.chat.completions.create({ messages: user("Hello!"), tools: [weather], parallel_tool_calls: false, max_tokens: 30, temperature: 1, seed });
    const c = r.choices[0];
    if (c.message.tool_calls?.length) {
      assert.equal(c.finish_reason, "tool_calls");
      c.message.tool_calls.forEach((call) => checkCall(call, ["get_weather"]));
    } else {
      assert.ok(!c.message.content.startsWith("<tool_call>"));
      texts++;
    }
  }
  const r = await client.chat.completions.create({ messages: user("Hello!"), tools: [weather], tool_choice: "none", max_tokens: 20, temperature: 0 });
  assert.equal(r.choices[0].message.tool_calls, undefined);
  assert.equal(typeof r.choices[0].message.content, "string");
  console.log(`tool_choice auto: ${texts} of 3 replies were text`);
});

test("tools: a call and its result go back into the conversation", async () => {
  const first = await client.chat.completions.create({ messages: user("Weather in Oslo?"), tools: [weather], tool_choice: "required", parallel_tool_calls: false, max_tokens: 100, temperature: 0 });
  const msg = first.choices[0].message;
  const call = msg.tool_calls[0];
  const messages = [
    ...user("Weather in Oslo?"),
    msg, // as the client got it: content null, tool_calls
    { role: "tool", tool_call_id: call.id, content: '{"temperature": 3}' },
  ];
  const second = await client.chat.completions.create({ messages, max_tokens: 16, temperature: 0 });
  assert.equal(typeof second.choices[0].message.content, "string");
  // The call and the result are in the prompt: it is longer than the
  // conversation without them.
  const bare = await client.chat.completions.create({ messages: user("Weather in Oslo?"), max_tokens: 1, temperature: 0 });
  assert.ok(second.usage.prompt_tokens > bare.usage.prompt_tokens + 20, `${second.usage.prompt_tokens} vs ${bare.usage.prompt_tokens}`);
  await badRequest(
    () => client.chat.completions.create({ messages: [...user("x"), msg, { role: "tool", content: "3" }], max_tokens: 4 }),
    "messages[2].tool_call_id",
    /required/,
  );
});

test("embeddings: float and base64, strings and token arrays, unit length", async () => {
  const health = await (await fetch(`${base}/health`)).json();
  const dim = health.model.dim;
  const texts = ["Once upon a time", "The little dog ran", "Once upon a time"];
  const f = await client.embeddings.create({ model: health.model.id, input: texts, encoding_format: "float" });
  assert.equal(f.object, "list");
  assert.equal(f.data.length, 3);
  f.data.forEach((d, i) => {
    assert.equal(d.index, i);
    assert.equal(d.object, "embedding");
    assert.equal(d.embedding.length, dim);
    const norm = Math.hypot(...d.embedding);
    assert.ok(Math.abs(norm - 1) < 1e-5, `norm ${norm}`);
  });
  assert.deepEqual(f.data[0].embedding, f.data[2].embedding);
  assert.notDeepEqual(f.data[0].embedding, f.data[1].embedding);
  assert.ok(f.usage.prompt_tokens > 0 && f.usage.total_tokens === f.usage.prompt_tokens);
  // The client asks for base64 by default and decodes it: the same floats.
  const b = await client.embeddings.create({ model: health.model.id, input: texts });
  b.data.forEach((d, i) => assert.deepEqual(Array.from(d.embedding), f.data[i].embedding.map(Math.fround)));
  // Token ids (BOS first, as text is tokenized) give the same vector as the text.
  const one = await client.embeddings.create({ input: "Once upon a time", encoding_format: "float" });
  assert.deepEqual(one.data[0].embedding, f.data[0].embedding);
  const ids = await client.embeddings.create({ input: [[1, 400, 401]], encoding_format: "float" });
  assert.equal(ids.data[0].embedding.length, dim);
  assert.equal(ids.usage.prompt_tokens, 3);
  await badRequest(() => client.embeddings.create({ input: "", encoding_format: "float" }), "input", /empty/);
  await badRequest(() => client.embeddings.create({ input: [[1, 999999]], encoding_format: "float" }), "input[0]", /outside the vocabulary/);
  await badRequest(() => client.embeddings.create({ input: "a", encoding_format: "int8" }), "encoding_format", /not supported/);
  await badRequest(() => client.embeddings.create({ input: "a", dimensions: 3 }), "dimensions", /must be/);
});

test("logprobs: greedy tokens are the most likely, alternatives sorted, streamed equal to whole", async () => {
  const req = { messages: user("Tell me a story"), max_tokens: 24, temperature: 0, logprobs: true, top_logprobs: 5 };
  const r = await client.chat.completions.create(req);
  const c = r.choices[0];
  const lp = c.logprobs.content;
  assert.equal(lp.length, r.usage.completion_tokens);
  assert.equal(lp.map((t) => t.token).join(""), c.message.content);
  for (const t of lp) {
    assert.ok(t.logprob <= 0);
    assert.deepEqual(t.bytes, Array.from(new TextEncoder().encode(t.token)));
    assert.equal(t.top_logprobs.length, 5);
    for (let i = 1; i < 5; i++) assert.ok(t.top_logprobs[i - 1].logprob >= t.top_logprobs[i].logprob);
    // Greedy: the chosen token is the most likely one.
    assert.equal(t.top_logprobs[0].token, t.token);
    assert.equal(t.top_logprobs[0].logprob, t.logprob);
    const mass = t.top_logprobs.reduce((s, x) => s + Math.exp(x.logprob), 0);
    assert.ok(mass <= 1 + 1e-6, `mass ${mass}`);
  }
  const streamed = [];
  for await (const chunk of await client.chat.completions.create({ ...req, stream: true })) {
    streamed.push(...(chunk.choices[0]?.logprobs?.content ?? []));
  }
  assert.deepEqual(streamed, lp);
  // Without top_logprobs: the tokens' own, no alternatives.
  const plain = await client.chat.completions.create({ ...req, top_logprobs: undefined });
  plain.choices[0].logprobs.content.forEach((t, i) => {
    assert.deepEqual(t.top_logprobs, []);
    assert.equal(t.logprob, lp[i].logprob);
  });
  const none = await client.chat.completions.create({ ...req, logprobs: false, top_logprobs: undefined });
  assert.equal(none.choices[0].logprobs, null);
  await badRequest(() => client.chat.completions.create({ ...req, top_logprobs: 21 }), "top_logprobs", /between 0 and 20/);
  await badRequest(() => client.chat.completions.create({ ...req, logprobs: false, top_logprobs: 2 }), "top_logprobs", /logprobs/);
});

test("completions' legacy logprobs (an integer): tokens, token_logprobs, top_logprobs, text_offset, streamed equal to whole", async () => {
  const prompt = "Once upon a time";
  const req = { prompt, max_tokens: 20, temperature: 1, seed: 3, logprobs: 3 };
  const r = await client.completions.create(req);
  const c = r.choices[0];
  const lp = c.logprobs;
  assert.deepEqual(Object.keys(lp).sort(), ["text_offset", "token_logprobs", "tokens", "top_logprobs"]);
  assert.equal(lp.tokens.length, r.usage.completion_tokens);
  assert.equal(lp.tokens.join(""), c.text);
  let at = [...prompt].length; // code points from the start of the prompt, as OpenAI's
  lp.tokens.forEach((tok, i) => {
    assert.equal(lp.text_offset[i], at, `token ${i}`);
    at += [...tok].length;
    const alts = Object.values(lp.top_logprobs[i]);
    assert.ok(alts.length >= 1 && alts.length <= 3, JSON.stringify(lp.top_logprobs[i]));
    assert.ok(lp.token_logprobs[i] <= 0 && lp.token_logprobs[i] <= Math.max(...alts) + 1e-6);
  });
  const chunks = [];
  for await (const chunk of await client.completions.create({ ...req, stream: true })) if (chunk.choices[0]?.logprobs) chunks.push(chunk.choices[0].logprobs);
  for (const k of ["tokens", "token_logprobs", "top_logprobs", "text_offset"]) assert.deepEqual(chunks.flatMap((l) => l[k]), lp[k], k);
  // logprobs 0: the tokens' own, no alternatives; none asked: null.
  const zero = await client.completions.create({ ...req, logprobs: 0 });
  assert.ok(zero.choices[0].logprobs.top_logprobs.every((t) => Object.keys(t).length === 0));
  assert.equal((await client.completions.create({ ...req, logprobs: undefined })).choices[0].logprobs, null);
  await badRequest(() => client.completions.create({ ...req, logprobs: 6 }), "logprobs", /between 0 and 5/);
});

test("seed: the same seed gives the same output, other seeds other outputs", async () => {
  const ask = async (seed) =>
    (await client.chat.completions.create({ messages: user("Tell me a story"), max_tokens: 32, temperature: 1, seed })).choices[0].message.content;
  const a = await ask(42);
  assert.equal(await ask(42), a);
  assert.equal(await ask(42), a);
  const others = new Set([await ask(1), await ask(2), await ask(3)]);
  others.delete(a);
  assert.ok(others.size >= 2, `seeds 1-3 gave ${others.size} texts different from seed 42's`);
});

test("bad schemas, grammars and tools are 400s naming the problem", async () => {
  const chat = (extra) => client.chat.completions.create({ messages: user("x"), max_tokens: 8, ...extra });
  await badRequest(
    () => chat({ response_format: { type: "json_schema", json_schema: { name: "s", schema: { type: "object", if: { type: "object" } } } } }),
    "response_format.json_schema.schema",
    /keyword "if" is not supported/,
  );
  await badRequest(
    () => chat({ response_format: { type: "json_schema", json_schema: { name: "s", schema: { $ref: "#/$defs/nothing" } } } }),
    "response_format.json_schema.schema",
    /nothing/,
  );
  await badRequest(() => chat({ response_format: { type: "json_schema", json_schema: { name: "bad name", schema: {} } } }), "response_format.json_schema.name", /only a-z/);
  await badRequest(() => chat({ grammar: "root ::= undefined-rule" }), "grammar", /undefined-rule/);
  const bad = (parameters) => ({ type: "function", function: { name: "f", parameters } });
  await badRequest(() => chat({ tools: [bad({ type: "string" })] }), "tools[0].function.parameters", /must be "object"/);
  await badRequest(() => chat({ tools: [weather, bad({ type: "object", properties: { a: { type: "string", contentEncoding: "base64" } } })] }), "tools[1].function.parameters", /contentEncoding/);
  await badRequest(() => chat({ tools: [weather], tool_choice: { type: "function", function: { name: "nope" } } }), "tool_choice.function.name", /not among the tools/);
  await badRequest(() => chat({ tool_choice: "required" }), "tool_choice", /needs tools/);
  await badRequest(() => chat({ tools: [weather, weather] }), "tools[1].function.name", /two tools/);
  await badRequest(() => chat({ tools: [weather], response_format: { type: "json_object" } }), "response_format", /tool_choice "none"/);
  // A schema whose shortest instance does not fit in max_tokens.
  await badRequest(
    () => chat({ max_tokens: 3, response_format: { type: "json_schema", json_schema: { name: "s", schema: schemas.person } } }),
    "max_tokens",
    /cannot be completed/,
  );
});
