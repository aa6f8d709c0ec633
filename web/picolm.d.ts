// Type declarations of web/picolm.js (and of web/errors.js and web/openai.js,
// which it re-exports): the whole browser JS API. Checked by `npm run
// typecheck` against web/types/example.ts, which uses every call.

/** What kind of failure a PicoLMError is. */
export type PicoLMErrorCode = "bad_request" | "context_full" | "model_load" | "aborted" | "no_model" | "state" | "engine";

/** A failure of picolm.js. */
export class PicoLMError extends Error {
  constructor(message: string, code?: PicoLMErrorCode, options?: ErrorOptions);
  readonly code: PicoLMErrorCode;
}
/** A bad parameter, message, grammar or JSON schema; param names the field when one is to blame. */
export class BadRequestError extends PicoLMError {
  constructor(message: string, param?: string | null, options?: ErrorOptions);
  readonly code: "bad_request";
  readonly param: string | null;
}
/** The prompt (or the least output a grammar needs) does not fit the model's context. */
export class ContextFullError extends PicoLMError {
  constructor(message: string, options?: ErrorOptions);
  readonly code: "context_full";
}
/** The model could not be fetched, parsed or loaded. */
export class ModelLoadError extends PicoLMError {
  constructor(message: string, options?: ErrorOptions);
  readonly code: "model_load";
}
/**
 * A session state that cannot be saved or restored: another model's, truncated or corrupted (its checksum),
 * none saved under the name, or a model split over several Workers.
 */
export class StateError extends PicoLMError {
  constructor(message: string, options?: ErrorOptions);
  readonly code: "state";
}
/** The caller's AbortSignal ended the request (name "AbortError"). */
export class AbortError extends PicoLMError {
  constructor(message?: string, options?: ErrorOptions);
  readonly code: "aborted";
  readonly name: "AbortError";
}

/** The engine builds: relaxed-SIMD kernels, or SIMD128 (loads everywhere). */
export type Build = "relaxed" | "simd128";
export const BUILDS: readonly Build[];
/** The build this browser runs (wasmBuild() of picolm.js): "relaxed" where relaxedProbe() finds the relaxed dot right and relaxed_madd fused. */
export function wasmBuild(): Build;
/** What this engine's relaxed SIMD computes: the relaxed dot of ones (4 where right) and a multiply-add (2^-24 where fused); null without relaxed SIMD. */
export function relaxedProbe(): { dot: number; madd: number } | null;
/** The build wasmBuild() picks for a relaxedProbe() result. */
export function buildForProbe(probe: { dot: number; madd: number } | null): Build;
/** Whether a model can be split over Workers here (cross-origin isolated, SharedArrayBuffer). */
export function canSplit(): boolean;
/** The Workers a model is split over by default: 2 when canSplit() and 2+ cores, else 1. */
export function defaultWorkers(): number;
/**
 * Largest model file one Worker holds in one buffer, in bytes (3.125 GiB). A larger file (a URL or a Blob) is
 * planned from its header before any download: each Worker reads only its rows of it (by HTTP Range requests,
 * Blob slices or slices of the cached file), so a model runs when every Worker's part fits its wasm memory
 * (4 GiB); else the load is refused with what each Worker would need and how many Workers would hold it.
 */
export let maxModelBytes: number;

export interface LoadProgress {
  /** Bytes read so far: with several Workers reading their own rows, summed over them. */
  loaded: number;
  total: number;
  fraction: number;
  bytesPerSec: number;
  fromCache: boolean;
  name: string;
  /**
   * Only while downloading: false when the server serves no ranges (one plain download, which starts over if it is cut
   * off), true for ranged connections.
   */
  ranged?: boolean;
  /** Only while downloading: the connections the download runs over. */
  connections?: number;
  /** Only while downloading: bytes on disk from an earlier, cut-off attempt (the download resumed there). */
  resumed?: number;
  /** The Workers reading their rows (a model loaded by parts). */
  workers?: number;
  /** Set once, on a server without HTTP Range support: the whole file is downloaded into one buffer instead. */
  noRange?: boolean;
}

