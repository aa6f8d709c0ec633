// openai.js — the OpenAI-shaped API of a loaded model, built on PicoLM's
// public run() (web/picolm.js):
//
//   const r = await m.chat.completions.create({ messages: [{ role: "user", content: "Hi" }], max_tokens: 64 });
//   r.choices[0].message.content
//   for await (const chunk of await m.chat.completions.create({ messages, stream: true })) out += chunk.choices[0]?.delta?.content ?? "";
//   const c = await m.completions.create({ prompt: "Once upon a time", max_tokens: 32 });
//
// The request fields are OpenAI's, checked as the Cloudflare Worker checks
// them (wasm/cloudflare/internal/server/fields.go): a field this API does not
// implement (penalties, logprobs, tools, ...) or does not know is refused with
// a BadRequestError whose param names it, unless its value asks for nothing
// ("logprobs": false, "n": 1, "tools": [], null for any field). Extensions:
// top_k and min_p (llama.cpp's), response_format {type: "grammar", grammar}
// (GBNF), and signal (an AbortSignal; it may also be given as the second
// argument's signal, as in the OpenAI SDK). Aborting rejects the promise, or
// ends the stream's iteration, with an AbortError once the engine has
// stopped, so the model is ready for the next request.
//
// One model runs one generation at a time; requests made meanwhile wait in
// the engine's queue. Each one reuses the KV cache of the one before as far
// as their prompts' tokens agree: a chat's next turn, sent with the earlier
// turns as they were returned, prefills only its new tokens
// (usage.prompt_tokens_details.cached_tokens says how many were reused).

import { AbortError, BadRequestError } from "./errors.js";

const FINISH = { eos: "stop", json: "stop", grammar: "stop", stop_sequence: "stop", max_tokens: "length", context: "length", stopped: "abort" };
const MAX_STOPS = 4; // OpenAI's limit

function bad(param, message) { return new BadRequestError(message, param); }

function kind(v) {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  return typeof v === "object" ? "an object" : `a ${typeof v}`;
}

function isObject(v) { return v !== null && typeof v === "object" && !Array.isArray(v); }

// The checks of fields that are accepted but not implemented: each refuses
// any value that asks for something.
const harmless = {
  zero: (why) => (v, p) => { if (v !== 0) throw bad(p, `${p} must be 0 or null: ${why}`); },
  falseOnly: (why) => (v, p) => { if (v !== false) throw bad(p, `${p} must be false or null: ${why}`); },
  oneOnly: (why) => (v, p) => { if (v !== 1) throw bad(p, `${p} must be 1 or null: ${why}`); },
  emptyArray: (why) => (v, p) => { if (!Array.isArray(v) || v.length) throw bad(p, `${p} must be an empty array or null: ${why}`); },
  emptyObject: (why) => (v, p) => { if (!isObject(v) || Object.keys(v).length) throw bad(p, `${p} must be an empty object or null: ${why}`); },
  emptyString: (why) => (v, p) => { if (v !== "") throw bad(p, `${p} must be an empty string or null: ${why}`); },
  string: () => (v, p) => { if (typeof v !== "string") throw bad(p, `wrong type for ${p}: got ${kind(v)}, want a string`); },
  bool: () => (v, p) => { if (typeof v !== "boolean") throw bad(p, `wrong type for ${p}: got ${kind(v)}, want a boolean`); },
  object: () => (v, p) => { if (!isObject(v)) throw bad(p, `wrong type for ${p}: got ${kind(v)}, want an object`); },
  toolChoice: () => (v, p) => { if (v !== "none" && v !== "auto") throw bad(p, `${p} must be "none", "auto" or null: this API does no function calling`); },
};
const NO_TOOLS = "this API does no function calling";
const NO_LOGPROBS = "this API returns no log probabilities";

