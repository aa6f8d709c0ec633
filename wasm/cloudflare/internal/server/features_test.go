package server

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/picolm/picolm-wasm/engine"
	"github.com/picolm/picolm-wasm/engine/chat"
	"github.com/picolm/picolm-wasm/engine/grammar"
	"github.com/picolm/picolm-wasm/engine/sample"
	"github.com/picolm/picolm-wasm/gguf"
	"github.com/picolm/picolm-wasm/wasm/cloudflare/internal/apitest"
	"github.com/picolm/picolm-wasm/wasm/cloudflare/internal/openai"
	"github.com/picolm/picolm-wasm/wasm/internal/defaultmodel"
)

const weatherTool = `{"type":"function","function":{"name":"get_weather","description":"The weather","parameters":{"type":"object","properties":{"city":{"type":"string","maxLength":8},"unit":{"enum":["c","f"]}},"required":["city","unit"],"additionalProperties":false}}}`

// sseChunks decodes the chunks of an event stream (not the usage chunk).
func sseChunks(t *testing.T, b []byte) []openai.Completion {
	t.Helper()
	apitest.MustStream(t, b)
	var out []openai.Completion
	for _, line := range strings.Split(string(b), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		c := apitest.MustCompletion(t, []byte(data))
		if len(c.Choices) > 0 {
			out = append(out, c)
		}
	}
	return out
}

