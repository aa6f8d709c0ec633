package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/picolm/picolm-wasm/engine"
	"github.com/picolm/picolm-wasm/engine/chat"
	"github.com/picolm/picolm-wasm/wasm/cloudflare/internal/apitest"
	"github.com/picolm/picolm-wasm/wasm/cloudflare/internal/openai"
	"github.com/picolm/picolm-wasm/wasm/internal/defaultmodel"
)

func loadModel(t testing.TB) *engine.Model { return loadGGUF(t, defaultmodel.Bytes()) }

func loadGGUF(t testing.TB, b []byte) *engine.Model {
	t.Helper()
	return apitest.LoadModel(t, b)
}

func newServer(t testing.TB, cfg Config) (*Server, *engine.Model) {
	t.Helper()
	m := loadModel(t)
	s, err := New(m, cfg, 0)
	if err != nil {
		t.Fatal(err)
	}
	return s, m
}

// reference generates greedily with the engine directly, as the server
// should: BOS + prompt, n tokens.
func reference(t testing.TB, m *engine.Model, prompt string, n int) string {
	t.Helper()
	return apitest.Greedy(t, m, prompt, n)
}

func do(t testing.TB, h http.Handler, method, path, body string, hdr ...string) *httptest.ResponseRecorder {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, r)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

func wantError(t *testing.T, w *httptest.ResponseRecorder, status int, param string) openai.Error {
	t.Helper()
	if w.Code != status {
		t.Fatalf("status %d, want %d; body %s", w.Code, status, w.Body)
	}
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	e, err := apitest.DecodeError(w.Body.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Param(); got != param {
		t.Errorf("param %q, want %q (%s)", got, param, e.Error.Message)
	}
	return e
}

func TestHealthAndPage(t *testing.T) {
	s, m := newServer(t, Config{Context: 256, MaxTokensCap: 64})
	for _, tc := range []struct{ path, accept string }{{"/health", ""}, {"/", "application/json"}, {"/", "application/json;q=0.9, */*"}} {
		w := do(t, s, "GET", tc.path, "", "Accept", tc.accept)
		if w.Code != 200 || w.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("%s (Accept %q): %d %s", tc.path, tc.accept, w.Code, w.Header().Get("Content-Type"))
		}
		var h Health
		if err := json.Unmarshal(w.Body.Bytes(), &h); err != nil {
			t.Fatal(err)
		}
		if h.Status != "ok" || h.Model.Layers != m.Config.Layers || h.Model.Dim != m.Config.Dim || h.Model.VocabSize != m.Config.VocabSize ||
			h.Model.ID != s.Config().ModelID || h.Limits.Context != 256 || h.Limits.MaxTokensCap != 64 || h.Model.Source != "embedded" {
			t.Errorf("health %+v", h)
		}
		if mem := h.Instance.Memory; mem.HeapAlloc == 0 || mem.Sys < mem.HeapAlloc || mem.HeapSys < mem.HeapAlloc {
			t.Errorf("memory %+v", mem)
		}
	}
	w := do(t, s, "GET", "/", "", "Accept", "text/html,application/xhtml+xml,application/json;q=0.9")
	if w.Code != 200 || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") || !strings.Contains(w.Body.String(), "<form") {
		t.Fatalf("demo page: %d %q", w.Code, w.Header().Get("Content-Type"))
	}
	w = do(t, s, "GET", "/v1/models", "")
	if w.Code != 200 || !strings.Contains(w.Body.String(), `"id":"`+s.Config().ModelID+`"`) {
		t.Fatalf("models: %d %s", w.Code, w.Body)
	}
}

func TestRoutingErrors(t *testing.T) {
	s, _ := newServer(t, Config{})
	wantError(t, do(t, s, "GET", "/nope", ""), 404, "")
	wantError(t, do(t, s, "POST", "/v1/completion", `{}`), 404, "")
	w := do(t, s, "GET", "/v1/completions", "")
	wantError(t, w, 405, "")
	if w.Header().Get("Allow") != "POST" {
		t.Errorf("Allow %q", w.Header().Get("Allow"))
	}
	wantError(t, do(t, s, "DELETE", "/health", ""), 405, "")
	wantError(t, do(t, s, "POST", "/", `{}`), 405, "")
	wantError(t, do(t, s, "PUT", "/v1/chat/completions", `{}`), 405, "")
}