// FIELDS: per field, the endpoints that take it ("chat", "completions") and,
// for one that is not implemented, the check of its harmless values.
const FIELDS = {
  model: ["chat completions", harmless.string()], // any name: the loaded model answers
  messages: ["chat"],
  prompt: ["completions"],
  max_tokens: ["chat completions"],
  max_completion_tokens: ["chat"],
  temperature: ["chat completions"],
  top_p: ["chat completions"],
  top_k: ["chat completions"],
  min_p: ["chat completions"],
  seed: ["chat completions"],
  stop: ["chat completions"],
  stream: ["chat completions"],
  stream_options: ["chat completions"],
  response_format: ["chat completions"],
  n: ["chat completions", harmless.oneOnly("one choice is generated per request")],
  signal: ["chat completions"],
  frequency_penalty: ["chat completions", harmless.zero("the sampler has no penalties")],
  presence_penalty: ["chat completions", harmless.zero("the sampler has no penalties")],
  logit_bias: ["chat completions", harmless.emptyObject("the sampler takes no logit biases")],
  user: ["chat completions", harmless.string()],
  logprobs: ["chat completions"], // false (chat) or 0 (completions): checked by endpoint
  top_logprobs: ["chat", harmless.zero(NO_LOGPROBS)],
  tools: ["chat", harmless.emptyArray(NO_TOOLS)],
  functions: ["chat", harmless.emptyArray(NO_TOOLS)],
  tool_choice: ["chat", harmless.toolChoice()],
  function_call: ["chat", harmless.toolChoice()],
  parallel_tool_calls: ["chat", harmless.bool()],
  store: ["chat", harmless.falseOnly("completions are not stored")],
  metadata: ["chat", harmless.object()],
  best_of: ["completions", harmless.oneOnly("one candidate is generated per prompt")],
  echo: ["completions", harmless.falseOnly("the prompt is not echoed")],
  suffix: ["completions", harmless.emptyString("there is no insertion mode")],
};

function checkFields(body, endpoint) {
  if (!isObject(body)) throw bad(null, `the request must be an object, got ${kind(body)}`);
  for (const [k, v] of Object.entries(body)) {
    const spec = FIELDS[k];
    if (!spec || !spec[0].split(" ").includes(endpoint)) throw bad(k, `unknown field ${k} for ${endpoint === "chat" ? "chat.completions" : "completions"}.create`);
    if (v === null || v === undefined) continue;
    if (spec[1]) spec[1](v, k);
  }
  const lp = body.logprobs;
  if (lp !== null && lp !== undefined && lp !== false && lp !== 0) throw bad("logprobs", `logprobs must be ${endpoint === "chat" ? "false" : "0"} or null: ${NO_LOGPROBS}`);
}

function number(body, k, lo, hi, def) {
  const v = body[k];
  if (v === null || v === undefined) return def;
  if (typeof v !== "number" || !Number.isFinite(v)) throw bad(k, `wrong type for ${k}: got ${kind(v)}, want a number`);
  if (v < lo || v > hi) throw bad(k, `${k} must be from ${lo} to ${hi}, got ${v}`);
  return v;
}

function integer(body, k, lo, hi, def) {
  const v = body[k];
  if (v === null || v === undefined) return def;
  if (!Number.isInteger(v)) throw bad(k, `wrong type for ${k}: got ${typeof v === "number" ? v : kind(v)}, want an integer`);
  if (v < lo || v > hi) throw bad(k, `${k} must be from ${lo} to ${hi}, got ${v}`);
  return v;
}

function randomSeed() {
  const a = new Uint32Array(1);
  crypto.getRandomValues(a);
  return a[0];
}

