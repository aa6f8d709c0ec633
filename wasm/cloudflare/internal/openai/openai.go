// Package openai declares the wire types of the Worker's OpenAI-style API
// once: internal/server encodes its answers with them, and the tests
// (internal/apitest, natively and on workerd) decode with them.
package openai

import "encoding/json"

// Completion is a completions or chat-completions response, or one chunk of
// a streamed one.
type Completion struct {
	ID      string   `json:"id"`
	Object  string   `json:"object"` // text_completion, chat.completion, chat.completion.chunk
	Created int64    `json:"created"`
	Model   string   `json:"model"`
	Choices []Choice `json:"choices"`
	Usage   *Usage   `json:"usage,omitempty"`
	Timings *Timings `json:"timings,omitempty"`
}

// Choice is one element of a Completion's choices.
type Choice struct {
	Index        int       `json:"index"`
	Text         *string   `json:"text,omitempty"`    // completions
	Message      *Message  `json:"message,omitempty"` // chat, whole
	Delta        *Delta    `json:"delta,omitempty"`   // chat, streamed
	Logprobs     *Logprobs `json:"logprobs"`          // chat with "logprobs": true, completions with "logprobs": N; null otherwise
	FinishReason *string   `json:"finish_reason"`
	// StopReason is an extension: set when generation ended for a reason
	// finish_reason cannot say (the grammar allowed no token of the
	// vocabulary), the reason in words.
	StopReason string `json:"stop_reason,omitempty"`
}

// Message is a whole chat message: content is null when the assistant
// called tools and wrote nothing else.
type Message struct {
	Role      string     `json:"role"`
	Content   *string    `json:"content"`
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
}

// Delta is the part of a message one chunk of a stream carries.
type Delta struct {
	Role      string     `json:"role,omitempty"`
	Content   *string    `json:"content,omitempty"`
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
}

// ToolCall is a call of a function, or in a Delta a piece of one: the first
// piece of call Index has its id, type and function name, the later ones
// pieces of its arguments.
type ToolCall struct {
	Index    *int         `json:"index,omitempty"` // deltas only
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type,omitempty"` // "function"
	Function ToolFunction `json:"function"`
}

// ToolFunction is a call's function and its arguments (JSON text).
type ToolFunction struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

// Logprobs are the log probabilities of a choice's tokens: chat's shape,
// or with Legacy set completions' (the legacy API's), which is then what
// the JSON holds.
type Logprobs struct {
	Content []TokenLogprob  `json:"content"`
	Refusal []TokenLogprob  `json:"refusal"` // always null: there are no refusals
	Legacy  *LegacyLogprobs `json:"-"`
}

// LegacyLogprobs are a completion's log probabilities in the legacy
// completions API's shape ("logprobs": N, 0 to 5): per generated token its
// text, its log probability, its N most likely alternatives as {text:
// logprob}, and the offset of its text in the prompt and the completion
// (in Unicode code points, from the start of the prompt, as OpenAI's;
// the prompt itself is not echoed).
type LegacyLogprobs struct {
	Tokens        []string             `json:"tokens"`
	TokenLogprobs []float64            `json:"token_logprobs"`
	TopLogprobs   []map[string]float64 `json:"top_logprobs"`
	TextOffset    []int                `json:"text_offset"`
}

type plainLogprobs Logprobs

// MarshalJSON writes chat's shape, or Legacy's when set.
func (l Logprobs) MarshalJSON() ([]byte, error) {
	if l.Legacy != nil {
		return json.Marshal(l.Legacy)
	}
	return json.Marshal(plainLogprobs(l))
}

// UnmarshalJSON reads either shape: one with "tokens" into Legacy.
func (l *Logprobs) UnmarshalJSON(b []byte) error {
	var probe struct {
		Tokens json.RawMessage `json:"tokens"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return err
	}
	if probe.Tokens != nil {
		*l = Logprobs{Legacy: &LegacyLogprobs{}}
		return json.Unmarshal(b, l.Legacy)
	}
	return json.Unmarshal(b, (*plainLogprobs)(l))
}

// TokenLogprob is one token: its text, its log probability, its bytes
// (UTF-8; a token may hold part of a character) and, in Content, the most
// likely tokens at its position.
type TokenLogprob struct {
	Token       string       `json:"token"`
	Logprob     float64      `json:"logprob"`
	Bytes       []int        `json:"bytes"`
	TopLogprobs []TopLogprob `json:"top_logprobs"` // [] when none were asked for
}

// TopLogprob is one of the most likely tokens at a position.
type TopLogprob struct {
	Token   string  `json:"token"`
	Logprob float64 `json:"logprob"`
	Bytes   []int   `json:"bytes"`
}

// Embeddings is the answer of /v1/embeddings.
type Embeddings struct {
	Object string      `json:"object"` // "list"
	Data   []Embedding `json:"data"`
	Model  string      `json:"model"`
	Usage  struct {
		PromptTokens int `json:"prompt_tokens"`
		TotalTokens  int `json:"total_tokens"`
	} `json:"usage"`
}

// Embedding is one input's embedding: an array of floats, or with
// encoding_format "base64" a string, the base64 of the little-endian
// float32s.
type Embedding struct {
	Object    string `json:"object"` // "embedding"
	Index     int    `json:"index"`
	Embedding any    `json:"embedding"`
}

// Usage is OpenAI's token accounting, with the cached prompt tokens.
type Usage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

// Timings is an extension (as llama.cpp's server has): where the time went.
type Timings struct {
	PromptN     int     `json:"prompt_n"` // prompt tokens actually computed (not cached)
	PromptMS    float64 `json:"prompt_ms"`
	PredictedN  int     `json:"predicted_n"`
	PredictedMS float64 `json:"predicted_ms"`
}

// Text is the first choice's text, message content or delta content.
func (c Completion) Text() string {
	if len(c.Choices) == 0 {
		return ""
	}
	ch := c.Choices[0]
	switch {
	case ch.Text != nil:
		return *ch.Text
	case ch.Message != nil && ch.Message.Content != nil:
		return *ch.Message.Content
	case ch.Delta != nil && ch.Delta.Content != nil:
		return *ch.Delta.Content
	}
	return ""
}

// Finish is the first choice's finish_reason, "" for null.
func (c Completion) Finish() string {
	if len(c.Choices) == 0 || c.Choices[0].FinishReason == nil {
		return ""
	}
	return *c.Choices[0].FinishReason
}

// Error is OpenAI's error object.
type Error struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
}

// NewError returns an error object; an empty param or code is null.
func NewError(typ, param, code, msg string) Error {
	var e Error
	e.Error.Message, e.Error.Type = msg, typ
	if param != "" {
		e.Error.Param = &param
	}
	if code != "" {
		e.Error.Code = &code
	}
	return e
}

// Param is the error's param, "" for null.
func (e Error) Param() string { return deref(e.Error.Param) }

// Code is the error's code, "" for null.
func (e Error) Code() string { return deref(e.Error.Code) }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
