package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/picolm/picolm-wasm/engine"
	"github.com/picolm/picolm-wasm/engine/chat"
	"github.com/picolm/picolm-wasm/engine/grammar"
	"github.com/picolm/picolm-wasm/engine/sample"
	"github.com/picolm/picolm-wasm/wasm/cloudflare/internal/openai"
)

// request is the union of the completions and chat-completions bodies, as
// readRequest reads it (after checkFields has refused the fields the
// endpoint does not take or implement). Pointer fields tell "not given"
// (absent or null) from zero.
type request struct {
	Model               string
	Prompt              json.RawMessage // completions: a string or an array of one string
	Messages            json.RawMessage // chat: [{role, content}]
	MaxTokens           *int
	MaxCompletionTokens *int
	Temperature         *float64
	TopP                *float64
	TopK                *int     // extension (llama.cpp server)
	MinP                *float64 // extension (llama.cpp server)
	Seed                *int64
	Stop                json.RawMessage // a string or an array of strings
	Stream              bool
	StreamOptions       *struct {
		IncludeUsage bool
	}
	ResponseFormat    json.RawMessage // read by parseFormat
	Grammar           *string         // extension: GBNF
	Logprobs          *bool           // chat
	TopLogprobs       *int            // chat
	LegacyLogprobs    *int            // completions: "logprobs": N, the alternatives per token (0 to 5)
	Tools             json.RawMessage // chat: read by parseTools
	ToolChoice        json.RawMessage // chat: read by parseToolChoice
	ParallelToolCalls *bool
	N                 *int
}

// MaxLegacyLogprobs is the most alternatives per token completions'
// "logprobs" may ask for (the legacy API's limit).
const MaxLegacyLogprobs = 5

// apiError is an OpenAI error object with its HTTP status.
type apiError struct {
	status  int
	typ     string
	param   string
	code    string
	message string
}

func (e *apiError) Error() string { return e.message }

func badRequest(param, format string, args ...any) *apiError {
	return &apiError{http.StatusBadRequest, "invalid_request_error", param, "", fmt.Sprintf(format, args...)}
}

// job is a validated request, ready to run.
type job struct {
	chat         bool
	prompt       []int
	maxTokens    int
	params       sample.Params
	json         bool          // response_format json_object
	grammar      *grammar.GBNF // response_format json_schema, the grammar extension, or the tools' calls
	tools        bool          // the reply is read for tool calls (chat.ToolStream)
	logprobs     bool
	topLogprobs  int
	legacy       bool // completions' logprobs shape (openai.LegacyLogprobs)
	promptChars  int  // completions: the prompt's length in code points, where text_offset starts
	stops        []string
	stream       bool
	includeUsage bool
}