// options turns the shared fields into run() options.
function options(body, model, endpoint) {
  const context = model.info ? model.info.context : Infinity;
  const o = {
    temperature: number(body, "temperature", 0, 2, 1),
    topP: number(body, "top_p", 0, 1, 1),
    topK: integer(body, "top_k", 0, Number.MAX_SAFE_INTEGER, 0),
    minP: number(body, "min_p", 0, 1, 0),
    seed: integer(body, "seed", 0, Number.MAX_SAFE_INTEGER, undefined) ?? randomSeed(),
    maxTokens: 0, // until the model ends or the context is full
  };
  for (const k of endpoint === "chat" ? ["max_completion_tokens", "max_tokens"] : ["max_tokens"]) {
    const n = integer(body, k, 1, Number.MAX_SAFE_INTEGER, undefined);
    if (n !== undefined) { o.maxTokens = Math.min(n, context); break; }
  }
  const stop = body.stop;
  if (stop !== null && stop !== undefined) {
    const list = typeof stop === "string" ? [stop] : stop;
    if (!Array.isArray(list) || list.some((s) => typeof s !== "string")) throw bad("stop", `wrong type for stop: got ${kind(stop)}, want a string or an array of strings`);
    if (list.length > MAX_STOPS) throw bad("stop", `at most ${MAX_STOPS} stop sequences are allowed (got ${list.length})`);
    if (list.some((s) => s === "")) throw bad("stop", "stop sequences must not be empty");
    if (list.length) o.stop = list;
  }
  const rf = body.response_format;
  if (rf !== null && rf !== undefined) {
    if (!isObject(rf)) throw bad("response_format", `wrong type for response_format: got ${kind(rf)}, want an object`);
    switch (rf.type) {
      case "text": break;
      case "json_object": o.json = true; break;
      case "json_schema": {
        const js = rf.json_schema;
        if (!isObject(js)) throw bad("response_format.json_schema", "response_format json_schema needs a json_schema object {name, schema}");
        if (typeof js.name !== "string" || !/^[A-Za-z0-9_-]{1,64}$/.test(js.name)) throw bad("response_format.json_schema.name", "json_schema.name must be a string of 1 to 64 letters, digits, _ or -");
        if (js.schema === undefined || js.schema === null) o.json = true; // no schema: any JSON
        else if (isObject(js.schema) || typeof js.schema === "boolean") o.jsonSchema = js.schema;
        else throw bad("response_format.json_schema.schema", `wrong type for json_schema.schema: got ${kind(js.schema)}, want an object`);
        break;
      }
      case "grammar":
        if (typeof rf.grammar !== "string" || !rf.grammar) throw bad("response_format.grammar", "response_format grammar needs grammar: GBNF source text");
        o.grammar = rf.grammar;
        break;
      default:
        throw bad("response_format.type", `response_format.type must be "text", "json_object", "json_schema" or "grammar", got ${JSON.stringify(rf.type)}`);
    }
  }
  const so = body.stream_options;
  if (so !== null && so !== undefined) {
    if (!isObject(so)) throw bad("stream_options", `wrong type for stream_options: got ${kind(so)}, want an object`);
    for (const k of Object.keys(so)) if (k !== "include_usage") throw bad(`stream_options.${k}`, `unknown field stream_options.${k}`);
    if (so.include_usage !== undefined && so.include_usage !== null && typeof so.include_usage !== "boolean") throw bad("stream_options.include_usage", "stream_options.include_usage must be a boolean");
    if (body.stream !== true) throw bad("stream_options", "stream_options is only allowed with stream: true");
  }
  if (body.stream !== null && body.stream !== undefined && typeof body.stream !== "boolean") throw bad("stream", `wrong type for stream: got ${kind(body.stream)}, want a boolean`);
  return o;
}

const ROLES = { system: "system", developer: "system", user: "user", assistant: "assistant" };

function messages(body) {
  const ms = body.messages;
  if (!Array.isArray(ms) || ms.length === 0) throw bad("messages", "messages must be a non-empty array of {role, content}");
  return ms.map((m, i) => {
    const p = `messages[${i}]`;
    if (!isObject(m)) throw bad(p, `${p} must be an object {role, content}`);
    for (const [k, v] of Object.entries(m)) {
      if (k === "role" || k === "content" || k === "name") continue;
      // A message as a completion returned it ({role, content, refusal: null}) is taken back as it is.
      if (v === null || v === undefined || (Array.isArray(v) && !v.length && k !== "content")) continue;
      if (k === "tool_calls" || k === "function_call" || k === "tool_call_id") throw bad(`${p}.${k}`, `${p}.${k}: ${NO_TOOLS}`);
      throw bad(`${p}.${k}`, `unknown field ${p}.${k}`);
    }
    if (m.name !== undefined && m.name !== null && typeof m.name !== "string") throw bad(`${p}.name`, `${p}.name must be a string`);
    const role = ROLES[m.role];
    if (!role) throw bad(`${p}.role`, `${p}.role must be "system", "developer", "user" or "assistant", got ${JSON.stringify(m.role)}${m.role === "tool" || m.role === "function" ? ` (${NO_TOOLS})` : ""}`);
    let content = m.content;
    if (Array.isArray(content)) {
      content = content.map((part, j) => {
        if (!isObject(part) || part.type !== "text" || typeof part.text !== "string") throw bad(`${p}.content[${j}]`, `${p}.content[${j}] must be a text part {type: "text", text}: the model reads text only`);
        return part.text;
      }).join("");
    }
    if (typeof content !== "string") throw bad(`${p}.content`, `${p}.content must be a string or an array of text parts, got ${kind(content)}`);
    return { role, content };
  });
}

