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
// implement (penalties, n, echo, ...) or does not know is refused with a
// BadRequestError whose param names it, unless its value asks for nothing
// ("n": 1, "echo": false, null for any field). tools, tool_choice,
// parallel_tool_calls, logprobs and top_logprobs behave as the Worker's (the
// engine Worker runs the same Go code: chat.ToolGrammar, chat.ToolStream,
// engine.Logprobs); completions' logprobs (an integer, 0 to 5) gives the
// legacy shape {tokens, token_logprobs, top_logprobs, text_offset}.
// embeddings.create is OpenAI's embeddings endpoint. Extensions:
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

const FINISH = { eos: "stop", json: "stop", grammar: "stop", stop_sequence: "stop", max_tokens: "length", context: "length", stopped: "abort", tool_calls: "tool_calls" };
const MAX_TOP_LOGPROBS = 20; // OpenAI's limit (engine.MaxTopLogprobs)
const MAX_COMPLETION_LOGPROBS = 5; // the legacy completions' limit
const MAX_TOOLS = 128;
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
// notSupported is the Worker's refusal of a value (fields.go's notSupported).
function notSupported(p, why, instead) { return bad(p, `${p} is not supported: ${why} (send ${instead} or leave it out)`); }

const harmless = {
  zero: (why) => (v, p) => {
    if (typeof v !== "number") throw bad(p, `wrong type for ${p}: got ${kind(v)}, want a number`);
    if (v < -2 || v > 2) throw bad(p, `${p} must be between -2 and 2`);
    if (v !== 0) throw notSupported(p, why, "0");
  },
  falseOnly: (why) => (v, p) => {
    if (typeof v !== "boolean") throw bad(p, `wrong type for ${p}: got ${kind(v)}, want a boolean`);
    if (v !== false) throw notSupported(p, why, "false");
  },
  oneOnly: (why) => (v, p) => {
    if (typeof v !== "number") throw bad(p, `wrong type for ${p}: got ${kind(v)}, want an integer`);
    if (v !== 1) throw notSupported(p, why, "1");
  },
  emptyArray: (why) => (v, p) => {
    if (!Array.isArray(v)) throw bad(p, `wrong type for ${p}: got ${kind(v)}, want an array`);
    if (v.length) throw notSupported(p, why, "[]");
  },
  emptyObject: (why) => (v, p) => {
    if (!isObject(v)) throw bad(p, `wrong type for ${p}: got ${kind(v)}, want an object`);
    if (Object.keys(v).length) throw notSupported(p, why, "{}");
  },
  emptyString: (why) => (v, p) => {
    if (typeof v !== "string") throw bad(p, `wrong type for ${p}: got ${kind(v)}, want a string`);
    if (v !== "") throw notSupported(p, why, '""');
  },
  string: () => (v, p) => { if (typeof v !== "string") throw bad(p, `wrong type for ${p}: got ${kind(v)}, want a string`); },
  bool: () => (v, p) => { if (typeof v !== "boolean") throw bad(p, `wrong type for ${p}: got ${kind(v)}, want a boolean`); },
  object: () => (v, p) => { if (!isObject(v)) throw bad(p, `wrong type for ${p}: got ${kind(v)}, want an object`); },
  functionCall: () => (v, p) => { if (v !== "none" && v !== "auto") throw notSupported(p, NO_FUNCTIONS, '"none"'); },
};
const NO_FUNCTIONS = "the deprecated functions API is not implemented: use tools";

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
  n: ["chat completions"], // 1: options() checks it
  signal: ["chat completions"],
  frequency_penalty: ["chat completions", harmless.zero("the sampler has no penalties")],
  presence_penalty: ["chat completions", harmless.zero("the sampler has no penalties")],
  logit_bias: ["chat completions", harmless.emptyObject("the sampler takes no logit biases")],
  user: ["chat completions", harmless.string()],
  logprobs: ["chat completions"], // a boolean (chat) or an integer (completions): read by logprobsOf
  top_logprobs: ["chat"],
  tools: ["chat"],
  tool_choice: ["chat"],
  parallel_tool_calls: ["chat", harmless.bool()],
  functions: ["chat", harmless.emptyArray(NO_FUNCTIONS)],
  function_call: ["chat", harmless.functionCall()],
  store: ["chat", harmless.falseOnly("this server stores no completions")],
  metadata: ["chat", harmless.object()],
  best_of: ["completions", harmless.oneOnly("one candidate is generated per request")],
  echo: ["completions", harmless.falseOnly("the prompt is not echoed")],
  suffix: ["completions", harmless.emptyString("there is no insertion mode")],
};