func TestJSONSchemaFormat(t *testing.T) {
	s, _ := newServer(t, Config{})
	schema := `{"type":"object","properties":{"name":{"type":"string","maxLength":6},"n":{"type":"integer","minimum":1,"maximum":9},"ok":{"type":"boolean"}},"required":["name","n","ok"],"additionalProperties":false}`
	g, err := grammar.FromJSONSchema([]byte(schema))
	if err != nil {
		t.Fatal(err)
	}
	for seed := range 6 {
		body := fmt.Sprintf(`{"messages":[{"role":"user","content":"data"}],"max_tokens":120,"temperature":1,"seed":%d,"response_format":{"type":"json_schema","json_schema":{"name":"rec","strict":true,"schema":%s}}}`, seed, schema)
		w := do(t, s, "POST", "/v1/chat/completions", body)
		c := apitest.MustCompletion(t, w.Body.Bytes())
		var v struct {
			Name *string
			N    *int
			OK   *bool
		}
		text := c.Text()
		if err := json.Unmarshal([]byte(text), &v); err != nil || v.Name == nil || v.N == nil || v.OK == nil || *v.N < 1 || *v.N > 9 || len([]rune(*v.Name)) > 6 {
			t.Errorf("seed %d: %q does not follow the schema (%v)", seed, text, err)
		}
		if !g.Recognise(text) {
			t.Errorf("seed %d: %q is not a sentence of the schema's grammar", seed, text)
		}
		if c.Finish() != "stop" {
			t.Errorf("seed %d: finish %q", seed, c.Finish())
		}
	}
	// The grammar extension, on completions too.
	c := apitest.MustCompletion(t, do(t, s, "POST", "/v1/completions", `{"prompt":"Once","max_tokens":20,"temperature":1,"seed":2,"grammar":"root ::= (\"yes\" | \"no\") \" \" [a-z]{2,5}"}`).Body.Bytes())
	if gg, _ := grammar.ParseGBNF(`root ::= ("yes" | "no") " " [a-z]{2,5}`); !gg.Recognise(c.Text()) {
		t.Errorf("grammar: %q", c.Text())
	}
	// A schema whose shortest instance does not fit max_tokens: a 400 before any token.
	e := wantError(t, do(t, s, "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"max_tokens":2,"response_format":{"type":"json_schema","json_schema":{"name":"rec","schema":`+schema+`}}}`), 400, "max_tokens")
	if !strings.Contains(e.Error.Message, "cannot be completed") {
		t.Errorf("budget: %s", e.Error.Message)
	}
}

func TestToolCalls(t *testing.T) {
	s, _ := newServer(t, Config{})
	for _, choice := range []string{`"required"`, `{"type":"function","function":{"name":"get_weather"}}`} {
		for seed := range 4 {
			req := fmt.Sprintf(`{"messages":[{"role":"user","content":"Weather in Rome?"}],"tools":[%s,{"type":"function","function":{"name":"noop"}}],"tool_choice":%s,"max_tokens":100,"temperature":1,"seed":%d}`, weatherTool, choice, seed)
			w := do(t, s, "POST", "/v1/chat/completions", req)
			c := apitest.MustCompletion(t, w.Body.Bytes())
			msg := c.Choices[0].Message
			if c.Finish() != "tool_calls" || msg.Content != nil || len(msg.ToolCalls) == 0 {
				t.Fatalf("%s seed %d: %s", choice, seed, w.Body)
			}
			for i, tc := range msg.ToolCalls {
				if tc.Type != "function" || tc.ID != callID(c.ID, i) || tc.Index != nil {
					t.Errorf("call %d shape %+v", i, tc)
				}
				switch tc.Function.Name {
				case "get_weather":
					var a struct{ City, Unit *string }
					if json.Unmarshal([]byte(tc.Function.Arguments), &a) != nil || a.City == nil || a.Unit == nil || (*a.Unit != "c" && *a.Unit != "f") || len([]rune(*a.City)) > 8 {
						t.Errorf("arguments %q", tc.Function.Arguments)
					}
				case "noop":
					var a map[string]any
					if choice != `"required"` || json.Unmarshal([]byte(tc.Function.Arguments), &a) != nil || len(a) != 0 {
						t.Errorf("noop called with %q under %s", tc.Function.Arguments, choice)
					}
				default:
					t.Errorf("called %q", tc.Function.Name)
				}
			}
			// Streamed: the same calls, piece by piece in OpenAI's shape.
			sw := do(t, s, "POST", "/v1/chat/completions", strings.Replace(req, `"max_tokens"`, `"stream":true,"max_tokens"`, 1))
			var calls []openai.ToolCall
			finish := ""
			for _, ch := range sseChunks(t, sw.Body.Bytes()) {
				d := ch.Choices[0].Delta
				if f := ch.Finish(); f != "" {
					finish = f
				}
				for _, tc := range d.ToolCalls {
					if tc.Index == nil {
						t.Fatalf("a tool-call delta without index: %+v", tc)
					}
					if *tc.Index == len(calls) {
						if tc.ID == "" || tc.Type != "function" || tc.Function.Name == "" || tc.Function.Arguments != "" {
							t.Fatalf("first delta of a call %+v", tc)
						}
						calls = append(calls, openai.ToolCall{ID: tc.ID, Type: tc.Type, Function: tc.Function})
						continue
					}
					if *tc.Index != len(calls)-1 || tc.ID != "" || tc.Function.Name != "" {
						t.Fatalf("later delta %+v", tc)
					}
					calls[*tc.Index].Function.Arguments += tc.Function.Arguments
				}
			}
			if finish != "tool_calls" || len(calls) != len(msg.ToolCalls) {
				t.Fatalf("streamed %d calls (%s), whole %d", len(calls), finish, len(msg.ToolCalls))
			}
			for i := range calls {
				if calls[i].Function != msg.ToolCalls[i].Function {
					t.Errorf("streamed call %d %+v, whole %+v", i, calls[i].Function, msg.ToolCalls[i].Function)
				}
			}
		}
	}
}

// The call and its result go back through the template: a model whose
// template renders tools gets its own rendering (a short template here:
// Qwen2.5's system text alone overflows stories260K's 512 positions); the
// plain transcript the fallback.
func TestToolConversation(t *testing.T) {
	body := `{"messages":[{"role":"user","content":"Weather in Rome?"},
		{"role":"assistant","content":null,"tool_calls":[{"id":"call_9","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Rome\",\"unit\":\"c\"}"}}]},
		{"role":"tool","tool_call_id":"call_9","content":"21 degrees"}],
		"tools":[` + weatherTool + `],"tool_choice":"none","max_tokens":3,"temperature":0}`
	msgs := []chat.Message{
		{Role: "user", Content: "Weather in Rome?"},
		{Role: "assistant", ToolCalls: []chat.ToolCall{{ID: "call_9", Name: "get_weather", Arguments: `{"city":"Rome","unit":"c"}`}}},
		{Role: "tool", ToolCallID: "call_9", Content: "21 degrees"},
	}
	var tool struct {
		Function struct {
			Name, Description string
			Parameters        json.RawMessage
		}
	}
	if err := json.Unmarshal([]byte(weatherTool), &tool); err != nil {
		t.Fatal(err)
	}
	tools := []chat.Tool{{Name: tool.Function.Name, Description: tool.Function.Description, Parameters: tool.Function.Parameters}}

	native, err := defaultmodel.WithChatTemplate(toolTemplate)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []*engine.Model{loadModel(t), loadGGUF(t, native)} {
		s, err := New(m, Config{}, 0)
		if err != nil {
			t.Fatal(err)
		}
		want, err := m.Chat().FormatTools(msgs, tools)
		if err != nil {
			t.Fatal(err)
		}
		if m.Chat().Family() == "custom" {
			if a, b, c := m.Chat().NativeTools(); !a || !b || !c {
				t.Fatalf("the template renders tools %v, calls %v, results %v", a, b, c)
			}
			const p = "tool get_weather {\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\", \"maxLength\": 8}, \"unit\": {\"enum\": [\"c\", \"f\"]}}, \"required\": [\"city\", \"unit\"], \"additionalProperties\": false}\n" +
				"user: Weather in Rome?\nassistant: [call_9] get_weather{\"city\": \"Rome\", \"unit\": \"c\"}\ntool: (call_9) 21 degrees\nassistant:"
			if want != p {
				t.Errorf("native prompt\n%q\nwant\n%q", want, p)
			}
		}
		for _, part := range []string{"21 degrees", "get_weather", `"Rome"`} {
			if !strings.Contains(want, part) {
				t.Errorf("%s: the prompt %q lacks %q", m.Chat().Family(), want, part)
			}
		}
		w := do(t, s, "POST", "/v1/chat/completions", body)
		if w.Code != 200 {
			t.Fatalf("%s: %d %s", m.Chat().Family(), w.Code, w.Body)
		}
		c := apitest.MustCompletion(t, w.Body.Bytes())
		if n := len(m.Tokenizer.Encode(want, true)); c.Usage.PromptTokens != n {
			t.Errorf("%s: prompt tokens %d, want %d (%q)", m.Chat().Family(), c.Usage.PromptTokens, n, want)
		}
		if c.Choices[0].Message.ToolCalls != nil || c.Finish() == "tool_calls" {
			t.Errorf("tool_choice none called a tool")
		}
	}
}

// toolTemplate renders tools, calls and results itself.
const toolTemplate = `{% if tools %}{% for t in tools %}tool {{ t.function.name }} {{ t.function.parameters | tojson }}
{% endfor %}{% endif %}{% for m in messages %}{{ m.role }}: {% if m.tool_calls %}{% for c in m.tool_calls %}[{{ c.id }}] {{ c.function.name }}{{ c.function.arguments | tojson }}{% endfor %}{% elif m.role == 'tool' %}({{ m.tool_call_id }}) {{ m.content }}{% else %}{{ m.content }}{% endif %}{{ "\n" }}{% endfor %}{% if add_generation_prompt %}assistant:{% endif %}`

func TestEmbeddings(t *testing.T) {
	s, m := newServer(t, Config{})
	sess, err := m.NewSession(engine.SessionOptions{Context: 512, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	want := func(text string) []float32 {
		v := make([]float32, m.Config.Dim)
		if err := sess.Embed(m.Tokenizer.Encode(text, true), v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	w := do(t, s, "POST", "/v1/embeddings", `{"input":["Once upon a time","The dog"],"model":"`+s.cfg.ModelID+`"}`)
	var res struct {
		Object string
		Data   []struct {
			Object    string
			Index     int
			Embedding []float32
		}
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
			TotalTokens  int `json:"total_tokens"`
		}
	}
	if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil || w.Code != 200 {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	tokens := 0
	for i, text := range []string{"Once upon a time", "The dog"} {
		d := res.Data[i]
		if d.Index != i || d.Object != "embedding" || fmt.Sprint(d.Embedding) != fmt.Sprint(want(text)) {
			t.Errorf("input %d: %+v", i, d)
		}
		tokens += len(m.Tokenizer.Encode(text, true))
	}
	if res.Object != "list" || res.Usage.PromptTokens != tokens || res.Usage.TotalTokens != tokens {
		t.Errorf("usage %+v, want %d tokens", res.Usage, tokens)
	}
	// base64: the little-endian float32s.
	w = do(t, s, "POST", "/v1/embeddings", `{"input":"Once upon a time","encoding_format":"base64"}`)
	var b64 struct{ Data []struct{ Embedding string } }
	json.Unmarshal(w.Body.Bytes(), &b64)
	raw, err := base64.StdEncoding.DecodeString(b64.Data[0].Embedding)
	if err != nil || len(raw) != 4*m.Config.Dim {
		t.Fatalf("base64 %v, %d bytes", err, len(raw))
	}
	for i, v := range want("Once upon a time") {
		if got := math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])); got != v {
			t.Fatalf("base64 [%d] = %v, want %v", i, got, v)
		}
	}
	// Token ids.
	ids := m.Tokenizer.Encode("The dog", true)
	idsJSON, _ := json.Marshal([][]int{ids})
	w = do(t, s, "POST", "/v1/embeddings", `{"input":`+string(idsJSON)+`}`)
	json.Unmarshal(w.Body.Bytes(), &res)
	if fmt.Sprint(res.Data[0].Embedding) != fmt.Sprint(want("The dog")) {
		t.Errorf("token ids: %s", w.Body)
	}
	for _, c := range []struct{ body, param, says string }{
		{`{}`, "input", "required"},
		{`{"input":""}`, "input", "empty string"},
		{`{"input":[]}`, "input", "empty array"},
		{`{"input":[[]]}`, "input[0]", "empty"},
		{`{"input":[1.5]}`, "input[0]", "token id"},
		{`{"input":[-1]}`, "input", "outside the vocabulary"},
		{`{"input":["a",3]}`, "input[1]", "want a string or an array of token ids"},
		{`{"input":{}}`, "input", "want a string"},
		{`{"input":"` + strings.Repeat("dog ", 600) + `"}`, "input", "context holds"},
		{`{"input":"a","encoding_format":"int8"}`, "encoding_format", "not supported"},
		{`{"input":"a","dimensions":7}`, "dimensions", "must be"},
		{`{"input":"a","pooling":"mean"}`, "pooling", "unknown field"},
		{`{"input":"a","user":1}`, "user", "want a string"},
	} {
		e := wantError(t, do(t, s, "POST", "/v1/embeddings", c.body), 400, c.param)
		if !strings.Contains(e.Error.Message, c.says) {
			t.Errorf("%s: %q does not say %q", c.body, e.Error.Message, c.says)
		}
	}
	wantError(t, do(t, s, "POST", "/v1/embeddings", `{"input":"a","model":"gpt-4"}`), 404, "model")
	wantError(t, do(t, s, "GET", "/v1/embeddings", ""), 405, "")

	// A model whose GGUF says it pools nothing (a reranker) cannot embed.
	f, err := gguf.Parse(defaultmodel.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	kv := append(append([]gguf.KeyValue(nil), f.KV...), gguf.KeyValue{Key: "llama.pooling_type", Value: gguf.Uint32(4)})
	if err := gguf.Write(&buf, kv, f.Tensors, 0); err != nil {
		t.Fatal(err)
	}
	rs, err := New(loadGGUF(t, buf.Bytes()), Config{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	e := wantError(t, do(t, rs, "POST", "/v1/embeddings", `{"input":"a"}`), 400, "model")
	if e.Code() != "embeddings_not_supported" || !strings.Contains(e.Error.Message, "rank") {
		t.Errorf("reranker: %s %s", e.Code(), e.Error.Message)
	}
}

func TestLogprobsAndSeed(t *testing.T) {
	s, m := newServer(t, Config{})
	body := `{"messages":[{"role":"user","content":"Tell me a story"}],"max_tokens":20,"temperature":1,"seed":77,"logprobs":true,"top_logprobs":3}`
	w := do(t, s, "POST", "/v1/chat/completions", body)
	c := apitest.MustCompletion(t, w.Body.Bytes())
	lp := c.Choices[0].Logprobs
	if lp == nil || len(lp.Content) != c.Usage.CompletionTokens {
		t.Fatalf("logprobs %s", w.Body)
	}
	var text strings.Builder
	for _, e := range lp.Content {
		text.WriteString(e.Token)
		if len(e.TopLogprobs) != 3 || e.Logprob > 0 || e.TopLogprobs[0].Logprob < e.TopLogprobs[1].Logprob || e.Logprob > e.TopLogprobs[0].Logprob {
			t.Errorf("entry %+v", e)
		}
	}
	if text.String() != c.Text() {
		t.Errorf("tokens %q, content %q", text.String(), c.Text())
	}
	// The engine's own numbers for the same seed.
	sess, _ := m.NewSession(engine.SessionOptions{Context: 512, Threads: 1})
	defer sess.Close()
	elp := engine.NewLogprobs(3)
	prompt, _ := m.EncodeChat([]chat.Message{{Role: "user", Content: "Tell me a story"}})
	k := 0
	sess.Generate(prompt, engine.GenerateOptions{MaxTokens: 20, Sampling: samplingOf(1, 77), Logprobs: elp}, func(id int, _ []byte) bool {
		if id < 0 {
			return true
		}
		if k < len(lp.Content) && lp.Content[k].Logprob != float64(elp.Logprob) {
			t.Errorf("token %d: logprob %v, engine %v", k, lp.Content[k].Logprob, elp.Logprob)
		}
		k++
		return true
	})
	// The same seed again: the same answer; streamed, the same entries.
	if again := apitest.MustCompletion(t, do(t, s, "POST", "/v1/chat/completions", body).Body.Bytes()); again.Text() != c.Text() {
		t.Errorf("seed 77 twice: %q, %q", c.Text(), again.Text())
	}
	var streamed []openai.TokenLogprob
	for _, ch := range sseChunks(t, do(t, s, "POST", "/v1/chat/completions", strings.Replace(body, `"seed"`, `"stream":true,"seed"`, 1)).Body.Bytes()) {
		if ch.Choices[0].Logprobs != nil {
			streamed = append(streamed, ch.Choices[0].Logprobs.Content...)
		}
	}
	a, _ := json.Marshal(streamed)
	b, _ := json.Marshal(lp.Content)
	if !bytes.Equal(a, b) {
		t.Errorf("streamed logprobs\n%s\nwhole\n%s", a, b)
	}
	// No logprobs asked: null.
	c = apitest.MustCompletion(t, do(t, s, "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"max_tokens":2}`).Body.Bytes())
	if c.Choices[0].Logprobs != nil {
		t.Errorf("logprobs without asking")
	}
}

// Completions' legacy "logprobs": N: per token its text, log probability (the
// chat endpoint's numbers for the same seed), N alternatives as {text:
// logprob} and the text offset from the start of the prompt; streamed, the
// same entries with offsets running on across chunks.
func TestLegacyLogprobs(t *testing.T) {
	s, _ := newServer(t, Config{})
	const prompt = "Once upon a time"
	body := `{"prompt":"` + prompt + `","max_tokens":20,"temperature":1,"seed":5,"logprobs":3}`
	c := apitest.MustCompletion(t, do(t, s, "POST", "/v1/completions", body).Body.Bytes())
	lp := c.Choices[0].Logprobs
	if lp == nil || lp.Legacy == nil {
		t.Fatalf("no legacy logprobs: %+v", c.Choices[0])
	}
	l := lp.Legacy
	n := c.Usage.CompletionTokens
	if len(l.Tokens) != n || len(l.TokenLogprobs) != n || len(l.TopLogprobs) != n || len(l.TextOffset) != n || n == 0 {
		t.Fatalf("%d tokens: %+v", n, l)
	}
	text := ""
	for i, tok := range l.Tokens {
		if l.TextOffset[i] != len([]rune(prompt))+len([]rune(text)) {
			t.Errorf("token %d: text_offset %d, want %d", i, l.TextOffset[i], len([]rune(prompt))+len([]rune(text)))
		}
		text += tok
		best := math.Inf(-1)
		for _, v := range l.TopLogprobs[i] {
			best = math.Max(best, v)
		}
		if len(l.TopLogprobs[i]) == 0 || len(l.TopLogprobs[i]) > 3 || l.TokenLogprobs[i] > 0 || l.TokenLogprobs[i] > best {
			t.Errorf("token %d %q: logprob %v, top %v", i, tok, l.TokenLogprobs[i], l.TopLogprobs[i])
		}
	}
	if text != c.Text() {
		t.Errorf("tokens %q, text %q", text, c.Text())
	}
	raw := do(t, s, "POST", "/v1/completions", body).Body.String()
	if !strings.Contains(raw, `"token_logprobs":[`) || strings.Contains(raw, `"content":`) {
		t.Errorf("not the legacy shape: %s", raw)
	}
	// Streamed: the chunks' entries, offsets included, are the whole answer's.
	var streamed openai.LegacyLogprobs
	for _, ch := range sseChunks(t, do(t, s, "POST", "/v1/completions", strings.Replace(body, `"seed"`, `"stream":true,"seed"`, 1)).Body.Bytes()) {
		if p := ch.Choices[0].Logprobs; p != nil {
			streamed.Tokens = append(streamed.Tokens, p.Legacy.Tokens...)
			streamed.TokenLogprobs = append(streamed.TokenLogprobs, p.Legacy.TokenLogprobs...)
			streamed.TopLogprobs = append(streamed.TopLogprobs, p.Legacy.TopLogprobs...)
			streamed.TextOffset = append(streamed.TextOffset, p.Legacy.TextOffset...)
		}
	}
	a, _ := json.Marshal(streamed)
	b, _ := json.Marshal(l)
	if !bytes.Equal(a, b) {
		t.Errorf("streamed\n%s\nwhole\n%s", a, b)
	}
	// logprobs 0: the chosen tokens' own, no alternatives.
	c = apitest.MustCompletion(t, do(t, s, "POST", "/v1/completions", strings.Replace(body, `"logprobs":3`, `"logprobs":0`, 1)).Body.Bytes())
	for i, top := range c.Choices[0].Logprobs.Legacy.TopLogprobs {
		if len(top) != 0 {
			t.Errorf("logprobs 0: token %d has alternatives %v", i, top)
		}
	}
}

// samplingOf is the server's sampling for a temperature and seed (top_p 1).
func samplingOf(temp float32, seed uint64) sample.Params {
	return sample.Params{Temperature: temp, TopP: 1, Seed: seed}
}