func TestBadRequests(t *testing.T) {
	s, _ := newServer(t, Config{Context: 64, MaxStops: 2})
	long := strings.Repeat("once upon a time there was a dog ", 40)
	for _, tc := range []struct {
		path, body string
		status     int
		param      string
	}{
		{"/v1/completions", `{"prompt": "hi"`, 400, ""},
		{"/v1/completions", `not json`, 400, ""},
		{"/v1/completions", ``, 400, ""},
		{"/v1/completions", `null`, 400, ""},
		{"/v1/completions", `[1,2]`, 400, ""},
		{"/v1/completions", `{"prompt":"a"} {"prompt":"b"}`, 400, ""},
		{"/v1/completions", `{"prompt": 5}`, 400, "prompt"},
		{"/v1/completions", `{"prompt": ["a","b"]}`, 400, "prompt"},
		{"/v1/completions", `{}`, 400, "prompt"},
		{"/v1/completions", `{"prompt":"a","max_tokens":"10"}`, 400, "max_tokens"},
		{"/v1/completions", `{"prompt":"a","max_tokens":1.5}`, 400, "max_tokens"},
		{"/v1/completions", `{"prompt":"a","max_tokens":0}`, 400, "max_tokens"},
		{"/v1/completions", `{"prompt":"a","temperature":"hot"}`, 400, "temperature"},
		{"/v1/completions", `{"prompt":"a","temperature":3}`, 400, "temperature"},
		{"/v1/completions", `{"prompt":"a","top_p":0}`, 400, "top_p"},
		{"/v1/completions", `{"prompt":"a","seed":"x"}`, 400, "seed"},
		{"/v1/completions", `{"prompt":"a","stream":"yes"}`, 400, "stream"},
		{"/v1/completions", `{"prompt":"a","stop":5}`, 400, "stop"},
		{"/v1/completions", `{"prompt":"a","stop":["a","b","c"]}`, 400, "stop"},
		{"/v1/completions", `{"prompt":"a","stop":[""]}`, 400, "stop"},
		{"/v1/completions", `{"prompt":"a","n":2}`, 400, "n"},
		{"/v1/completions", `{"prompt":"a","response_format":{"type":"json_schema"}}`, 400, "response_format.json_schema"},
		{"/v1/completions", `{"prompt":"a","response_format":{"type":"xml"}}`, 400, "response_format.type"},
		{"/v1/completions", `{"prompt":"a","stream_options":{"include_usage":true}}`, 400, "stream_options"},
		{"/v1/completions", `{"prompt":"a","model":"gpt-4"}`, 404, "model"},
		{"/v1/completions", `{"messages":[{"role":"user","content":"a"}]}`, 400, "messages"},
		{"/v1/completions", `{"prompt":"` + long + `"}`, 400, "prompt"},
		{"/v1/chat/completions", `{"prompt":"a"}`, 400, "prompt"},
		{"/v1/chat/completions", `{}`, 400, "messages"},
		{"/v1/chat/completions", `{"messages":[]}`, 400, "messages"},
		{"/v1/chat/completions", `{"messages":"hi"}`, 400, "messages"},
		{"/v1/chat/completions", `{"messages":[{"role":"robot","content":"a"}]}`, 400, "messages[0].role"},
		{"/v1/chat/completions", `{"messages":[{"content":"a"}]}`, 400, "messages[0].role"},
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":5}]}`, 400, "messages[0].content"},
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":[{"type":"image_url"}]}]}`, 400, "messages[0].content[0].type"},
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":"` + long + `"}]}`, 400, "messages"},
	} {
		t.Run(tc.body, func(t *testing.T) {
			wantError(t, do(t, s, "POST", tc.path, tc.body), tc.status, tc.param)
		})
	}
	e := wantError(t, do(t, s, "POST", "/v1/completions", `{"prompt":"`+long+`"}`), 400, "prompt")
	if e.Error.Code == nil || *e.Error.Code != "context_length_exceeded" {
		t.Errorf("code %v", e.Error.Code)
	}
	wantError(t, do(t, s, "POST", "/v1/completions", `{"prompt":"a"}`, "Content-Type", "text/plain"), 415, "")
}