// unknownField is the Worker's refusal of a field it does not know.
function unknownField(p) { return bad(p, `unknown field ${p}: this API does not implement it`); }

// checkFields refuses a field the endpoint does not take, with the Worker's
// messages (fields.go's checkFields), and a value of a field that is not
// implemented that is not harmless.
function checkFields(body, endpoint) {
  if (!isObject(body)) throw bad(null, `the request must be an object, got ${kind(body)}`);
  for (const k of Object.keys(body).sort()) {
    const v = body[k];
    const spec = FIELDS[k];
    if (!spec) throw unknownField(k);
    if (v === null || v === undefined) continue; // null is not given, on any endpoint
    if (!spec[0].split(" ").includes(endpoint)) {
      if (endpoint === "chat") {
        if (k === "prompt") throw bad(k, "chat completions take messages, not prompt");
        throw bad(k, `${k} is a completions field: chat completions do not take it`);
      }
      if (k === "messages") throw bad(k, "completions take prompt, not messages (use chat completions)");
      if (k === "max_completion_tokens") throw bad(k, "max_completion_tokens is a chat completions field: completions take max_tokens");
      throw bad(k, `${k} is a chat completions field: completions do not take it`);
    }
    if (spec[1]) spec[1](v, k);
  }
}

// nameError is why name is not one of OpenAI's names of schemas and
// functions (1 to 64 of a-z, A-Z, 0-9, _ and -), or "" (format.go's checkName).
function nameError(name) {
  if (name === "" || name.length > 64) return `a name must be 1 to 64 characters (got ${name.length})`;
  const c = /[^A-Za-z0-9_-]/.exec(name);
  return c ? `${JSON.stringify(name)} has '${c[0]}': only a-z, A-Z, 0-9, _ and - are allowed` : "";
}

// logprobsOf reads logprobs and top_logprobs into run() options: chat's
// {logprobs: true, top_logprobs: 0..20}, completions' logprobs: 0..5 (the
// number of alternatives; 0 is the chosen tokens' only).
function logprobsOf(body, endpoint, o) {
  const lp = body.logprobs;
  if (endpoint === "chat") {
    if (lp !== null && lp !== undefined && typeof lp !== "boolean") throw bad("logprobs", `wrong type for logprobs: got ${kind(lp)}, want a boolean`);
    const n = integer(body, "top_logprobs", 0, MAX_TOP_LOGPROBS, 0, `top_logprobs must be between 0 and ${MAX_TOP_LOGPROBS}`);
    if (n > 0 && lp !== true) throw bad("top_logprobs", 'top_logprobs needs "logprobs": true');
    if (lp === true) { o.logprobs = true; o.topLogprobs = n; }
    return;
  }
  const n = integer(body, "logprobs", 0, MAX_COMPLETION_LOGPROBS, undefined, `logprobs must be between 0 and ${MAX_COMPLETION_LOGPROBS}`);
  if (n !== undefined) { o.logprobs = true; o.topLogprobs = n; }
}

const NAME = /^[A-Za-z0-9_-]{1,64}$/;