export interface LoadOptions {
  onProgress?: (p: LoadProgress) => void;
  signal?: AbortSignal;
  /** Keep models fetched by URL in the Origin Private File System, or the Cache API where there is none (default true). */
  cache?: boolean;
  /** Ranged requests a download runs at once (default 4). */
  connections?: number;
  /** Bytes each ranged request of a download fetches (default 16 MiB). */
  chunkBytes?: number;
  /** The download worker's script (default: store-worker.js beside picolm.js). */
  storeWorkerURL?: string | URL;
  /** The engine's worker script (default: worker.js beside picolm.js). */
  workerURL?: string | URL;
  /**
   * Web Workers to split the model over (default defaultWorkers(), capped at the model's KV heads and raised to the
   * fewest Workers whose parts each fit a wasm memory: a model over 4 GiB). Each Worker reads only its own rows of
   * a URL (HTTP Range requests; a cross-origin server must expose Content-Range) or a Blob.
   */
  workers?: number;
  build?: Build;
  /** The name of a model given as bytes. */
  name?: string;
}

/**
 * A model: a URL, a File or Blob, bytes (transferred), or "builtin" / nothing for the built-in stories260K.
 * A split GGUF (NAME-00001-of-0000N.gguf): its first shard's URL, or all its Files (an array or a FileList) or URLs.
 */
export type ModelSource = string | URL | Blob | ArrayBuffer | Uint8Array | readonly (File | string | URL)[] | FileList | "builtin" | null | undefined;

export interface ModelInfo {
  name: string;
  arch: string;
  bytes: number;
  params: number;
  dim: number;
  layers: number;
  heads: number;
  vocabSize: number;
  trainCtx: number;
  /** KV cache positions: the most prompt plus generated tokens. */
  context: number;
  fileType: string;
  /** The chat template's family ("zephyr", "chatml", ...; "" for the plain transcript). */
  chatTemplate: string;
  builtIn: boolean;
  workers: number;
}

export interface MemoryInfo {
  wasmBytes: number;
  jsHeapBytes: number;
  shardWasmBytes?: number;
  totalWasmBytes?: number;
  workers?: number;
}

export interface SplitStats {
  syncs: number;
  leadWaitMs: number;
  leadSleeps: number;
  shardBusyMs: number[];
  shardSleeps: number[];
}

/** "tool_calls": the reply ended with complete tool calls (RunOptions.tools). */
export type StopReason = "eos" | "max_tokens" | "context" | "json" | "grammar" | "stop_sequence" | "stopped" | "tool_calls";

export interface RunStats {
  prompt: string;
  promptTokens: number;
  /** Prompt tokens whose KV state was reused from the previous generation. */
  cachedTokens: number;
  prefillMs: number;
  generated: number;
  decodeMs: number;
  tokensPerSec: number;
  stop: StopReason;
  /** Why a grammar ended the output early (no token of the vocabulary could continue it), else "". */
  stopReason: string;
  memory: MemoryInfo | null;
  split?: { prefill: SplitStats; decode: SplitStats };
}

export interface TokenEvent {
  text: string;
  count: number;
  tokensPerSec: number;
  /** With RunOptions.tools: pieces of tool calls this token completes (name only in a call's first piece). */
  calls?: { index: number; name?: string; arguments: string }[];
  /** With RunOptions.logprobs: the entries of the tokens generated since the last event. */
  logprobs?: ChatCompletionTokenLogprob[];
}

export interface ChatMessage {
  role: "system" | "user" | "assistant" | "tool";
  content: string;
  /** An assistant's tool calls. */
  toolCalls?: { id?: string; name: string; arguments?: string }[];
  /** role "tool": the id of the call this answers, and the function's name. */
  toolCallId?: string;
  name?: string;
}

/** A function a chat reply may call (RunOptions.tools). */
export interface RunTool {
  name: string;
  description?: string;
  /** A JSON Schema of the arguments object (or its text). */
  parameters?: object | string | null;
}