func TestBodyLimit(t *testing.T) {
	s, _ := newServer(t, Config{MaxBodyBytes: 100})
	big := `{"prompt":"` + strings.Repeat("a", 200) + `"}`
	wantError(t, do(t, s, "POST", "/v1/completions", big), 413, "")
	// Without a Content-Length (chunked upload) the limit is enforced while reading.
	req := httptest.NewRequest("POST", "/v1/completions", io.MultiReader(strings.NewReader(big)))
	req.ContentLength = -1
	req.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	s.ServeHTTP(w, req)
	wantError(t, w, 413, "")
	// Just under the limit is fine.
	ok := `{"prompt":"a","max_tokens":1}`
	if w := do(t, s, "POST", "/v1/completions", ok); w.Code != 200 {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
}

func TestCompletionGreedyMatchesEngine(t *testing.T) {
	s, m := newServer(t, Config{})
	for _, prompt := range []string{"Once upon a time", "The cat", "Lily and Tom went"} {
		want := reference(t, m, prompt, 30)
		w := do(t, s, "POST", "/v1/completions", fmt.Sprintf(`{"prompt":%q,"max_tokens":30,"temperature":0}`, prompt))
		if w.Code != 200 {
			t.Fatalf("%d %s", w.Code, w.Body)
		}
		c := apitest.MustCompletion(t, w.Body.Bytes())
		if c.Text() != want {
			t.Errorf("%q: got %q, want %q", prompt, c.Text(), want)
		}
		if c.Object != "text_completion" || !strings.HasPrefix(c.ID, "cmpl-") || c.Model != s.Config().ModelID {
			t.Errorf("shape: %+v", c)
		}
		if n := len(m.Tokenizer.Encode(prompt, true)); c.Usage == nil || c.Usage.PromptTokens != n || c.Usage.CompletionTokens != 30 || c.Usage.TotalTokens != n+30 {
			t.Errorf("usage %+v", c.Usage)
		}
		if *c.Choices[0].FinishReason != "length" {
			t.Errorf("finish %q", *c.Choices[0].FinishReason)
		}
	}
	// The same prompt again reuses the session's cache and gives the same text.
	w1 := do(t, s, "POST", "/v1/completions", `{"prompt":"The cat","max_tokens":20,"temperature":0}`)
	w2 := do(t, s, "POST", "/v1/completions", `{"prompt":"The cat","max_tokens":20,"temperature":0}`)
	c1, c2 := apitest.MustCompletion(t, w1.Body.Bytes()), apitest.MustCompletion(t, w2.Body.Bytes())
	if c1.Text() != c2.Text() || c2.Usage.PromptTokensDetails.CachedTokens == 0 {
		t.Errorf("repeat: %q vs %q, cached %d", c1.Text(), c2.Text(), c2.Usage.PromptTokensDetails.CachedTokens)
	}
	// A seeded sampled completion is reproducible; another seed differs.
	a := apitest.MustCompletion(t, do(t, s, "POST", "/v1/completions", `{"prompt":"The dog","max_tokens":40,"temperature":1,"seed":7}`).Body.Bytes()).Text()
	b := apitest.MustCompletion(t, do(t, s, "POST", "/v1/completions", `{"prompt":"The dog","max_tokens":40,"temperature":1,"seed":7}`).Body.Bytes()).Text()
	c := apitest.MustCompletion(t, do(t, s, "POST", "/v1/completions", `{"prompt":"The dog","max_tokens":40,"temperature":1,"seed":8}`).Body.Bytes()).Text()
	if a != b || a == c {
		t.Errorf("seeds: %q %q %q", a, b, c)
	}
}

func TestMaxTokensCap(t *testing.T) {
	s, _ := newServer(t, Config{MaxTokensCap: 8, DefaultMaxTokens: 5})
	c := apitest.MustCompletion(t, do(t, s, "POST", "/v1/completions", `{"prompt":"Once upon a time","max_tokens":100000,"temperature":0}`).Body.Bytes())
	if c.Usage.CompletionTokens != 8 || *c.Choices[0].FinishReason != "length" {
		t.Errorf("capped: %+v %q", c.Usage, *c.Choices[0].FinishReason)
	}
	c = apitest.MustCompletion(t, do(t, s, "POST", "/v1/completions", `{"prompt":"Once upon a time","temperature":0}`).Body.Bytes())
	if c.Usage.CompletionTokens != 5 {
		t.Errorf("default: %+v", c.Usage)
	}
	// The context bounds generation too: finish_reason "length".
	s, m := newServer(t, Config{Context: 12, MaxTokensCap: 100})
	n := len(m.Tokenizer.Encode("Once upon a time", true))
	c = apitest.MustCompletion(t, do(t, s, "POST", "/v1/completions", `{"prompt":"Once upon a time","max_tokens":100,"temperature":0}`).Body.Bytes())
	if c.Usage.CompletionTokens != 12-n || *c.Choices[0].FinishReason != "length" {
		t.Errorf("context: %+v %q", c.Usage, *c.Choices[0].FinishReason)
	}
}

func TestStopSequences(t *testing.T) {
	s, m := newServer(t, Config{})
	full := reference(t, m, "Once upon a time", 60)
	// A stop sequence from the middle of the greedy text: the answer is
	// everything before its first occurrence.
	for _, stop := range []string{full[20:26], full[35:37], "zzz-never"} {
		want, reason := full, "length"
		if i := strings.Index(full, stop); i >= 0 {
			want, reason = full[:i], "stop"
		}
		for _, stream := range []bool{false, true} {
			body := fmt.Sprintf(`{"prompt":"Once upon a time","max_tokens":60,"temperature":0,"stop":[%q,"qqqq"],"stream":%v}`, stop, stream)
			w := do(t, s, "POST", "/v1/completions", body)
			var got, finish string
			if stream {
				got, finish, _ = readSSE(t, w.Body.Bytes())
			} else {
				c := apitest.MustCompletion(t, w.Body.Bytes())
				got, finish = c.Text(), *c.Choices[0].FinishReason
			}
			if got != want || finish != reason {
				t.Errorf("stop %q stream=%v: got %q (%s), want %q (%s)", stop, stream, got, finish, want, reason)
			}
		}
	}
	// A single string is accepted too.
	c := apitest.MustCompletion(t, do(t, s, "POST", "/v1/completions", fmt.Sprintf(`{"prompt":"Once upon a time","max_tokens":60,"temperature":0,"stop":%q}`, full[20:26])).Body.Bytes())
	if c.Text() != full[:strings.Index(full, full[20:26])] {
		t.Errorf("string stop: %q", c.Text())
	}
}

// readSSE parses an event stream: the concatenated text, the finish reason
// and the number of text chunks.
func readSSE(t testing.TB, b []byte) (text, finish string, chunks int) {
	t.Helper()
	st := apitest.MustStream(t, b)
	return st.Text, st.Finish, st.Chunks
}

// flushRecorder records what was written between flushes.
type flushRecorder struct {
	*httptest.ResponseRecorder
	pending bytes.Buffer
	flushed []string
}

func (f *flushRecorder) Write(p []byte) (int, error) {
	f.pending.Write(p)
	return f.ResponseRecorder.Write(p)
}
func (f *flushRecorder) Flush() {
	f.flushed = append(f.flushed, f.pending.String())
	f.pending.Reset()
}

func TestStreamingFlushesPerToken(t *testing.T) {
	s, m := newServer(t, Config{})
	want := reference(t, m, "Once upon a time", 40)
	for _, path := range []string{"/v1/completions", "/v1/chat/completions"} {
		body := `{"prompt":"Once upon a time","max_tokens":40,"temperature":0,"stream":true,"stream_options":{"include_usage":true}}`
		if path == "/v1/chat/completions" {
			body = `{"messages":[{"role":"user","content":"hi"}],"max_tokens":40,"temperature":0,"stream":true,"stream_options":{"include_usage":true}}`
		}
		req := httptest.NewRequest("POST", path, strings.NewReader(body))
		w := &flushRecorder{ResponseRecorder: httptest.NewRecorder()}
		s.ServeHTTP(w, req)
		if w.Code != 200 || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
			t.Fatalf("%s: %d %q", path, w.Code, w.Header().Get("Content-Type"))
		}
		if w.pending.Len() != 0 {
			t.Errorf("%s: %q written after the last flush", path, w.pending.String())
		}
		// Every flush carries exactly one event.
		for _, f := range w.flushed {
			if strings.Count(f, "\n\n") != 1 || !strings.HasPrefix(f, "data: ") {
				t.Errorf("%s: flush of %q", path, f)
			}
		}
		text, finish, chunks := readSSE(t, w.Body.Bytes())
		if chunks < 20 || finish != "length" {
			t.Errorf("%s: %d chunks, finish %q", path, chunks, finish)
		}
		if path == "/v1/completions" && text != want {
			t.Errorf("stream text %q, want %q", text, want)
		}
		if !strings.Contains(w.Body.String(), `"prompt_tokens"`) {
			t.Errorf("%s: no usage chunk", path)
		}
		if path == "/v1/chat/completions" && !strings.Contains(w.flushed[0], `"role":"assistant"`) {
			t.Errorf("first chat chunk %q", w.flushed[0])
		}
	}
}

