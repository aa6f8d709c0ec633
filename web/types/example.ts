// Every call of the browser JS API, typed against the package's declarations
// (web/picolm.d.ts). `npm run typecheck` checks it; web/test/package.test.mjs
// compiles it against the packed, installed package and runs it in headless
// Chromium with the built-in model, checking what main returns.
import PicoLMDefault, {
  PicoLM, PicoLMError, BadRequestError, ContextFullError, ModelLoadError, AbortError, StateError,
  BUILDS, wasmBuild, canSplit, defaultWorkers, maxModelBytes,
  type ChatCompletion, type ChatCompletionChunk, type Completion, type ChatCompletionMessageParam,
  type LoadProgress, type RunStats, type StorageInfo, type CachedModel, type Stream, type Build,
  type ChatCompletionTool, type CreateEmbeddingResponse, type ChatCompletionTokenLogprob,
} from "picolm-wasm";

export interface Result {
  build: Build;
  builds: readonly Build[];
  canSplit: boolean;
  defaultWorkers: number;
  maxModelBytes: number;
  sameClass: boolean;
  model: string;
  greedy: string;
  runStats: RunStats;
  generated: string;
  chat: ChatCompletion;
  streamed: string;
  chunks: number;
  finish: string | null;
  usageChunk: boolean;
  secondTurnCached: number;
  secondTurnPrompt: number;
  firstTurnTokens: number;
  json: unknown;
  grammar: string;
  completion: Completion;
  completionStreamed: string;
  badParam: string | null;
  badCode: string;
  contextCode: string;
  aborted: string;
  afterAbort: string;
  loadError: string;
  progress: number;
  cached: number;
  deleted: boolean;
  formatted: string;
  stoppedFinish: string | null;
  embeddingDim: number;
  embeddingNorm: number;
  logprobTokens: number;
  completionLogprobTokens: number;
  toolFinish: string | null;
  toolArgs: unknown;
  toolFedBack: number;
  storage: StorageInfo;
  statePositions: number;
  restoredPositions: number;
  stateRestoredSame: boolean;
  states: number;
  stateError: string;
  stateDeleted: boolean;
}

