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

	"github.com/picolm/picolm-wasm/engine"
	"github.com/picolm/picolm-wasm/engine/chat"
	"github.com/picolm/picolm-wasm/engine/sample"
)

// request is the union of the completions and chat-completions bodies.
// Pointer fields tell "absent" from zero. Fields OpenAI defines that this
// server does not use (frequency_penalty, logit_bias, user, ...) are ignored.
type request struct {
	Model               string          `json:"model"`
	Prompt              json.RawMessage `json:"prompt"`   // completions: a string or an array of one string
	Messages            json.RawMessage `json:"messages"` // chat: [{role, content}]
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	Temperature         *float64        `json:"temperature"`
	TopP                *float64        `json:"top_p"`
	TopK                *int            `json:"top_k"` // extension (llama.cpp server)
	MinP                *float64        `json:"min_p"` // extension (llama.cpp server)
	Seed                *int64          `json:"seed"`
	Stop                json.RawMessage `json:"stop"` // a string or an array of strings
	Stream              bool            `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	ResponseFormat *struct {
		Type string `json:"type"`
	} `json:"response_format"`
	N *int `json:"n"`
}

// wireMessage is one chat message as sent; parseMessages turns it into a
// chat.Message. Content is a string or an array of {"type":"text","text":...}
// parts, which are concatenated.
type wireMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

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
	json         bool
	stops        []string
	stream       bool
	includeUsage bool
}

// parse reads and validates a request body.
func (s *Server) parse(w http.ResponseWriter, r *http.Request, chat bool) (*job, *apiError) {
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
	var req request
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&req); err != nil {
		return nil, jsonError(err)
	}
	if dec.More() {
		return nil, badRequest("", "malformed JSON: more data after the request object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, badRequest("", "malformed JSON: more data after the request object")
	}
	if bytes.Equal(bytes.TrimSpace(body), []byte("null")) || len(bytes.TrimSpace(body)) == 0 {
		return nil, badRequest("", "the request body must be a JSON object")
	}

	if req.Model != "" && req.Model != s.cfg.ModelID {
		return nil, &apiError{http.StatusNotFound, "invalid_request_error", "model", "model_not_found",
			fmt.Sprintf("the model %q does not exist here; this Worker serves %q (GET /v1/models)", req.Model, s.cfg.ModelID)}
	}
	if req.N != nil && *req.N != 1 {
		return nil, badRequest("n", "n must be 1: one completion per request")
	}
	j := &job{chat: chat, stream: req.Stream}
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

	// Output format.
	if rf := req.ResponseFormat; rf != nil {
		switch rf.Type {
		case "", "text":
		case "json_object":
			j.json = true
		default:
			return nil, badRequest("response_format", "response_format type %q is not supported: use \"text\" or \"json_object\"", rf.Type)
		}
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
	if chat && req.MaxCompletionTokens != nil {
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
	if chat {
		if len(req.Prompt) > 0 && string(req.Prompt) != "null" {
			return nil, badRequest("prompt", "chat completions take messages, not prompt")
		}
		msgs, perr := parseMessages(req.Messages)
		if perr != nil {
			return nil, perr
		}
		text, err := s.m.Chat().Format(msgs)
		if err != nil {
			return nil, badRequest("messages", "applying the chat template: %v", err)
		}
		j.prompt = tk.Encode(text, true)
	} else {
		if len(req.Messages) > 0 && string(req.Messages) != "null" {
			return nil, badRequest("messages", "completions take prompt, not messages (use /v1/chat/completions)")
		}
		prompt, perr := parsePrompt(req.Prompt)
		if perr != nil {
			return nil, perr
		}
		j.prompt = tk.Encode(prompt, true)
	}
	if n := len(j.prompt); n >= s.cfg.Context {
		return nil, &apiError{http.StatusBadRequest, "invalid_request_error", map[bool]string{true: "messages", false: "prompt"}[chat],
			"context_length_exceeded",
			fmt.Sprintf("the prompt is %d tokens; this model's context holds %d, with room for at least one generated token", n, s.cfg.Context)}
	}
	return j, nil
}

func tooLarge(limit int64) *apiError {
	return &apiError{http.StatusRequestEntityTooLarge, "invalid_request_error", "", "request_too_large",
		fmt.Sprintf("the request body is over the %d-byte limit", limit)}
}

// jsonError turns a decoding error into a 400 that names the field.
func jsonError(err error) *apiError {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			return badRequest("", "the request body must be a JSON object, not %s", te.Value)
		}
		return badRequest(field, "wrong type for %s: got a JSON %s, want %s", field, te.Value, jsonKind(te.Type.String()))
	}
	if errors.Is(err, io.EOF) {
		return badRequest("", "the request body is empty: send a JSON object")
	}
	return badRequest("", "malformed JSON: %v", err)
}

func jsonKind(goType string) string {
	switch strings.TrimPrefix(goType, "*") {
	case "string":
		return "a string"
	case "int", "int64":
		return "an integer"
	case "float64":
		return "a number"
	case "bool":
		return "a boolean"
	}
	return "an object"
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
	return "", badRequest("prompt", "wrong type for prompt: want a string or an array of one string")
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
		return nil, badRequest("stop", "wrong type for stop: want a string or an array of strings")
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
	if len(raw) == 0 || string(raw) == "null" {
		return nil, badRequest("messages", "messages is required")
	}
	var wire []wireMessage
	if err := json.Unmarshal(raw, &wire); err != nil {
		return nil, badRequest("messages", "wrong type for messages: want an array of {\"role\", \"content\"} objects")
	}
	if len(wire) == 0 {
		return nil, badRequest("messages", "messages must not be empty")
	}
	msgs := make([]chat.Message, len(wire))
	for i, m := range wire {
		param := "messages[" + strconv.Itoa(i) + "]"
		switch m.Role {
		case "system", "developer", "user", "assistant":
		case "":
			return nil, badRequest(param+".role", "%s.role is required", param)
		default:
			return nil, badRequest(param+".role", "%s.role %q is not supported: use system, user or assistant", param, m.Role)
		}
		role := m.Role
		if role == "developer" {
			role = "system"
		}
		content, err := messageContent(m.Content)
		if err != nil {
			return nil, badRequest(param+".content", "%s.content: %v", param, err)
		}
		msgs[i] = chat.Message{Role: role, Content: content}
	}
	return msgs, nil
}

func messageContent(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string  `json:"type"`
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", errors.New("want a string or an array of text parts")
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type != "text" || p.Text == nil {
			return "", fmt.Errorf("only text parts are supported (got type %q)", p.Type)
		}
		b.WriteString(*p.Text)
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

// errorBody is OpenAI's error object.
type errorBody struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
}

func newErrorBody(typ, param, code, msg string) errorBody {
	var e errorBody
	e.Error.Message, e.Error.Type = msg, typ
	if param != "" {
		e.Error.Param = &param
	}
	if code != "" {
		e.Error.Code = &code
	}
	return e
}

func writeError(w http.ResponseWriter, status int, typ, param, code, msg string) {
	writeJSON(w, status, newErrorBody(typ, param, code, msg))
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