// toolsOf reads tools, tool_choice and parallel_tool_calls into run()
// options ({tools: [{name, description, parameters}], toolChoice: {mode,
// function, parallel}}), as the Worker reads them; the engine Worker checks
// each tool's parameters (they must compile to a grammar).
function toolsOf(body, o) {
  const ts = body.tools;
  const tools = [];
  if (ts !== null && ts !== undefined) {
    if (!Array.isArray(ts)) throw bad("tools", `wrong type for tools: got ${kind(ts)}, want an array of tools`);
    if (ts.length > MAX_TOOLS) throw bad("tools", `at most ${MAX_TOOLS} tools are allowed (got ${ts.length})`);
    for (const [i, t] of ts.entries()) {
      const p = `tools[${i}]`;
      if (t === null) throw bad(p, `${p} is null: want a {"type": "function", "function"} object`);
      if (!isObject(t)) throw bad(p, `wrong type for ${p}: got ${kind(t)}, want an object`);
      for (const k of Object.keys(t).sort()) if (k !== "type" && k !== "function") throw unknownField(`${p}.${k}`);
      if (t.type != null && typeof t.type !== "string") throw bad(`${p}.type`, `wrong type for ${p}.type: got ${kind(t.type)}, want a string`);
      if (t.type !== "function") throw bad(`${p}.type`, `${p}.type must be "function" (the only kind of tool)`);
      const f = t.function;
      if (f == null) throw bad(`${p}.function`, `${p}.function is required`);
      if (!isObject(f)) throw bad(`${p}.function`, `wrong type for ${p}.function: got ${kind(f)}, want an object`);
      for (const k of Object.keys(f).sort()) if (!["name", "description", "parameters", "strict"].includes(k)) throw unknownField(`${p}.function.${k}`);
      if (f.name == null) throw bad(`${p}.function.name`, `${p}.function.name is required`);
      if (typeof f.name !== "string") throw bad(`${p}.function.name`, `wrong type for ${p}.function.name: got ${kind(f.name)}, want a string`);
      if (nameError(f.name)) throw bad(`${p}.function.name`, `${p}.function.name: ${nameError(f.name)}`);
      if (f.description != null && typeof f.description !== "string") throw bad(`${p}.function.description`, `wrong type for ${p}.function.description: got ${kind(f.description)}, want a string`);
      if (f.strict != null && typeof f.strict !== "boolean") throw bad(`${p}.function.strict`, `wrong type for ${p}.function.strict: got ${kind(f.strict)}, want a boolean`);
      if (f.parameters != null && !isObject(f.parameters)) throw bad(`${p}.function.parameters`, `wrong type for ${p}.function.parameters: got ${kind(f.parameters)}, want a JSON Schema object`);
      tools.push({ name: f.name, description: f.description ?? "", parameters: f.parameters ?? null });
    }
  }
  const choice = { mode: tools.length ? "auto" : "none", function: "", parallel: body.parallel_tool_calls !== false };
  const tc = body.tool_choice;
  if (tc !== null && tc !== undefined) {
    if (typeof tc === "string") {
      if (!["none", "auto", "required"].includes(tc)) throw bad("tool_choice", `tool_choice ${JSON.stringify(tc)} is not supported: use "none", "auto", "required" or {"type": "function", "function": {"name": ...}}`);
      choice.mode = tc;
    } else if (isObject(tc)) {
      if (tc.type !== "function") throw bad("tool_choice.type", 'tool_choice.type must be "function"');
      if (!isObject(tc.function) || typeof tc.function.name !== "string") throw bad("tool_choice.function.name", "tool_choice.function.name is required");
      choice.mode = "function";
      choice.function = tc.function.name;
    } else {
      throw bad("tool_choice", `wrong type for tool_choice: got ${kind(tc)}, want "none", "auto", "required" or a {"type": "function"} object`);
    }
  }
  if (tools.length) o.tools = tools;
  if (choice.mode !== "none") o.toolChoice = choice; // the engine Worker refuses a choice that needs tools without them
}

// number reads body[k], a number from lo to hi (open at lo with loOpen);
// range is the Worker's message for one outside (api.go).
function number(body, k, lo, hi, def, range, loOpen = false) {
  const v = body[k];
  if (v === null || v === undefined) return def;
  if (typeof v !== "number" || !Number.isFinite(v)) throw bad(k, `wrong type for ${k}: got ${kind(v)}, want a number`);
  if (v < lo || v > hi || (loOpen && v === lo)) throw bad(k, range);
  return v;
}