export async function main(badModelURL: string): Promise<Result> {
  let progress = 0;
  const m: PicoLM = await PicoLM.load("builtin", { onProgress: (_p: LoadProgress) => progress++, workers: 1 });

  // Today's API: run with callbacks, and the async iterator.
  let greedy = "";
  const runStats = await m.run("Once upon a time", { maxTokens: 16, temperature: 0, onToken: (t) => { greedy += t.text; } });
  let generated = "";
  const gen = m.generate("Once upon a time", { maxTokens: 16, temperature: 0, stop: ["\n\n"] });
  for await (const piece of gen) generated += piece;

  // chat.completions.create, not streamed, then streamed with usage: the
  // second turn extends the first.
  const messages: ChatCompletionMessageParam[] = [{ role: "system", content: "You tell short stories." }, { role: "user", content: "Tell me about a cat." }];
  const chat = await m.chat.completions.create({ messages, max_tokens: 24, temperature: 0 });
  messages.push({ role: "assistant", content: chat.choices[0].message.content }, { role: "user", content: [{ type: "text", text: "And then?" }] });
  const stream: Stream<ChatCompletionChunk> = await m.chat.completions.create({ messages, max_tokens: 24, temperature: 0, stream: true, stream_options: { include_usage: true } });
  let streamed = "", chunks = 0, finish: string | null = null, usageChunk = false, secondTurnCached = -1, secondTurnPrompt = -1;
  for await (const chunk of stream) {
    chunks++;
    const c = chunk.choices[0];
    if (c) {
      streamed += c.delta.content ?? "";
      if (c.finish_reason) finish = c.finish_reason;
    }
    if (chunk.usage) {
      usageChunk = chunk.choices.length === 0;
      secondTurnCached = chunk.usage.prompt_tokens_details.cached_tokens;
      secondTurnPrompt = chunk.usage.prompt_tokens;
    }
  }

  // Structured output: a JSON schema, and a GBNF grammar (an extension).
  const js = await m.chat.completions.create({
    messages: [{ role: "user", content: "A cat as JSON" }], max_tokens: 60, seed: 3,
    response_format: { type: "json_schema", json_schema: { name: "cat", schema: { type: "object", properties: { name: { type: "string", maxLength: 12 }, age: { type: "integer" } }, required: ["name", "age"], additionalProperties: false } } },
  });
  const json: unknown = JSON.parse(js.choices[0].message.content ?? "");
  const g = await m.completions.create({ prompt: "The cat said", max_tokens: 8, response_format: { type: "grammar", grammar: `root ::= "yes" | "no"` } });

  // completions.create, not streamed and streamed.
  const completion: Completion = await m.completions.create({ prompt: "Once upon a time", max_tokens: 16, temperature: 0 });
  let completionStreamed = "";
  for await (const chunk of await m.completions.create({ prompt: "Once upon a time", max_tokens: 16, temperature: 0, stream: true })) completionStreamed += chunk.choices[0]?.text ?? "";

  // Embeddings, log probabilities, tool calls.
  const emb: CreateEmbeddingResponse = await m.embeddings.create({ input: ["Once upon a time", "A cat"], encoding_format: "float" });
  const vec = emb.data[0].embedding as number[];
  const embeddingNorm = Math.sqrt(vec.reduce((s, x) => s + x * x, 0));
  const lp = await m.chat.completions.create({ messages: [{ role: "user", content: "Hi" }], max_tokens: 4, temperature: 0, logprobs: true, top_logprobs: 2 });
  const entries: ChatCompletionTokenLogprob[] = lp.choices[0].logprobs?.content ?? [];
  const clp = await m.completions.create({ prompt: "Once", max_tokens: 3, temperature: 0, logprobs: 1 });
  const weather: ChatCompletionTool = { type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string", maxLength: 8 } }, required: ["city"] } } };
  const tc = await m.chat.completions.create({ messages: [{ role: "user", content: "Weather in Paris?" }], tools: [weather], tool_choice: { type: "function", function: { name: "get_weather" } }, max_tokens: 200, seed: 1 });
  const call = tc.choices[0].message.tool_calls?.[0];
  const toolArgs: unknown = call ? JSON.parse(call.function.arguments) : null;
  const fed = await m.chat.completions.create({
    messages: [{ role: "user", content: "Weather in Paris?" }, { role: "assistant", content: null, tool_calls: tc.choices[0].message.tool_calls }, { role: "tool", tool_call_id: call?.id ?? "", content: "sunny" }],
    tools: [weather], tool_choice: "none", max_tokens: 4, temperature: 0,
  });

  // Typed errors.
  let badParam: string | null = null, badCode = "";
  try {
    await m.chat.completions.create({ messages, temperature: 7 });
  } catch (e) {
    if (e instanceof BadRequestError) { badParam = e.param; badCode = e.code; }
  }
  let contextCode = "";
  try {
    await m.completions.create({ prompt: "Once upon a time ".repeat(m.info.context), max_tokens: 4 });
  } catch (e) {
    if (e instanceof ContextFullError) contextCode = e.code;
  }

  // Aborting mid-stream: the iteration throws an AbortError and the model stays usable.
  const ctl = new AbortController();
  let aborted = "";
  try {
    const s = await m.chat.completions.create({ messages: [{ role: "user", content: "A long story" }], max_tokens: 2000, stream: true }, { signal: ctl.signal });
    let n = 0;
    for await (const _ of s) if (++n === 3) ctl.abort();
  } catch (e) {
    if (e instanceof AbortError && e instanceof PicoLMError) aborted = e.name;
  }
  const afterAbort = (await m.completions.create({ prompt: "Once upon a time", max_tokens: 16, temperature: 0 })).choices[0].text;

  // stop() ends the running request with finish_reason "abort".
  const pending = m.chat.completions.create({ messages: [{ role: "user", content: "Another story" }], max_tokens: 2000 });
  setTimeout(() => m.stop(), 50);
  const stoppedFinish = (await pending).choices[0].finish_reason;

  // A model that cannot be loaded.
  let loadError = "";
  try {
    await PicoLM.load(badModelURL, { cache: false, workers: 1, build: wasmBuild() });
  } catch (e) {
    if (e instanceof ModelLoadError) loadError = e.code;
  }

  // Session state: saved after a turn, restored into the same model after another, the turn again is the same.
  const turn = async () => {
    let text = "";
    for await (const piece of m.generate("Once upon a time", { maxTokens: 8, temperature: 0 })) text += piece;
    return text;
  };
  const beforeSave = await turn();
  const saved = await m.saveState("example");
  await m.run("Something else entirely", { maxTokens: 4 });
  const restored = await m.restoreState("example");
  const afterRestore = await turn();
  const states = (await PicoLM.states()).length;
  let stateError = "";
  try {
    await m.restoreState("no such state");
  } catch (e) {
    if (e instanceof StateError) stateError = e.code;
  }
  const stateDeleted = await PicoLM.deleteState("example");
  const storage: StorageInfo = await PicoLM.storage({ persist: true });

  const list: CachedModel[] = await PicoLM.cached();
  const cached = list.filter((c) => !c.partial).length;
  const deleted = await PicoLM.deleteCached(badModelURL);
  await m.load(null, { workers: defaultWorkers() });
  const result: Result = {
    build: m.build, builds: BUILDS, canSplit: canSplit(), defaultWorkers: defaultWorkers(), maxModelBytes,
    sameClass: PicoLMDefault === PicoLM, model: m.info.name,
    greedy, runStats, generated, chat, streamed, chunks, finish, usageChunk, secondTurnCached, secondTurnPrompt,
    firstTurnTokens: chat.usage.prompt_tokens + chat.usage.completion_tokens,
    json, grammar: g.choices[0].text, completion, completionStreamed, badParam, badCode, contextCode, aborted, afterAbort,
    loadError, progress, cached, deleted, formatted: PicoLM.formatBytes(m.info.bytes), stoppedFinish,
    embeddingDim: vec.length, embeddingNorm, logprobTokens: entries.length, completionLogprobTokens: clp.choices[0].logprobs?.tokens.length ?? 0,
    toolFinish: tc.choices[0].finish_reason, toolArgs, toolFedBack: fed.usage.prompt_tokens,
    storage, statePositions: saved.positions, restoredPositions: restored.positions, stateRestoredSame: afterRestore === beforeSave,
    states, stateError, stateDeleted,
  };
  m.unload();
  return result;
}
