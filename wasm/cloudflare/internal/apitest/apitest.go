// Package apitest is the Worker's OpenAI-style API as a client sees it, for
// the tests: decoding answers into the wire types (internal/openai), the
// server-sent-event parser, and Check, which tells a well-formed answer from
// a malformed one; and the engine's own answers to compare with (LoadModel,
// Greedy) and a burst of concurrent requests (Concurrent). internal/server's
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
	"testing"

	"github.com/picolm/picolm-wasm/wasm/cloudflare/internal/openai"
)

// DecodeCompletion decodes a JSON completion.
func DecodeCompletion(b []byte) (openai.Completion, error) {
	var c openai.Completion
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("not a completion: %v: %.300s", err, b)
	}
	return c, nil
}

// DecodeError decodes an error body and checks that it is an OpenAI error
// object: a message and a type.
func DecodeError(b []byte) (openai.Error, error) {
	var e openai.Error
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
	Text   string        // the text chunks, concatenated
	Finish string        // the finish_reason of the last chunk that had one
	Chunks int           // chunks that carried text
	Usage  *openai.Usage // from the usage chunk (stream_options.include_usage)
	Error  *openai.Error // the error event that ended the stream, if one did
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
	case path == "/v1/embeddings" && method == http.MethodPost && mt == "application/json":
		var e openai.Embeddings
		if err := json.Unmarshal(body, &e); err != nil || e.Object != "list" || len(e.Data) == 0 {
			return fmt.Errorf("not an embedding list: %v: %.300s", err, body)
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

// MustCompletion decodes a completion, failing t if b is not one.
func MustCompletion(t testing.TB, b []byte) openai.Completion {
	t.Helper()
	c, err := DecodeCompletion(b)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// MustStream parses an event stream, failing t unless it is well formed and
// ended with [DONE] (not an error event).
func MustStream(t testing.TB, b []byte) Stream {
	t.Helper()
	st, err := parseDone(b)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// parseDone is ParseSSE for a stream that must end with [DONE], not with an
// error event.
func parseDone(b []byte) (Stream, error) {
	st, err := ParseSSE(b)
	if err == nil && st.Error != nil {
		err = fmt.Errorf("the stream ended with an error: %s", st.Error.Error.Message)
	}
	return st, err
}