function prompts(body) {
  const p = body.prompt;
  if (typeof p === "string") return [p];
  if (Array.isArray(p) && p.length && p.every((s) => typeof s === "string")) return p;
  if (Array.isArray(p) && p.length && p.every((s) => typeof s === "number" || Array.isArray(s))) throw bad("prompt", "token-id prompts are not supported: give the prompt as text");
  throw bad("prompt", `prompt must be a string or a non-empty array of strings, got ${kind(p)}`);
}

function makeId(prefix) {
  const a = new Uint8Array(12);
  crypto.getRandomValues(a);
  return prefix + Array.from(a, (b) => b.toString(16).padStart(2, "0")).join("");
}

function usage(stats) {
  const all = stats.reduce((u, s) => {
    u.prompt_tokens += s.promptTokens;
    u.completion_tokens += s.generated;
    u.prompt_tokens_details.cached_tokens += s.cachedTokens;
    u.extra.prefill_ms += s.prefillMs;
    u.extra.decode_ms += s.decodeMs;
    return u;
  }, { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, prompt_tokens_details: { cached_tokens: 0 }, extra: { prefill_ms: 0, decode_ms: 0 } });
  all.total_tokens = all.prompt_tokens + all.completion_tokens;
  const prefilled = all.prompt_tokens - all.prompt_tokens_details.cached_tokens;
  all.extra.prefill_tokens_per_s = all.extra.prefill_ms > 0 ? prefilled / (all.extra.prefill_ms / 1000) : 0;
  all.extra.decode_tokens_per_s = all.extra.decode_ms > 0 ? all.completion_tokens / (all.extra.decode_ms / 1000) : 0;
  return all;
}

// signals links the request's AbortSignals (body.signal, options.signal) to
// one controller whose signal stops the generation: {ctl, aborted(), done()}.
function signals(body, opts) {
  const list = [body.signal, opts && opts.signal].filter((s) => s !== null && s !== undefined);
  for (const s of list) {
    if (typeof s.aborted !== "boolean" || typeof s.addEventListener !== "function") throw bad("signal", "signal must be an AbortSignal");
  }
  const ctl = new AbortController();
  const abort = () => ctl.abort();
  for (const s of list) s.addEventListener("abort", abort, { once: true });
  return {
    ctl,
    aborted: () => list.some((s) => s.aborted),
    done: () => { for (const s of list) s.removeEventListener("abort", abort); },
  };
}

// runAll runs one request: its inputs (a prompt or a conversation each) one
// after another, each as a choice. It delivers events to onEvent:
// {type: "text", index, text}, {type: "end", index, finish, stats}, then
// resolves with the stats of every input. Aborting rejects with AbortError.
async function runAll(model, inputs, o, sig, onEvent) {
  const all = [];
  for (const [index, input] of inputs.entries()) {
    if (sig.aborted()) throw new AbortError();
    if (sig.ctl.signal.aborted) break; // the stream's consumer left the loop
    const stats = await model.run(input, { ...o, signal: sig.ctl.signal, onToken: (t) => { if (t.text) onEvent({ type: "text", index, text: t.text }); } });
    if (stats.stop === "stopped" && sig.aborted()) throw new AbortError();
    all.push(stats);
    onEvent({ type: "end", index, finish: FINISH[stats.stop] || "stop", stats });
  }
  return all;
}

// complete runs a request to its end: {texts, finishes, stats}.
async function complete(model, inputs, o, sig) {
  const texts = inputs.map(() => ""), finishes = [];
  try {
    const stats = await runAll(model, inputs, o, sig, (e) => {
      if (e.type === "text") texts[e.index] += e.text;
      else finishes[e.index] = e.finish;
    });
    return { texts, finishes, stats };
  } finally {
    sig.done();
  }
}