// parse reads and validates a request body.
func (s *Server) parse(w http.ResponseWriter, r *http.Request, isChat bool) (*job, *apiError) {
	body, aerr := s.readBody(w, r)
	if aerr != nil {
		return nil, aerr
	}
	top, aerr := decodeBody(body)
	if aerr != nil {
		return nil, aerr
	}
	if aerr := checkFields(top, isChat); aerr != nil {
		return nil, aerr
	}
	req, aerr := readRequest(top, isChat)
	if aerr != nil {
		return nil, aerr
	}

	if req.Model != "" && req.Model != s.cfg.ModelID {
		return nil, &apiError{http.StatusNotFound, "invalid_request_error", "model", "model_not_found",
			fmt.Sprintf("the model %q does not exist here; this Worker serves %q (GET /v1/models)", req.Model, s.cfg.ModelID)}
	}
	if req.N != nil && *req.N != 1 {
		return nil, badRequest("n", "n must be 1: one completion per request")
	}
	j := &job{chat: isChat, stream: req.Stream}
	if req.StreamOptions != nil {
		if !req.Stream {
			return nil, badRequest("stream_options", "stream_options is only allowed with stream: true")
		}
		j.includeUsage = req.StreamOptions.IncludeUsage
	}

	// Sampling. OpenAI's defaults are temperature 1 and top_p 1.
	j.params = sample.Params{Temperature: 1, TopP: 1}
	if req.Temperature != nil {
		t := *req.Temperature
		if math.IsNaN(t) || t < 0 || t > 2 {
			return nil, badRequest("temperature", "temperature must be between 0 and 2 (0 is greedy)")
		}
		j.params.Temperature = float32(t)
	}
	if req.TopP != nil {
		p := *req.TopP
		if math.IsNaN(p) || p <= 0 || p > 1 {
			return nil, badRequest("top_p", "top_p must be in (0, 1]")
		}
		j.params.TopP = float32(p)
	}
	if req.TopK != nil {
		if *req.TopK < 0 {
			return nil, badRequest("top_k", "top_k must be >= 0 (0 is off)")
		}
		j.params.TopK = *req.TopK
	}
	if req.MinP != nil {
		p := *req.MinP
		if math.IsNaN(p) || p < 0 || p > 1 {
			return nil, badRequest("min_p", "min_p must be in [0, 1]")
		}
		j.params.MinP = float32(p)
	}
	if req.Seed != nil {
		j.params.Seed = uint64(*req.Seed)
	} else {
		j.params.Seed = uint64(time.Now().UnixNano()) ^ s.seq.Load()*0x9e3779b97f4a7c15
	}

	// Output format: response_format, the grammar extension, and the tools.
	if aerr := s.parseFormat(req, j); aerr != nil {
		return nil, aerr
	}
	var tools []chat.Tool
	if isChat {
		var aerr *apiError
		if tools, aerr = s.parseTools(req, j); aerr != nil {
			return nil, aerr
		}
	}

	// Log probabilities: chat's "logprobs": true with top_logprobs, and
	// completions' "logprobs": N (the legacy API: N alternatives per token).
	if req.Logprobs != nil && *req.Logprobs {
		j.logprobs = true
	}
	if req.LegacyLogprobs != nil {
		n := *req.LegacyLogprobs
		if n < 0 || n > MaxLegacyLogprobs {
			return nil, badRequest("logprobs", "logprobs must be between 0 and %d (got %d)", MaxLegacyLogprobs, n)
		}
		j.logprobs, j.topLogprobs, j.legacy = true, n, true
	}
	if req.TopLogprobs != nil {
		n := *req.TopLogprobs
		if n < 0 || n > engine.MaxTopLogprobs {
			return nil, badRequest("top_logprobs", "top_logprobs must be between 0 and %d (got %d)", engine.MaxTopLogprobs, n)
		}
		if n > 0 && !j.logprobs {
			return nil, badRequest("top_logprobs", "top_logprobs needs \"logprobs\": true")
		}
		j.topLogprobs = n
	}

	// Stop sequences.
	if stops, perr := parseStop(req.Stop, s.cfg.MaxStops); perr != nil {
		return nil, perr
	} else {
		j.stops = stops
	}

	// max_tokens: capped, never rejected for being large.
	j.maxTokens = s.cfg.DefaultMaxTokens
	mt, param := req.MaxTokens, "max_tokens"
	if isChat && req.MaxCompletionTokens != nil {
		mt, param = req.MaxCompletionTokens, "max_completion_tokens"
	}
	if mt != nil {
		if *mt < 1 {
			return nil, badRequest(param, "%s must be at least 1", param)
		}
		j.maxTokens = min(*mt, s.cfg.MaxTokensCap)
	}

	// The prompt.
	tk := s.m.Tokenizer
	if isChat {
		msgs, perr := parseMessages(req.Messages)
		if perr != nil {
			return nil, perr
		}
		text, err := s.m.Chat().FormatTools(msgs, tools)
		if err != nil {
			return nil, badRequest("messages", "applying the chat template: %v", err)
		}
		j.prompt = tk.Encode(text, true)
	} else {
		prompt, perr := parsePrompt(req.Prompt)
		if perr != nil {
			return nil, perr
		}
		j.prompt = tk.Encode(prompt, true)
		j.promptChars = utf8.RuneCountInString(prompt)
	}
	if n := len(j.prompt); n >= s.cfg.Context {
		return nil, &apiError{http.StatusBadRequest, "invalid_request_error", map[bool]string{true: "messages", false: "prompt"}[isChat],
			"context_length_exceeded",
			fmt.Sprintf("the prompt is %d tokens; this model's context holds %d, with room for at least one generated token", n, s.cfg.Context)}
	}
	return j, nil
}