// integer reads body[k], a whole number from lo to hi; range is the
// Worker's message for one outside, with " (got N)" after it.
function integer(body, k, lo, hi, def, range) {
  const v = body[k];
  if (v === null || v === undefined) return def;
  if (typeof v !== "number") throw bad(k, `wrong type for ${k}: got ${kind(v)}, want an integer`);
  if (!Number.isInteger(v)) throw bad(k, `${k} must be an integer, not ${v}`);
  if (v < lo || v > hi) throw bad(k, `${range} (got ${v})`);
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
    temperature: number(body, "temperature", 0, 2, 1, "temperature must be between 0 and 2 (0 is greedy)"),
    topP: number(body, "top_p", 0, 1, 1, "top_p must be in (0, 1]", true),
    topK: integer(body, "top_k", 0, Number.MAX_SAFE_INTEGER, 0, "top_k must be >= 0 (0 is off)"),
    minP: number(body, "min_p", 0, 1, 0, "min_p must be in [0, 1]"),
    seed: integer(body, "seed", -Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, undefined, "seed must be from -(2^53-1) to 2^53-1 here (the JS API's seeds are whole JS numbers)") ?? randomSeed(),
    maxTokens: 0, // until the model ends or the context is full
  };
  if (body.n !== null && body.n !== undefined) {
    if (typeof body.n !== "number") throw bad("n", `wrong type for n: got ${kind(body.n)}, want an integer`);
    if (!Number.isInteger(body.n)) throw bad("n", `n must be an integer, not ${body.n}`);
    if (body.n !== 1) throw bad("n", "n must be 1: one completion per request");
  }
  for (const k of endpoint === "chat" ? ["max_completion_tokens", "max_tokens"] : ["max_tokens"]) {
    const v = body[k];
    if (v === null || v === undefined) continue;
    if (typeof v !== "number") throw bad(k, `wrong type for ${k}: got ${kind(v)}, want an integer`);
    if (!Number.isInteger(v)) throw bad(k, `${k} must be an integer, not ${v}`);
    if (v < 1) throw bad(k, `${k} must be at least 1`);
    o.maxTokens = Math.min(v, context);
    break;
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
    for (const k of Object.keys(rf).sort()) if (!["type", "json_schema", "grammar"].includes(k)) throw unknownField(`response_format.${k}`);
    if (rf.type != null && typeof rf.type !== "string") throw bad("response_format.type", `wrong type for response_format.type: got ${kind(rf.type)}, want a string`);
    if (rf.type !== "json_schema" && rf.json_schema != null) throw notSupported("response_format.json_schema", 'json_schema goes with "type": "json_schema"', "null");
    if (rf.type !== "grammar" && rf.grammar != null) throw notSupported("response_format.grammar", 'grammar goes with "type": "grammar"', "null");
    switch (rf.type ?? "") {
      case "":
      case "text": break;
      case "json_object": o.json = true; break;
      case "json_schema": {
        const js = rf.json_schema, q = "response_format.json_schema";
        if (js == null) throw bad(q, `${q} is required with "type": "json_schema"`);
        if (!isObject(js)) throw bad(q, `wrong type for ${q}: got ${kind(js)}, want an object`);
        for (const k of Object.keys(js).sort()) if (!["name", "description", "schema", "strict"].includes(k)) throw unknownField(`${q}.${k}`);
        if (js.name == null) throw bad(`${q}.name`, `${q}.name is required`);
        if (typeof js.name !== "string") throw bad(`${q}.name`, `wrong type for ${q}.name: got ${kind(js.name)}, want a string`);
        if (nameError(js.name)) throw bad(`${q}.name`, `${q}.name: ${nameError(js.name)}`);
        if (js.description != null && typeof js.description !== "string") throw bad(`${q}.description`, `wrong type for ${q}.description: got ${kind(js.description)}, want a string`);
        if (js.strict != null && typeof js.strict !== "boolean") throw bad(`${q}.strict`, `wrong type for ${q}.strict: got ${kind(js.strict)}, want a boolean`);
        if (js.schema === undefined || js.schema === null) o.json = true; // no schema: any JSON
        else if (isObject(js.schema)) o.jsonSchema = js.schema;
        else throw bad(`${q}.schema`, `wrong type for ${q}.schema: got ${kind(js.schema)}, want a JSON Schema object`);
        break;
      }
      case "grammar":
        if (rf.grammar != null && typeof rf.grammar !== "string") throw bad("response_format.grammar", `wrong type for response_format.grammar: got ${kind(rf.grammar)}, want a string`);
        if (!rf.grammar) throw bad("response_format.grammar", 'response_format.grammar is required with "type": "grammar": GBNF source text');
        o.grammar = rf.grammar;
        break;
      default:
        throw bad("response_format.type", `response_format type ${JSON.stringify(rf.type)} is not supported: use "text", "json_object", "json_schema" or "grammar"`);
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
  logprobsOf(body, endpoint, o);
  if (endpoint === "chat") toolsOf(body, o);
  if (o.toolChoice && (o.json || o.grammar || o.jsonSchema)) throw bad("response_format", 'response_format json_object or json_schema, or a grammar, cannot constrain a reply that may call tools: send tool_choice "none" with them');
  return o;
}

const ROLES = { system: "system", developer: "system", user: "user", assistant: "assistant", tool: "tool" };

// toolCallsOf reads an assistant message's tool_calls into the engine's
// [{id, name, arguments}].
function toolCallsOf(v, p) {
  if (!Array.isArray(v)) throw bad(p, `wrong type for ${p}: got ${kind(v)}, want an array of tool calls`);
  return v.map((c, k) => {
    const q = `${p}[${k}]`;
    if (!isObject(c)) throw bad(q, `${q} must be a {"id", "type": "function", "function"} object`);
    for (const key of Object.keys(c)) if (!["id", "type", "function", "index"].includes(key)) throw bad(`${q}.${key}`, `unknown field ${q}.${key}`);
    if (c.type != null && c.type !== "function") throw bad(`${q}.type`, `${q}.type: only function calls are supported (got ${JSON.stringify(c.type)})`);
    if (c.id != null && typeof c.id !== "string") throw bad(`${q}.id`, `${q}.id must be a string`);
    const f = c.function;
    if (!isObject(f)) throw bad(`${q}.function`, `${q}.function is required`);
    if (typeof f.name !== "string" || !f.name) throw bad(`${q}.function.name`, `${q}.function.name is required`);
    let args = "{}";
    if (f.arguments != null) {
      if (typeof f.arguments !== "string") throw bad(`${q}.function.arguments`, `${q}.function.arguments must be the arguments object as JSON text`);
      try { JSON.parse(f.arguments); } catch { throw bad(`${q}.function.arguments`, `${q}.function.arguments is not JSON text: it must be the arguments object as a string`); }
      args = f.arguments;
    }
    return { id: c.id ?? "", name: f.name, arguments: args };
  });
}

function messages(body) {
  const ms = body.messages;
  if (ms === null || ms === undefined) throw bad("messages", "messages is required");
  if (!Array.isArray(ms)) throw bad("messages", 'wrong type for messages: want an array of {"role", "content"} objects');
  if (ms.length === 0) throw bad("messages", "messages must not be empty");
  return ms.map((m, i) => {
    const p = `messages[${i}]`;
    if (m === null) throw bad(p, `${p} is null: want a {"role", "content"} object`);
    if (!isObject(m)) throw bad(p, `wrong type for ${p}: got ${kind(m)}, want an object`);
    // A message as a completion returned it ({role, content, refusal: null, annotations: []}) is taken back as it is.
    const nullOnly = { audio: "there is no audio", function_call: NO_FUNCTIONS, refusal: "a refusal is not part of the chat format" };
    for (const k of Object.keys(m).sort()) {
      const v = m[k];
      if (k === "role" || k === "content" || k === "name" || k === "tool_calls" || k === "tool_call_id") continue;
      if (k === "annotations") {
        if (v != null && !(Array.isArray(v) && !v.length)) throw notSupported(`${p}.${k}`, "annotations are not part of the chat format", "[]");
        continue;
      }
      if (!Object.hasOwn(nullOnly, k)) throw unknownField(`${p}.${k}`);
      if (v !== null && v !== undefined) throw notSupported(`${p}.${k}`, nullOnly[k], "null");
    }
    if (m.name !== undefined && m.name !== null && typeof m.name !== "string") throw bad(`${p}.name`, `wrong type for ${p}.name: got ${kind(m.name)}, want a string`);
    if (m.role != null && typeof m.role !== "string") throw bad(`${p}.role`, `wrong type for ${p}.role: got ${kind(m.role)}, want a string`);
    if (!m.role) throw bad(`${p}.role`, `${p}.role is required`);
    const role = ROLES[m.role];
    if (!role) throw bad(`${p}.role`, `${p}.role ${JSON.stringify(m.role)} is not supported: use system, user, assistant or tool`);
    const out = { role };
    if (m.tool_calls != null && !(Array.isArray(m.tool_calls) && !m.tool_calls.length)) {
      if (role !== "assistant") throw bad(`${p}.tool_calls`, `${p}.tool_calls: only an assistant message has tool_calls`);
      out.toolCalls = toolCallsOf(m.tool_calls, `${p}.tool_calls`);
    }
    if (role === "tool") {
      if (typeof m.tool_call_id !== "string" || !m.tool_call_id) throw bad(`${p}.tool_call_id`, `${p}.tool_call_id is required: the id of the call this message answers`);
      out.toolCallId = m.tool_call_id;
      if (m.name != null) out.name = m.name;
    } else if (m.tool_call_id != null) {
      throw bad(`${p}.tool_call_id`, `${p}.tool_call_id: only a tool message answers a tool call`);
    }
    let content = m.content;
    if (content === null && out.toolCalls) content = ""; // an assistant's calls with no text
    if (Array.isArray(content)) {
      content = content.map((part, j) => {
        const q = `${p}.content[${j}]`; // the Worker's checks (api.go's messageContent)
        if (part === null) throw bad(q, `${q} is null: want a {"type": "text", "text"} part`);
        if (!isObject(part)) throw bad(q, `wrong type for ${q}: got ${kind(part)}, want an object`);
        if (part.type != null && typeof part.type !== "string") throw bad(`${q}.type`, `wrong type for ${q}.type: got ${kind(part.type)}, want a string`);
        if (part.type !== "text") throw bad(`${q}.type`, `${q}: only text parts are supported (got type ${part.type == null ? "none" : JSON.stringify(part.type)})`);
        for (const k of Object.keys(part).sort()) if (k !== "type" && k !== "text") throw unknownField(`${q}.${k}`);
        if (part.text == null) throw bad(`${q}.text`, `${q}.text is required`);
        if (typeof part.text !== "string") throw bad(`${q}.text`, `wrong type for ${q}.text: got ${kind(part.text)}, want a string`);
        return part.text;
      }).join("");
    }
    if (content === null || content === undefined) content = ""; // not given is ""
    if (typeof content !== "string") throw bad(`${p}.content`, `wrong type for ${p}.content: got ${kind(content)}, want a string or an array of text parts`);
    out.content = content;
    return out;
  });
}

function prompts(body) {
  const p = body.prompt;
  if (typeof p === "string") return [p];
  if (Array.isArray(p) && p.length && p.every((s) => typeof s === "string")) return p;
  if (Array.isArray(p) && p.length && p.every((s) => typeof s === "number" || Array.isArray(s))) throw bad("prompt", "token-id prompts are not supported: give the prompt as text");
  if (p === null || p === undefined) throw bad("prompt", "prompt is required");
  throw bad("prompt", `wrong type for prompt: got ${kind(p)}, want a string or an array of strings`);
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

// RUN_PARAMS: the request field of each run() option the engine may blame.
const RUN_PARAMS = { jsonSchema: "response_format.json_schema.schema", grammar: "response_format.grammar", maxTokens: "max_tokens" };

// runAll runs one request: its inputs (a prompt or a conversation each) one
// after another, each as a choice. It delivers events to onEvent:
// {type: "token", index, text, calls, logprobs} for each engine token that
// adds text, pieces of tool calls ({index, name?, arguments}: a call's name
// first) or log-probability entries, {type: "end", index, finish, stats},
// then resolves with the stats of every input. Aborting rejects with
// AbortError.
async function runAll(model, inputs, o, sig, onEvent) {
  const all = [];
  for (const [index, input] of inputs.entries()) {
    if (sig.aborted()) throw new AbortError();
    if (sig.ctl.signal.aborted) break; // the stream's consumer left the loop
    const onToken = (t) => {
      if (t.text || t.calls || t.logprobs) onEvent({ type: "token", index, text: t.text || "", calls: t.calls || [], logprobs: t.logprobs || [] });
    };
    let stats;
    try {
      stats = await model.run(input, { ...o, signal: sig.ctl.signal, onToken });
    } catch (e) {
      // The engine names run()'s options; the request's fields are OpenAI's.
      if (e instanceof BadRequestError && Object.hasOwn(RUN_PARAMS, e.param)) throw new BadRequestError(e.message, RUN_PARAMS[e.param], { cause: e });
      throw e;
    }
    if (stats.stop === "stopped" && sig.aborted()) throw new AbortError();
    all.push(stats);
    onEvent({ type: "end", index, finish: FINISH[stats.stop] || "stop", stats });
  }
  return all;
}

// stopReason is the extension field stop_reason, when a grammar ended the
// output early (finish_reason is then "stop").
function stopReason(reason) { return reason ? { stop_reason: reason } : {}; }

// callId is the id of call i of completion id (as the Worker makes it).
function callId(id, i) { return `call_${id.slice(id.indexOf("-") + 1)}_${i}`; }

// complete runs a request to its end: {texts, calls, logprobs, finishes,
// reasons, stats}, per choice: the text, the tool calls in OpenAI's shape,
// the log-probability entries, the finish reason and the extension
// stop_reason (why a grammar ended the output early, as the Worker's).
async function complete(model, inputs, o, sig, id) {
  const texts = inputs.map(() => ""), calls = inputs.map(() => []), lps = inputs.map(() => []), finishes = [], reasons = [];
  try {
    const stats = await runAll(model, inputs, o, sig, (e) => {
      if (e.type !== "token") { finishes[e.index] = e.finish; reasons[e.index] = e.stats.stopReason || ""; return; }
      texts[e.index] += e.text;
      for (const c of e.calls) {
        if (c.name !== undefined) calls[e.index][c.index] = { id: callId(id, c.index), type: "function", function: { name: c.name, arguments: c.arguments } };
        else calls[e.index][c.index].function.arguments += c.arguments;
      }
      lps[e.index].push(...e.logprobs);
    });
    return { texts, calls, logprobs: lps, finishes, reasons, stats };
  } finally {
    sig.done();
  }
}

// legacyLogprobs is completions' logprobs for entries (chat's shape):
// {tokens, token_logprobs, top_logprobs: [{token: logprob}], text_offset},
// as the Worker's (openai.LegacyLogprobs). text_offset counts Unicode code
// points from the start of the prompt (as OpenAI's; the prompt is not
// echoed) to each token's text; a token that ends inside a character moves
// the offset on only when a later token completes it. Of two alternatives
// with one text, top_logprobs keeps the likelier.
function legacyLogprobs(entries, state) {
  const out = { tokens: [], token_logprobs: [], top_logprobs: [], text_offset: [] };
  for (const e of entries) {
    const top = {};
    for (const t of e.top_logprobs) if (!Object.hasOwn(top, t.token)) top[t.token] = t.logprob;
    out.tokens.push(e.token);
    out.token_logprobs.push(e.logprob);
    out.top_logprobs.push(top);
    out.text_offset.push(state.offset);
    state.offset += codePoints(state.dec.decode(new Uint8Array(e.bytes), { stream: true }));
  }
  return out;
}

// offsetState is where a completion of prompt starts its text_offset.
function offsetState(prompt) { return { offset: codePoints(prompt), dec: new TextDecoder() }; }

function codePoints(s) {
  let n = 0;
  for (const _ of s) n++;
  return n;
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
      let pending = []; // log-probability entries not yet sent (of tokens whose text is held back)
      const chunk = (delta, finish) => {
        const c = { ...head, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...extra };
        if (o.logprobs && pending.length) { c.choices[0].logprobs = { content: pending, refusal: null }; pending = []; }
        return c;
      };
      const shape = (e) => {
        const out = [];
        if (!opened) { opened = true; out.push(chunk({ role: "assistant", content: "" }, null)); }
        if (e.type === "end") {
          if (pending.length) out.push(chunk({}, null));
          out.push(chunk({}, e.finish));
          return out;
        }
        pending.push(...e.logprobs);
        if (e.text) out.push(chunk({ content: e.text }, null));
        for (const c of e.calls) {
          const tc = c.name !== undefined
            ? { index: c.index, id: callId(id, c.index), type: "function", function: { name: c.name, arguments: c.arguments } }
            : { index: c.index, function: { arguments: c.arguments } };
          out.push(chunk({ tool_calls: [tc] }, null));
        }
        return out;
      };
      return stream(this._model, [msgs], o, sig, shape, withUsage ? (stats) => ({ ...head, choices: [], usage: usage(stats) }) : null);
    }
    const r = await complete(this._model, [msgs], o, sig, id);
    const message = { role: "assistant", content: r.texts[0], refusal: null };
    if (r.calls[0].length) {
      message.tool_calls = r.calls[0];
      if (!r.texts[0].trim()) message.content = null;
    }
    return {
      id, object: "chat.completion", created, model, system_fingerprint: null,
      choices: [{ index: 0, message, logprobs: o.logprobs ? { content: r.logprobs[0], refusal: null } : null, finish_reason: r.finishes[0], ...stopReason(r.reasons[0]) }],
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
      const states = inputs.map(offsetState);
      const shape = (e) => {
        if (e.type === "token" && !e.text && !e.logprobs.length) return [];
        const lp = o.logprobs ? legacyLogprobs(e.type === "token" ? e.logprobs : [], states[e.index]) : null;
        return [{ ...head, choices: [{ index: e.index, text: e.type === "token" ? e.text : "", logprobs: lp, finish_reason: e.type === "end" ? e.finish : null }], ...extra }];
      };
      return stream(this._model, inputs, o, sig, shape, withUsage ? (stats) => ({ ...head, choices: [], usage: usage(stats) }) : null);
    }
    const r = await complete(this._model, inputs, o, sig, id);
    return {
      ...head,
      choices: r.texts.map((text, index) => ({ index, text, logprobs: o.logprobs ? legacyLogprobs(r.logprobs[index], offsetState(inputs[index])) : null, finish_reason: r.finishes[index], ...stopReason(r.reasons[index]) })),
      usage: usage(r.stats),
    };
  }
}

