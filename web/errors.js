// errors.js — the errors web/picolm.js and web/openai.js throw. Every one is a
// PicoLMError with a code saying what kind of failure it is:
//
//   bad_request   BadRequestError: a parameter, message, grammar or JSON schema
//                 is wrong (param names the field when one is to blame)
//   embeddings_not_supported  BadRequestError (param "model"): embeddings of a
//                 model that makes none (pooling type none or rank), the
//                 Cloudflare Worker's code
//   context_full  ContextFullError: the prompt does not fit the model's context
//   model_load    ModelLoadError: the model could not be fetched or loaded
//   aborted       AbortError (name "AbortError", as fetch's): the caller's
//                 AbortSignal ended the request
//   state         StateError: a session state (saveState, restoreState) was
//                 refused: another model's, truncated or corrupted (its
//                 checksum), none of that name, a model split over Workers
//   no_model      no model is loaded (after unload)
//   engine        anything else: the engine Worker failed or was terminated

/** A failure of picolm.js, with a code saying what kind (see above). */
export class PicoLMError extends Error {
  constructor(message, code = "engine", options = undefined) {
    super(message, options);
    this.name = "PicoLMError";
    this.code = code;
  }
}

/** A request the engine refuses: a bad parameter, message, grammar or schema. */
export class BadRequestError extends PicoLMError {
  constructor(message, param = null, options = undefined) {
    super(message, "bad_request", options);
    this.name = "BadRequestError";
    this.param = param;
  }
}

/** The prompt, or the output a grammar must at least produce, does not fit the context. */
export class ContextFullError extends PicoLMError {
  constructor(message, options = undefined) {
    super(message, "context_full", options);
    this.name = "ContextFullError";
  }
}

/** The model could not be fetched, parsed or loaded. */
export class ModelLoadError extends PicoLMError {
  constructor(message, options = undefined) {
    super(message, "model_load", options);
    this.name = "ModelLoadError";
  }
}

/** A session state that cannot be saved or restored (another model's, corrupted, missing, a split model). */
export class StateError extends PicoLMError {
  constructor(message, options = undefined) {
    super(message, "state", options);
    this.name = "StateError";
  }
}

/** The caller's AbortSignal ended the request. Its name is "AbortError", as fetch's rejection. */
export class AbortError extends PicoLMError {
  constructor(message = "the request was aborted", options = undefined) {
    super(message, "aborted", options);
    this.name = "AbortError";
  }
}

/** The error for a worker's error reply {message, code}. */
export function fromWorker(msg) {
  switch (msg.code) {
    case "bad_request": return new BadRequestError(msg.message, msg.param || null);
    case "embeddings_not_supported": { const e = new BadRequestError(msg.message, msg.param || "model"); e.code = msg.code; return e; }
    case "context_full": return new ContextFullError(msg.message);
    case "model_load": return new ModelLoadError(msg.message);
    case "state": return new StateError(msg.message);
    default: return new PicoLMError(msg.message, msg.code || "engine");
  }
}