export interface RunOptions {
  /** Tokens to generate at most (default 256; 0: until the model ends or the context is full). */
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  minP?: number;
  seed?: number;
  json?: boolean;
  /** GBNF grammar source (llama.cpp's syntax). */
  grammar?: string;
  /** A JSON Schema (an object, or its JSON text) the output must be an instance of. */
  jsonSchema?: object | boolean | string;
  stop?: string | string[];
  /** Log-probabilities of every generated token, with topLogprobs (0 to 20) alternatives. */
  logprobs?: boolean;
  topLogprobs?: number;
  /** Functions a chat reply may call, as toolChoice says (mode "none" when absent). */
  tools?: RunTool[];
  toolChoice?: { mode: "none" | "auto" | "required" | "function"; function?: string; parallel?: boolean };
  signal?: AbortSignal;
  onToken?: (t: TokenEvent) => void;
}

/** PicoLM.embed's result: one unit vector per input, and each input's token count. */
export interface EmbedResult {
  data: Float32Array[];
  tokens: number[];
}

/** The iterator generate() returns; stats is set once it is done. */
export interface Generation extends AsyncIterableIterator<string> {
  stats: RunStats | null;
}

export interface CachedModel {
  url: string;
  /** Bytes on disk. */
  bytes: number;
  cachedAt?: string | null;
  /** An unfinished download of total bytes. */
  partial?: true;
  total?: number;
}

export interface StorageInfo {
  /** Whether the browser keeps the site's storage under pressure (navigator.storage.persist granted). */
  persisted: boolean;
  usage: number;
  quota: number;
}

export class PicoLM {
  private constructor();
  static load(source?: ModelSource, opts?: LoadOptions): Promise<PicoLM>;
  /** Replace the model by another (same sources as PicoLM.load). */
  load(source?: ModelSource, opts?: LoadOptions): Promise<this>;
  readonly build: Build;
  info: ModelInfo;
  memory: MemoryInfo | null;
  /** OpenAI's chat completions. */
  readonly chat: Chat;
  /** OpenAI's text completions. */
  readonly completions: Completions;
  /** OpenAI's embeddings. */
  readonly embeddings: Embeddings;
  /** Embed texts or arrays of token ids, each on its own (the engine's Session.Embed). */
  embed(inputs: (string | number[])[], opts?: { signal?: AbortSignal }): Promise<EmbedResult>;
  run(input: string | ChatMessage[], opts?: RunOptions): Promise<RunStats>;
  generate(input: string | ChatMessage[], opts?: Omit<RunOptions, "onToken">): Generation;
  /** Stop the running generation after its current token. */
  stop(): void;
  /** Terminate the Workers and free the model's memory. */
  unload(): void;
  /**
   * Save the session's KV state (the chat so far) in OPFS under name: bound to this model and checksummed.
   * A model split over several Workers is refused with a StateError (load it with workers: 1).
   */
  saveState(name: string): Promise<{ name: string; bytes: number; positions: number }>;
  /**
   * Restore a state saved under name: the next generation whose prompt starts with its tokens continues from it.
   * Another model's, a corrupted one, a missing name or a split model: StateError.
   */
  restoreState(name: string): Promise<{ name: string; positions: number }>;
  /** The saved states. */
  static states(): Promise<{ name: string; bytes: number; savedAt: string }[]>;
  /** Delete a saved state; true if there was one. */
  static deleteState(name: string): Promise<boolean>;
  /** Cached models, then unfinished downloads (partial: true; loading their URL resumes them). */
  static cached(): Promise<CachedModel[]>;
  /** Remove a cached model or an unfinished download of it; true if it was there. */
  static deleteCached(url: string): Promise<boolean>;
  /** The site's storage: persisted, usage and quota in bytes; asks navigator.storage.persist() unless persist is false. */
  static storage(opts?: { persist?: boolean }): Promise<StorageInfo>;
  static formatBytes(n: number): string;
}
export default PicoLM;

// ---- The OpenAI-shaped API (web/openai.js) ----