func TestChat(t *testing.T) {
	// stories260K has no chat template: the plain transcript.
	s, m := newServer(t, Config{})
	msgs := []chat.Message{{Role: "system", Content: "Be kind."}, {Role: "user", Content: "Tell a story."}, {Role: "assistant", Content: "Once"}, {Role: "user", Content: "More."}}
	plain := chat.Plain(msgs)
	body := `{"messages":[{"role":"system","content":"Be kind."},{"role":"user","content":[{"type":"text","text":"Tell a "},{"type":"text","text":"story."}]},
		{"role":"assistant","content":"Once"},{"role":"user","content":"More."}],"max_tokens":25,"temperature":0}`
	w := do(t, s, "POST", "/v1/chat/completions", body)
	if w.Code != 200 {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	c := apitest.MustCompletion(t, w.Body.Bytes())
	if c.Object != "chat.completion" || !strings.HasPrefix(c.ID, "chatcmpl-") || c.Choices[0].Message == nil || c.Choices[0].Message.Role != "assistant" {
		t.Fatalf("shape %s", w.Body)
	}
	if want := reference(t, m, plain, 25); c.Text() != want {
		t.Errorf("chat text %q, want %q", c.Text(), want)
	}
	if n := len(m.Tokenizer.Encode(plain, true)); c.Usage.PromptTokens != n {
		t.Errorf("prompt tokens %d, want %d", c.Usage.PromptTokens, n)
	}
	if h := health(t, s); h.Model.ChatTemplate {
		t.Error("health: stories260K has a chat template")
	}

	// The model's own template (here ChatML): the prompt the server builds
	// is the one it formats.
	src, ok := chat.Builtin("chatml")
	if !ok {
		t.Fatal("no chatml builtin")
	}
	b, err := defaultmodel.WithChatTemplate(src)
	if err != nil {
		t.Fatal(err)
	}
	mt := loadGGUF(t, b)
	st, err := New(mt, Config{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\n"
	if got, err := mt.Chat().Format([]chat.Message{{Role: "system", Content: "S"}, {Role: "user", Content: "U"}}); got != want || err != nil {
		t.Errorf("chatml: %q, %v, want %q", got, err, want)
	}
	c = apitest.MustCompletion(t, do(t, st, "POST", "/v1/chat/completions", `{"messages":[{"role":"system","content":"S"},{"role":"user","content":"U"}],"max_tokens":3,"temperature":0}`).Body.Bytes())
	if n := len(mt.Tokenizer.Encode(want, true)); c.Usage.PromptTokens != n {
		t.Errorf("templated prompt tokens %d, want %d", c.Usage.PromptTokens, n)
	}
	if h := health(t, st); !h.Model.ChatTemplate {
		t.Error("health: the chat template is not reported")
	}
}

// health returns the server's health document.
func health(t *testing.T, s *Server) Health {
	t.Helper()
	var h Health
	if err := json.Unmarshal(do(t, s, "GET", "/health", "").Body.Bytes(), &h); err != nil {
		t.Fatal(err)
	}
	return h
}

func TestJSONMode(t *testing.T) {
	s, _ := newServer(t, Config{})
	for seed := range 5 {
		for _, path := range []string{"/v1/completions", "/v1/chat/completions"} {
			body := fmt.Sprintf(`{"prompt":"Once upon a time","max_tokens":60,"temperature":1,"seed":%d,"response_format":{"type":"json_object"}}`, seed)
			if path == "/v1/chat/completions" {
				body = fmt.Sprintf(`{"messages":[{"role":"user","content":"Give JSON"}],"max_tokens":60,"temperature":1,"seed":%d,"response_format":{"type":"json_object"}}`, seed)
			}
			c := apitest.MustCompletion(t, do(t, s, "POST", path, body).Body.Bytes())
			if !json.Valid([]byte(c.Text())) {
				t.Errorf("%s seed %d: not JSON: %q (%s)", path, seed, c.Text(), *c.Choices[0].FinishReason)
			}
		}
	}
}

// TestConcurrent fires 20 requests at once at a real HTTP server with fewer
// sessions than requests: each gets its own greedy completion, equal to the
// one it gets alone.
func TestConcurrent(t *testing.T) {
	s, m := newServer(t, Config{Sessions: 3})
	ts := httptest.NewServer(s)
	defer ts.Close()
	prompts := []string{"Once upon a time", "The cat", "Lily", "Tom had a ball", "The sun"}
	want := make(map[string]string)
	for _, p := range prompts {
		want[p] = reference(t, m, p, 24)
	}
	for _, err := range apitest.Concurrent(ts.Client(), ts.URL+"/v1/completions", 20, 24, prompts, want) {
		t.Error(err)
	}
	if n := s.pool.idleCount(); n > 3 {
		t.Errorf("%d idle sessions, want at most 3", n)
	}
}