// readBody checks the Content-Type and reads the body, up to the limit.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, *apiError) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt := strings.ToLower(strings.TrimSpace(strings.SplitN(ct, ";", 2)[0]))
		if mt != "application/json" {
			return nil, &apiError{http.StatusUnsupportedMediaType, "invalid_request_error", "", "unsupported_media_type",
				fmt.Sprintf("Content-Type %q is not supported: send application/json", ct)}
		}
	}
	if r.ContentLength > s.cfg.MaxBodyBytes {
		return nil, tooLarge(s.cfg.MaxBodyBytes)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, tooLarge(s.cfg.MaxBodyBytes)
		}
		return nil, badRequest("", "reading the request body: %v", err)
	}
	return body, nil
}

func tooLarge(limit int64) *apiError {
	return &apiError{http.StatusRequestEntityTooLarge, "invalid_request_error", "", "request_too_large",
		fmt.Sprintf("the request body is over the %d-byte limit", limit)}
}

// decodeBody checks the body's nesting (checkDepth), then decodes it as one
// JSON object with nothing after it.
func decodeBody(body []byte) (object, *apiError) {
	if aerr := checkDepth(body, MaxJSONDepth); aerr != nil {
		return object{}, aerr
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return object{}, badRequest("", "the request body is empty: send a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return object{}, badRequest("", "malformed JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return object{}, badRequest("", "malformed JSON: more data after the request object")
	}
	if raw[0] != '{' {
		return object{}, badRequest("", "the request body must be a JSON object, not %s", kindOf(raw))
	}
	o, _, aerr := asObject(raw, "")
	return o, aerr
}

// readRequest reads the implemented fields with their types.
func readRequest(o object, isChat bool) (req request, aerr *apiError) {
	var model *string
	if model, aerr = o.str("model"); aerr != nil {
		return req, aerr
	}
	if model != nil {
		req.Model = *model
	}
	req.Prompt, req.Messages, req.Stop = o.m["prompt"], o.m["messages"], o.m["stop"]
	for _, f := range []struct {
		name string
		dst  **int
	}{{"max_tokens", &req.MaxTokens}, {"max_completion_tokens", &req.MaxCompletionTokens}, {"top_k", &req.TopK}, {"n", &req.N}} {
		if *f.dst, aerr = o.intValue(f.name); aerr != nil {
			return req, aerr
		}
	}
	for _, f := range []struct {
		name string
		dst  **float64
	}{{"temperature", &req.Temperature}, {"top_p", &req.TopP}, {"min_p", &req.MinP}} {
		if *f.dst, aerr = o.number(f.name); aerr != nil {
			return req, aerr
		}
	}
	if req.Seed, aerr = o.integer("seed"); aerr != nil {
		return req, aerr
	}
	stream, aerr := o.boolean("stream")
	if aerr != nil {
		return req, aerr
	}
	req.Stream = stream != nil && *stream

	given, usage, aerr := subField[bool](o, "stream_options", "include_usage", "a boolean",
		[]string{"include_usage", "include_obfuscation"}, namedCheck{"include_obfuscation", falseOnly("the stream is not padded")})
	if aerr != nil {
		return req, aerr
	}
	if given {
		req.StreamOptions = &struct{ IncludeUsage bool }{usage != nil && *usage}
	}
	req.ResponseFormat, req.Tools, req.ToolChoice = o.m["response_format"], o.m["tools"], o.m["tool_choice"]
	if req.Grammar, aerr = o.str("grammar"); aerr != nil {
		return req, aerr
	}
	if isChat {
		req.Logprobs, aerr = o.boolean("logprobs")
	} else {
		req.LegacyLogprobs, aerr = o.intValue("logprobs")
	}
	if aerr != nil {
		return req, aerr
	}
	if req.TopLogprobs, aerr = o.intValue("top_logprobs"); aerr != nil {
		return req, aerr
	}
	if req.ParallelToolCalls, aerr = o.boolean("parallel_tool_calls"); aerr != nil {
		return req, aerr
	}
	return req, nil
}

func parsePrompt(raw json.RawMessage) (string, *apiError) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", badRequest("prompt", "prompt is required")
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var arr []string
	if err := json.Unmarshal(raw, &arr); err == nil {
		if len(arr) != 1 {
			return "", badRequest("prompt", "prompt must be a string or an array of exactly one string (got %d)", len(arr))
		}
		return arr[0], nil
	}
	return "", badRequest("prompt", "wrong type for prompt: got %s, want a string or an array of strings", kindOf(raw))
}