/**
 * model.embeddings: OpenAI's embeddings. input is a string, an array of
 * strings, an array of token ids or an array of arrays of them; each is
 * embedded on its own (text with BOS first) by the engine's Session.Embed,
 * as the Cloudflare Worker's /v1/embeddings: the final norm's output pooled
 * as the GGUF's <arch>.pooling_type says (mean when it has none), unit L2
 * norm. encoding_format "float" (arrays of numbers) or "base64"
 * (little-endian float32s).
 */
export class Embeddings {
  constructor(model) { this._model = model; }

  async create(body, opts = undefined) {
    if (!isObject(body)) throw bad(null, `the request must be an object, got ${kind(body)}`);
    for (const k of Object.keys(body)) if (!["input", "model", "encoding_format", "dimensions", "user", "signal"].includes(k)) throw bad(k, `unknown field ${k} for embeddings.create`);
    if (body.model != null && typeof body.model !== "string") throw bad("model", `wrong type for model: got ${kind(body.model)}, want a string`);
    if (body.user != null && typeof body.user !== "string") throw bad("user", `wrong type for user: got ${kind(body.user)}, want a string`);
    const format = body.encoding_format ?? "float";
    if (format !== "float" && format !== "base64") throw bad("encoding_format", `encoding_format ${JSON.stringify(format)} is not supported: use "float" or "base64"`);
    const info = this._model.info;
    if (body.dimensions != null && (!info || body.dimensions !== info.dim)) throw bad("dimensions", `dimensions must be ${info ? info.dim : "the model's embedding size"}, this model's embedding size (the vectors are not shortened)`);
    const inputs = embedInputs(body.input);
    const sig = signals(body, opts);
    try {
      if (sig.aborted()) throw new AbortError();
      const r = await this._model.embed(inputs, { signal: sig.ctl.signal });
      if (sig.aborted()) throw new AbortError();
      const data = r.data.map((v, index) => ({ object: "embedding", index, embedding: format === "base64" ? base64(v) : Array.from(v) }));
      const n = r.tokens.reduce((a, b) => a + b, 0);
      return { object: "list", data, model: info ? info.name : "", usage: { prompt_tokens: n, total_tokens: n } };
    } finally {
      sig.done();
    }
  }
}