export type ChatRole = "system" | "developer" | "user" | "assistant" | "tool";
export interface TextPart {
  type: "text";
  text: string;
}
export interface ChatCompletionMessageToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}
export interface ChatCompletionMessageParam {
  role: ChatRole;
  /** null for an assistant message with tool_calls only. */
  content: string | TextPart[] | null;
  name?: string;
  /** An assistant's calls, as a completion returned them. */
  tool_calls?: ChatCompletionMessageToolCall[] | null;
  /** role "tool": the call this message answers (required). */
  tool_call_id?: string | null;
  refusal?: null;
}

export interface ChatCompletionTool {
  type: "function";
  function: {
    /** 1 to 64 letters, digits, _ or -. */
    name: string;
    description?: string;
    /** A JSON Schema of an object: the calls' arguments are valid under it. */
    parameters?: object | null;
    strict?: boolean | null;
  };
}
export type ChatCompletionToolChoiceOption = "none" | "auto" | "required" | { type: "function"; function: { name: string } };

export interface TopLogprob {
  token: string;
  logprob: number;
  bytes: number[];
}
/** A generated token's log-probability under the model's own distribution (before any grammar mask, temperature or filter). */
export interface ChatCompletionTokenLogprob extends TopLogprob {
  top_logprobs: TopLogprob[];
}
export interface ChoiceLogprobs {
  content: ChatCompletionTokenLogprob[];
  refusal: null;
}
/**
 * Completions' (legacy) logprobs, as the Worker's: per token its text, log probability and up to
 * `logprobs` alternatives (of two with one text, the likelier); text_offset counts Unicode code
 * points from the start of the prompt (as OpenAI's; the prompt is not echoed).
 */
export interface CompletionLogprobs {
  tokens: string[];
  token_logprobs: number[];
  top_logprobs: Record<string, number>[];
  text_offset: number[];
}

export type ResponseFormat =
  | { type: "text" }
  | { type: "json_object" }
  | { type: "json_schema"; json_schema: { name: string; schema?: object; strict?: boolean | null; description?: string } }
  /** An extension (as web-llm's): output constrained by a GBNF grammar. */
  | { type: "grammar"; grammar: string };

/** Fields both endpoints take. Fields that are not implemented take only the values that ask for nothing. */
interface CommonParams {
  model?: string | null;
  max_tokens?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  /** Extension (llama.cpp's). */
  top_k?: number | null;
  /** Extension (llama.cpp's). */
  min_p?: number | null;
  seed?: number | null;
  stop?: string | string[] | null;
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean | null } | null;
  response_format?: ResponseFormat | null;
  /** Extension: aborting rejects (or ends the stream) with an AbortError. */
  signal?: AbortSignal | null;
  n?: 1 | null;
  frequency_penalty?: 0 | null;
  presence_penalty?: 0 | null;
  logit_bias?: Record<string, never> | null;
  user?: string | null;
}

export interface ChatCompletionCreateParams extends CommonParams {
  messages: ChatCompletionMessageParam[];
  max_completion_tokens?: number | null;
  logprobs?: boolean | null;
  /** 0 to 20; needs logprobs: true. */
  top_logprobs?: number | null;
  tools?: ChatCompletionTool[] | null;
  functions?: [] | null;
  tool_choice?: ChatCompletionToolChoiceOption | null;
  function_call?: "none" | "auto" | null;
  parallel_tool_calls?: boolean | null;
  store?: false | null;
  metadata?: Record<string, string> | null;
}
export interface ChatCompletionCreateParamsStreaming extends ChatCompletionCreateParams {
  stream: true;
}
export interface ChatCompletionCreateParamsNonStreaming extends ChatCompletionCreateParams {
  stream?: false | null;
}

export interface CompletionCreateParams extends CommonParams {
  /** One prompt, or several (one choice each, generated one after another). */
  prompt: string | string[];
  /** 0 to 5: the chosen tokens' log-probabilities and this many alternatives. */
  logprobs?: number | null;
  best_of?: 1 | null;
  echo?: false | null;
  suffix?: "" | null;
}
export interface CompletionCreateParamsStreaming extends CompletionCreateParams {
  stream: true;
}
export interface CompletionCreateParamsNonStreaming extends CompletionCreateParams {
  stream?: false | null;
}

/** The second argument of create, as in the OpenAI SDK. */
export interface RequestOptions {
  signal?: AbortSignal | null;
}