func parseStop(raw json.RawMessage, maxStops int) ([]string, *apiError) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var one string
	var stops []string
	if err := json.Unmarshal(raw, &one); err == nil {
		stops = []string{one}
	} else if err := json.Unmarshal(raw, &stops); err != nil {
		return nil, badRequest("stop", "wrong type for stop: got %s, want a string or an array of strings", kindOf(raw))
	}
	if len(stops) > maxStops {
		return nil, badRequest("stop", "at most %d stop sequences are allowed (got %d)", maxStops, len(stops))
	}
	for _, s := range stops {
		if s == "" {
			return nil, badRequest("stop", "stop sequences must not be empty")
		}
	}
	return stops, nil
}

func parseMessages(raw json.RawMessage) ([]chat.Message, *apiError) {
	if isNull(raw) {
		return nil, badRequest("messages", "messages is required")
	}
	var items []json.RawMessage
	if raw[0] != '[' || json.Unmarshal(raw, &items) != nil {
		return nil, badRequest("messages", "wrong type for messages: want an array of {\"role\", \"content\"} objects")
	}
	if len(items) == 0 {
		return nil, badRequest("messages", "messages must not be empty")
	}
	msgs := make([]chat.Message, len(items))
	for i, item := range items {
		param := "messages[" + strconv.Itoa(i) + "]"
		m, ok, aerr := asObject(item, param)
		if aerr != nil {
			return nil, aerr
		}
		if !ok {
			return nil, badRequest(param, "%s is null: want a {\"role\", \"content\"} object", param)
		}
		r, aerr := m.str("role")
		if aerr != nil {
			return nil, aerr
		}
		var role string
		if r != nil {
			role = *r
		}
		switch role {
		case "system", "developer", "user", "assistant", "tool":
		case "":
			return nil, badRequest(param+".role", "%s.role is required", param)
		default:
			return nil, badRequest(param+".role", "%s.role %q is not supported: use system, user, assistant or tool", param, role)
		}
		if role == "developer" {
			role = "system"
		}
		content, aerr := messageContent(m)
		if aerr != nil {
			return nil, aerr
		}
		msg := chat.Message{Role: role, Content: content}
		if aerr := readMessageFields(m, &msg); aerr != nil {
			return nil, aerr
		}
		msgs[i] = msg
	}
	return msgs, nil
}