// stream runs a request as an async iterable of the chunks shape(event)
// returns (an array). The promise resolves once the engine has answered (its
// first token, or the end), so a request the engine refuses rejects it.
async function stream(model, inputs, o, sig, shape, usageChunk) {
  const queue = [];
  let wake = null, finished = false, failure = null, started = false, startedResolve;
  const first = new Promise((r) => (startedResolve = r));
  const poke = () => { if (wake) { const w = wake; wake = null; w(); } };
  const push = (cs) => { for (const c of cs) queue.push(c); };
  const begin = () => { if (!started) { started = true; startedResolve(); } };
  const done = runAll(model, inputs, o, sig, (e) => { begin(); push(shape(e)); poke(); })
    .then((stats) => { if (usageChunk) push([usageChunk(stats)]); finished = true; }, (e) => { failure = e; })
    .finally(() => { sig.done(); begin(); poke(); });
  await first;
  if (failure && !queue.length) throw failure;
  const it = {
    controller: sig.ctl,
    [Symbol.asyncIterator]() { return this; },
    async next() {
      for (;;) {
        if (queue.length) return { value: queue.shift(), done: false };
        if (failure) { const f = failure; failure = null; finished = true; throw f; }
        if (finished) return { value: undefined, done: true };
        await new Promise((r) => (wake = r));
      }
    },
    async return() {
      sig.ctl.abort();
      await done;
      queue.length = 0;
      finished = true;
      failure = null;
      return { value: undefined, done: true };
    },
  };
  return it;
}

/** model.chat.completions: OpenAI's chat completions. */
export class ChatCompletions {
  constructor(model) { this._model = model; }

  /**
   * A chat completion: body is OpenAI's request (see the top of this file).
   * Resolves with a ChatCompletion, or with stream: true with an async
   * iterable of ChatCompletionChunks.
   */
  async create(body, opts = undefined) {
    checkFields(body, "chat");
    const msgs = messages(body);
    const o = options(body, this._model, "chat");
    const sig = signals(body, opts);
    if (sig.aborted()) { sig.done(); throw new AbortError(); }
    const id = makeId("chatcmpl-"), created = Math.floor(Date.now() / 1000), model = this._model.info ? this._model.info.name : "";
    const head = { id, object: "chat.completion.chunk", created, model, system_fingerprint: null };
    if (body.stream) {
      const withUsage = !!(body.stream_options && body.stream_options.include_usage);
      const extra = withUsage ? { usage: null } : {};
      let opened = false;
      const chunk = (delta, finish) => ({ ...head, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...extra });
      const shape = (e) => {
        const out = [];
        if (!opened) { opened = true; out.push(chunk({ role: "assistant", content: "" }, null)); }
        out.push(e.type === "text" ? chunk({ content: e.text }, null) : chunk({}, e.finish));
        return out;
      };
      return stream(this._model, [msgs], o, sig, shape, withUsage ? (stats) => ({ ...head, choices: [], usage: usage(stats) }) : null);
    }
    const r = await complete(this._model, [msgs], o, sig);
    return {
      id, object: "chat.completion", created, model, system_fingerprint: null,
      choices: [{ index: 0, message: { role: "assistant", content: r.texts[0], refusal: null }, logprobs: null, finish_reason: r.finishes[0] }],
      usage: usage(r.stats),
    };
  }
}

/** model.chat: {completions}. */
export class Chat {
  constructor(model) { this.completions = new ChatCompletions(model); }
}

/** model.completions: OpenAI's (legacy) text completions; a prompt array gives one choice per prompt. */
export class Completions {
  constructor(model) { this._model = model; }

  /** A text completion: resolves with a Completion, or with stream: true an async iterable of them (chunks). */
  async create(body, opts = undefined) {
    checkFields(body, "completions");
    const inputs = prompts(body);
    const o = options(body, this._model, "completions");
    const sig = signals(body, opts);
    if (sig.aborted()) { sig.done(); throw new AbortError(); }
    const id = makeId("cmpl-"), created = Math.floor(Date.now() / 1000), model = this._model.info ? this._model.info.name : "";
    const head = { id, object: "text_completion", created, model, system_fingerprint: null };
    if (body.stream) {
      const withUsage = !!(body.stream_options && body.stream_options.include_usage);
      const extra = withUsage ? { usage: null } : {};
      const shape = (e) => [{ ...head, choices: [{ index: e.index, text: e.type === "text" ? e.text : "", logprobs: null, finish_reason: e.type === "end" ? e.finish : null }], ...extra }];
      return stream(this._model, inputs, o, sig, shape, withUsage ? (stats) => ({ ...head, choices: [], usage: usage(stats) }) : null);
    }
    const r = await complete(this._model, inputs, o, sig);
    return {
      ...head,
      choices: r.texts.map((text, index) => ({ index, text, logprobs: null, finish_reason: r.finishes[index] })),
      usage: usage(r.stats),
    };
  }
}
