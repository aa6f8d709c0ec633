// Package apitest is the Worker's OpenAI-style API as a client sees it, for
// the tests: the response shapes, declared here independently of the
// server's own types (so a test decoding with them checks the wire format,
// not the server against itself), the server-sent-event parser, and Check,
// which tells a well-formed answer from a malformed one. internal/server's
// tests use it natively, the end-to-end and soak tests over HTTP on workerd.
package apitest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strings"
)

// Error is OpenAI's error object.
type Error struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
}

// Param is the error's param, "" for null.
func (e Error) Param() string {
	if e.Error.Param == nil {
		return ""
	}
	return *e.Error.Param
}

// Code is the error's code, "" for null.
func (e Error) Code() string {
	if e.Error.Code == nil {
		return ""
	}
	return *e.Error.Code
}

// Completion is a completions or chat-completions response, or one chunk of
// a streamed one.
type Completion struct {
	ID      string   `json:"id"`
	Object  string   `json:"object"`
	Created int64    `json:"created"`
	Model   string   `json:"model"`
	Choices []Choice `json:"choices"`
	Usage   *Usage   `json:"usage"`
}

// Choice is one of a Completion's choices: Text for completions, Message
// (whole) or Delta (streamed) for chat.
type Choice struct {
	Index        int      `json:"index"`
	Text         *string  `json:"text"`
	Message      *Message `json:"message"`
	Delta        *Message `json:"delta"`
	FinishReason *string  `json:"finish_reason"`
}

// Message is a chat message or delta.
type Message struct {
	Role    string  `json:"role"`
	Content *string `json:"content"`
}

// Usage is the token accounting.
type Usage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
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

// DecodeCompletion decodes a JSON completion.
func DecodeCompletion(b []byte) (Completion, error) {
	var c Completion
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("not a completion: %v: %.300s", err, b)
	}
	return c, nil
}

// DecodeError decodes an error body and checks that it is an OpenAI error
// object: a message and a type.
func DecodeError(b []byte) (Error, error) {
	var e Error
	if err := json.Unmarshal(b, &e); err != nil {
		return e, fmt.Errorf("error body is not JSON: %v: %.300s", err, b)
	}
	if e.Error.Message == "" || e.Error.Type == "" {
		return e, fmt.Errorf("error object without message or type: %.300s", b)
	}
	return e, nil
}

// Stream is a parsed event stream.
type Stream struct {
	Text   string // the text chunks, concatenated
	Finish string // the finish_reason of the last chunk that had one
	Chunks int    // chunks that carried text
	Usage  *Usage // from the usage chunk (stream_options.include_usage)
	Error  *Error // the error event that ended the stream, if one did
}

// ParseSSE parses a completions event stream strictly: only "data: " lines
// and blank lines, each event a JSON chunk, ending with "data: [DONE]" and
// nothing after it, or ending early with an error event.
func ParseSSE(b []byte) (Stream, error) {
	var st Stream
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	done := false
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			return st, fmt.Errorf("not an SSE data line: %q", line)
		}
		if done || st.Error != nil {
			return st, fmt.Errorf("data after the end of the stream: %q", line)
		}
		if data == "[DONE]" {
			done = true
			continue
		}
		if strings.HasPrefix(data, `{"error"`) {
			e, err := DecodeError([]byte(data))
			if err != nil {
				return st, err
			}
			st.Error = &e
			continue
		}
		c, err := DecodeCompletion([]byte(data))
		if err != nil {
			return st, err
		}
		if c.Usage != nil {
			st.Usage = c.Usage
		}
		if len(c.Choices) == 0 {
			continue // the usage chunk
		}
		if tx := c.Text(); tx != "" {
			st.Text += tx
			st.Chunks++
		}
		if f := c.Finish(); f != "" {
			st.Finish = f
		}
	}
	if err := sc.Err(); err != nil {
		return st, err
	}
	if !done && st.Error == nil {
		return st, fmt.Errorf("the stream did not end with [DONE]: %.300s", b)
	}
	return st, nil
}

// Check tells whether an answer to method path is well formed: a JSON error
// object for every status >= 400; for a 200, the document the path serves
// (the page, the health JSON, the model list, a completion or an event
// stream). It says nothing about whether the status was the right one.
func Check(method, path string, status int, h http.Header, body []byte) error {
	mt, _, _ := mime.ParseMediaType(h.Get("Content-Type"))
	if status >= 400 {
		if mt != "application/json" {
			return fmt.Errorf("%d with Content-Type %q, want application/json", status, h.Get("Content-Type"))
		}
		_, err := DecodeError(body)
		return err
	}
	if status != http.StatusOK {
		return fmt.Errorf("status %d", status)
	}
	get := method == http.MethodGet || method == http.MethodHead
	switch {
	case path == "/" && get && mt == "text/html":
		if !bytes.Contains(body, []byte("<form")) {
			return errors.New("the demo page has no form")
		}
		return nil
	case (path == "/" || path == "/health") && get && mt == "application/json":
		var doc struct {
			Status string `json:"status"`
		}
		if err := json.Unmarshal(body, &doc); err != nil || doc.Status != "ok" {
			return fmt.Errorf("not a health document: %v: %.300s", err, body)
		}
		return nil
	case path == "/v1/models" && get && mt == "application/json":
		var doc struct {
			Object string            `json:"object"`
			Data   []json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(body, &doc); err != nil || doc.Object != "list" || len(doc.Data) != 1 {
			return fmt.Errorf("not a model list: %v: %.300s", err, body)
		}
		return nil
	case (path == "/v1/completions" || path == "/v1/chat/completions") && method == http.MethodPost:
		object := "text_completion"
		if path == "/v1/chat/completions" {
			object = "chat.completion"
		}
		switch mt {
		case "application/json":
			c, err := DecodeCompletion(body)
			if err != nil {
				return err
			}
			if c.Object != object || len(c.Choices) != 1 || c.Finish() == "" || c.Usage == nil {
				return fmt.Errorf("not a %s: %.300s", object, body)
			}
			return nil
		case "text/event-stream":
			_, err := ParseSSE(body)
			return err
		}
	}
	return fmt.Errorf("%s %s: 200 with Content-Type %q", method, path, h.Get("Content-Type"))
}