// embedInputs reads embeddings' input: [string | [token id]].
function embedInputs(v) {
  const ids = (a, p) => {
    if (!a.length) throw bad(p, `${p} is empty`);
    for (const [i, t] of a.entries()) if (!Number.isInteger(t)) throw bad(`${p}[${i}]`, `wrong type for ${p}[${i}]: got ${typeof t === "number" ? t : kind(t)}, want a token id (an integer)`);
    return a;
  };
  if (typeof v === "string") {
    if (!v) throw bad("input", "input is an empty string");
    return [v];
  }
  if (!Array.isArray(v)) throw bad("input", `wrong type for input: got ${kind(v)}, want a string, an array of strings or an array of token ids`);
  if (!v.length) throw bad("input", "input is an empty array");
  if (v.length > 2048) throw bad("input", `at most 2048 inputs are allowed (got ${v.length})`);
  if (typeof v[0] === "number") return [ids(v, "input")];
  return v.map((x, i) => {
    const p = `input[${i}]`;
    if (typeof x === "string") {
      if (!x) throw bad(p, `${p} is an empty string`);
      return x;
    }
    if (Array.isArray(x)) return ids(x, p);
    throw bad(p, `wrong type for ${p}: got ${kind(x)}, want a string or an array of token ids`);
  });
}

function base64(v) {
  const b = new Uint8Array(v.buffer, v.byteOffset, v.byteLength); // little-endian on every browser
  let s = "";
  for (let i = 0; i < b.length; i += 0x8000) s += String.fromCharCode.apply(null, b.subarray(i, i + 0x8000));
  return btoa(s);
}
