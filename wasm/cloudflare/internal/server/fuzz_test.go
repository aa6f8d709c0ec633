package server

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/picolm/picolm-wasm/wasm/cloudflare/internal/apitest"
)

// FuzzHandler sends the whole handler arbitrary requests: method, path,
// headers ("Name: value" lines) and body. Every answer must come within a
// bounded time (a hang fails it), be well formed (apitest.Check: a JSON
// error object, or the document the path serves) and be a client error at
// worst: no request is the server's fault, and none may panic.
func FuzzHandler(f *testing.F) {
	s, _ := newServer(f, Config{Context: 64, MaxTokensCap: 4, DefaultMaxTokens: 2, MaxBodyBytes: 16 << 10, Sessions: 2})
	const ctJSON = "Content-Type: application/json\n"
	for _, seed := range []struct{ method, path, header, body string }{
		{"POST", "/v1/completions", ctJSON, `{"prompt":"Once upon a time","max_tokens":3,"temperature":0}`},
		{"POST", "/v1/completions", ctJSON, `{"prompt":["Once"],"stream":true,"stream_options":{"include_usage":true},"stop":["a","b"]}`},
		{"POST", "/v1/chat/completions", ctJSON, `{"messages":[{"role":"system","content":"S"},{"role":"user","content":[{"type":"text","text":"hi"}]}],"max_completion_tokens":2}`},
		{"POST", "/v1/chat/completions", ctJSON, `{"messages":[{"role":"user","content":"{"}],"response_format":{"type":"json_object"},"stream":true,"seed":3,"temperature":1.5,"top_k":5,"top_p":0.5,"min_p":0.1}`},
		{"POST", "/v1/completions", ctJSON, nested("a", 4500, false, "")},
		{"POST", "/v1/completions", ctJSON, nested("a", 5000, true, "1")},
		{"POST", "/v1/completions", ctJSON, `{"prompt":"a","logprobs":5,"echo":true,"best_of":2,"suffix":"x"}`},
		{"POST", "/v1/chat/completions", ctJSON, `{"messages":[{"role":"user","content":"a"}],"tools":[{"type":"function"}],"frequency_penalty":"x"}`},
		{"POST", "/v1/completions", ctJSON, `{"prompt":"a","temperature":1e309,"max_tokens":1e20,"n":5}`},
		{"POST", "/v1/completions", "Content-Type: text/plain\n", `{"prompt":"a"}`},
		{"POST", "/v1/completions", ctJSON + "Content-Length: 99999999\n", `{"prompt":"a"}`},
		{"POST", "/v1/chat/completions", ctJSON, `{"messages":[{"role":"user","content":"a"}],"max_tokens":4,"response_format":{"type":"json_schema","json_schema":{"name":"s","schema":{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}}}}`},
		{"POST", "/v1/chat/completions", ctJSON, `{"messages":[{"role":"user","content":"a"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"x":{"enum":[1,2]}}}}}],"tool_choice":"required","stream":true}`},
		{"POST", "/v1/chat/completions", ctJSON, `{"messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"1"}],"logprobs":true,"top_logprobs":20,"stream":true}`},
		{"POST", "/v1/completions", ctJSON, `{"prompt":"a","grammar":"root ::= [0-9]+ | \"x\" root"}`},
		{"POST", "/v1/embeddings", ctJSON, `{"input":["a",""],"encoding_format":"base64"}`},
		{"POST", "/v1/embeddings", ctJSON, `{"input":[[1,2,3],[4]],"dimensions":64}`},
		{"GET", "/", "Accept: application/json\n", ""},
		{"GET", "/", "Accept: text/html\n", ""},
		{"HEAD", "/health", "", ""},
		{"GET", "/v1/models", "", ""},
		{"DELETE", "/v1/completions", "", ""},
		{"GET", "/../etc/passwd", "", ""},
	} {
		f.Add(seed.method, seed.path, seed.header, []byte(seed.body))
	}
	f.Fuzz(func(t *testing.T, method, path, header string, body []byte) {
		r := &http.Request{
			Method:        method,
			URL:           &url.URL{Path: path},
			Header:        http.Header{},
			Body:          io.NopCloser(bytes.NewReader(body)),
			ContentLength: int64(len(body)),
		}
		for _, line := range strings.Split(header, "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok {
				r.Header.Add(strings.TrimSpace(k), strings.TrimSpace(v))
			}
		}
		if n, err := strconv.ParseInt(r.Header.Get("Content-Length"), 10, 64); err == nil && n >= 0 {
			// As net/http does: the body is what the length announces.
			r.ContentLength = n
			r.Body = io.NopCloser(io.LimitReader(bytes.NewReader(body), n))
		}
		r = r.WithContext(t.Context())
		w := httptest.NewRecorder()
		done := make(chan any, 1)
		go func() {
			defer func() { done <- recover() }()
			s.ServeHTTP(w, r)
		}()
		select {
		case p := <-done:
			if p != nil {
				t.Fatalf("panic: %v", p)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s %q: no answer in 30 s", method, path)
		}
		if w.Code >= 500 {
			t.Fatalf("%s %q: %d %s", method, path, w.Code, w.Body)
		}
		if err := apitest.Check(method, path, w.Code, w.Header(), w.Body.Bytes()); err != nil {
			t.Fatalf("%s %q %q: %v", method, path, body, err)
		}
	})
}

// FuzzCheckDepth compares checkDepth's one-pass count with the depth a
// JSON tokenizer reaches, on every valid JSON text.
func FuzzCheckDepth(f *testing.F) {
	for _, s := range []string{`{}`, `[[[]]]`, `{"a":[{"b":"[[["}]}`, `"\\\"["`, `[1,{"x":{"y":[]}}]`, nested("a", 10, true, "1")} {
		f.Add([]byte(s), 3)
	}
	f.Fuzz(func(t *testing.T, b []byte, limit int) {
		if limit < 0 || limit > 100 {
			return
		}
		aerr := checkDepth(b, limit)
		if !json.Valid(b) {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		depth, deepest := 0, 0
		for {
			tok, err := dec.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("valid JSON %q: %v", b, err)
			}
			switch tok {
			case json.Delim('['), json.Delim('{'):
				depth++
				deepest = max(deepest, depth)
			case json.Delim(']'), json.Delim('}'):
				depth--
			}
		}
		if (aerr != nil) != (deepest > limit) {
			t.Fatalf("%q: depth %d, limit %d: checkDepth says %v", b, deepest, limit, aerr)
		}
	})
}