// readMessageFields reads a message's members besides role and content: an
// assistant's tool_calls, a tool result's tool_call_id (required) and name.
// Any other member is refused, but for the harmless values of the ones an
// assistant message copied from a response carries.
func readMessageFields(m object, msg *chat.Message) *apiError {
	if aerr := m.only("role", "content", "name", "refusal", "tool_calls", "tool_call_id", "function_call", "audio", "annotations"); aerr != nil {
		return aerr
	}
	if aerr := m.checkGiven(
		namedCheck{"annotations", emptyArray("annotations are not part of the chat format")},
		namedCheck{"audio", nullOnly("there is no audio")},
		namedCheck{"function_call", nullOnly(noFunctions)},
		namedCheck{"refusal", nullOnly("a refusal is not part of the chat format")},
	); aerr != nil {
		return aerr
	}
	if msg.Role != "tool" {
		if aerr := m.checkGiven(
			namedCheck{"name", emptyString("the chat format has no participant names")},
			namedCheck{"tool_call_id", nullOnly("only a tool message answers a tool call")},
		); aerr != nil {
			return aerr
		}
	} else {
		id, aerr := m.str("tool_call_id")
		if aerr != nil {
			return aerr
		}
		if id == nil || *id == "" {
			return badRequest(m.param("tool_call_id"), "%s is required: the id of the call this message answers", m.param("tool_call_id"))
		}
		msg.ToolCallID = *id
		name, aerr := m.str("name")
		if aerr != nil {
			return aerr
		}
		if name != nil {
			msg.Name = *name
		}
	}
	raw, ok := m.get("tool_calls")
	if !ok {
		return nil
	}
	param := m.param("tool_calls")
	if msg.Role != "assistant" {
		return badRequest(param, "%s: only an assistant message has tool_calls", param)
	}
	var items []json.RawMessage
	if raw[0] != '[' || json.Unmarshal(raw, &items) != nil {
		return wrongType(param, raw, "an array of tool calls")
	}
	for k, item := range items {
		p := param + "[" + strconv.Itoa(k) + "]"
		c, ok, aerr := asObject(item, p)
		if aerr != nil {
			return aerr
		}
		if !ok {
			return badRequest(p, "%s is null: want a {\"id\", \"type\": \"function\", \"function\"} object", p)
		}
		if aerr := c.only("id", "type", "function", "index"); aerr != nil {
			return aerr
		}
		id, aerr := c.str("id")
		if aerr != nil {
			return aerr
		}
		typ, aerr := c.str("type")
		if aerr != nil {
			return aerr
		}
		if typ != nil && *typ != "function" {
			return badRequest(c.param("type"), "%s: only function calls are supported (got %q)", c.param("type"), *typ)
		}
		fn, ok, aerr := c.member("function", []string{"name", "arguments"})
		if aerr != nil {
			return aerr
		}
		if !ok {
			return badRequest(c.param("function"), "%s is required", c.param("function"))
		}
		name, aerr := fn.str("name")
		if aerr != nil {
			return aerr
		}
		if name == nil || *name == "" {
			return badRequest(fn.param("name"), "%s is required", fn.param("name"))
		}
		args, aerr := fn.str("arguments")
		if aerr != nil {
			return aerr
		}
		tc := chat.ToolCall{Name: *name, Arguments: "{}"}
		if id != nil {
			tc.ID = *id
		}
		if args != nil {
			if !json.Valid([]byte(*args)) {
				return badRequest(fn.param("arguments"), "%s is not JSON text: it must be the arguments object as a string", fn.param("arguments"))
			}
			tc.Arguments = *args
		}
		msg.ToolCalls = append(msg.ToolCalls, tc)
	}
	return nil
}

// messageContent reads a message's content: a string, or an array of
// {"type": "text", "text": ...} parts, concatenated. Not given is "".
func messageContent(m object) (string, *apiError) {
	param := m.param("content")
	raw, ok := m.get("content")
	if !ok {
		return "", nil
	}
	if raw[0] == '"' {
		s, aerr := m.str("content")
		if aerr != nil {
			return "", aerr
		}
		return *s, nil
	}
	var parts []json.RawMessage
	if raw[0] != '[' || json.Unmarshal(raw, &parts) != nil {
		return "", badRequest(param, "wrong type for %s: got %s, want a string or an array of text parts", param, kindOf(raw))
	}
	var b strings.Builder
	for j, part := range parts {
		p, ok, aerr := asObject(part, param+"["+strconv.Itoa(j)+"]")
		if aerr != nil {
			return "", aerr
		}
		if !ok {
			return "", badRequest(p.path, "%s is null: want a {\"type\": \"text\", \"text\"} part", p.path)
		}
		typ, aerr := p.str("type")
		if aerr != nil {
			return "", aerr
		}
		if typ == nil || *typ != "text" {
			got := "none"
			if typ != nil {
				got = strconv.Quote(*typ)
			}
			return "", badRequest(p.param("type"), "%s: only text parts are supported (got type %s)", p.path, got)
		}
		if aerr := p.only("type", "text"); aerr != nil {
			return "", aerr
		}
		text, aerr := p.str("text")
		if aerr != nil {
			return "", aerr
		}
		if text == nil {
			return "", badRequest(p.param("text"), "%s.text is required", p.path)
		}
		b.WriteString(*text)
	}
	return b.String(), nil
}

// writeJSON writes v with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":{"message":"encoding the response failed","type":"server_error","param":null,"code":null}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)+1))
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

func writeError(w http.ResponseWriter, status int, typ, param, code, msg string) {
	writeJSON(w, status, openai.NewError(typ, param, code, msg))
}

func (e *apiError) write(w http.ResponseWriter) {
	writeError(w, e.status, e.typ, e.param, e.code, e.message)
}

// finishReason maps the engine's stop reason to OpenAI's.
func finishReason(r engine.StopReason, stopHit bool) string {
	if stopHit {
		return "stop"
	}
	switch r {
	case engine.StopMaxTokens, engine.StopContext:
		return "length"
	}
	return "stop"
}