/** "abort": the generation was stopped with PicoLM.stop(). */
export type FinishReason = "stop" | "length" | "abort" | "tool_calls";

export interface CompletionUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: {
    /** Prompt tokens reused from the KV cache (not prefilled again). */
    cached_tokens: number;
  };
  extra: {
    prefill_ms: number;
    decode_ms: number;
    prefill_tokens_per_s: number;
    decode_tokens_per_s: number;
  };
}

export interface ChatCompletion {
  id: string;
  object: "chat.completion";
  created: number;
  model: string;
  system_fingerprint: null;
  choices: {
    index: number;
    /** content is null when the reply is only tool calls. */
    message: { role: "assistant"; content: string | null; refusal: null; tool_calls?: ChatCompletionMessageToolCall[] };
    logprobs: ChoiceLogprobs | null;
    finish_reason: FinishReason;
  }[];
  usage: CompletionUsage;
}

export interface ChatCompletionChunk {
  id: string;
  object: "chat.completion.chunk";
  created: number;
  model: string;
  system_fingerprint: null;
  /** Empty in the last chunk when stream_options.include_usage is set. */
  choices: {
    index: number;
    /** A call's first delta has index, id, type and function.name (arguments ""); the next ones index and function.arguments. */
    delta: { role?: "assistant"; content?: string; tool_calls?: { index: number; id?: string; type?: "function"; function: { name?: string; arguments: string } }[] };
    logprobs: ChoiceLogprobs | null;
    finish_reason: FinishReason | null;
  }[];
  /** With stream_options.include_usage: null but in the last chunk. */
  usage?: CompletionUsage | null;
}

export interface Completion {
  id: string;
  object: "text_completion";
  created: number;
  model: string;
  system_fingerprint: null;
  choices: {
    index: number;
    text: string;
    logprobs: CompletionLogprobs | null;
    /** null in a stream's chunks before the choice's last one. */
    finish_reason: FinishReason | null;
  }[];
  /** With stream: null or absent but in the last chunk (stream_options.include_usage). */
  usage?: CompletionUsage | null;
}

/** A streamed response: iterate it; leaving the loop stops the generation. */
export interface Stream<T> extends AsyncIterableIterator<T> {
  /** Aborting it stops the generation: the stream then ends with finish_reason "abort". */
  readonly controller: AbortController;
}

export class ChatCompletions {
  private constructor();
  create(body: ChatCompletionCreateParamsStreaming, opts?: RequestOptions): Promise<Stream<ChatCompletionChunk>>;
  create(body: ChatCompletionCreateParamsNonStreaming, opts?: RequestOptions): Promise<ChatCompletion>;
  create(body: ChatCompletionCreateParams, opts?: RequestOptions): Promise<ChatCompletion | Stream<ChatCompletionChunk>>;
}
export class Chat {
  private constructor();
  readonly completions: ChatCompletions;
}
export class Completions {
  private constructor();
  create(body: CompletionCreateParamsStreaming, opts?: RequestOptions): Promise<Stream<Completion>>;
  create(body: CompletionCreateParamsNonStreaming, opts?: RequestOptions): Promise<Completion>;
  create(body: CompletionCreateParams, opts?: RequestOptions): Promise<Completion | Stream<Completion>>;
}

export interface EmbeddingCreateParams {
  /** A string, an array of strings, an array of token ids, or an array of arrays of them (at most 2048 inputs). */
  input: string | string[] | number[] | number[][];
  model?: string | null;
  encoding_format?: "float" | "base64" | null;
  /** Only the model's own embedding size. */
  dimensions?: number | null;
  user?: string | null;
  signal?: AbortSignal | null;
}
export interface Embedding {
  object: "embedding";
  index: number;
  /** A unit vector; with encoding_format "base64" its little-endian float32s in base64. */
  embedding: number[] | string;
}
export interface CreateEmbeddingResponse {
  object: "list";
  data: Embedding[];
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
}
export class Embeddings {
  private constructor();
  create(body: EmbeddingCreateParams, opts?: RequestOptions): Promise<CreateEmbeddingResponse>;
}
