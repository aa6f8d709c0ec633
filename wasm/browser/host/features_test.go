package host

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/picolm/picolm-wasm/engine"
	"github.com/picolm/picolm-wasm/engine/chat"
	"github.com/picolm/picolm-wasm/gguf"
	"github.com/picolm/picolm-wasm/wasm/internal/defaultmodel"
)

// Embed gives the vectors engine.Session.Embed gives natively for the same
// tokens (text with BOS first), of unit norm, whole and split over two
// parts alike.
func TestEmbedMatchesEngine(t *testing.T) {
	w := builtin(t)
	f, err := gguf.Parse(defaultmodel.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	m, err := engine.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	s, err := m.NewSession(engine.SessionOptions{Context: 256, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{"Once upon a time", "The cat sat on the mat."}
	inputs := []EmbedInput{{Text: texts[0], IsText: true}, {Text: texts[1], IsText: true}, {Tokens: []int{1, 400, 401}}}
	got, err := w.Embed(inputs)
	if err != nil {
		t.Fatal(err)
	}
	toks := [][]int{m.Tokenizer.Encode(texts[0], true), m.Tokenizer.Encode(texts[1], true), {1, 400, 401}}
	for i, e := range got {
		want := make([]float32, m.Config.Dim)
		if err := s.Embed(toks[i], want); err != nil {
			t.Fatal(err)
		}
		if e.Tokens != len(toks[i]) {
			t.Errorf("input %d: %d tokens, want %d", i, e.Tokens, len(toks[i]))
		}
		for k := range want {
			if e.Vector[k] != want[k] {
				t.Fatalf("input %d: element %d is %g, the engine's %g", i, k, e.Vector[k], want[k])
			}
		}
		n := 0.0
		for _, v := range e.Vector {
			n += float64(v) * float64(v)
		}
		if math.Abs(math.Sqrt(n)-1) > 1e-5 {
			t.Errorf("input %d: norm %g", i, math.Sqrt(n))
		}
	}
	if got[0].Vector[0] == got[1].Vector[0] && got[0].Vector[1] == got[1].Vector[1] {
		t.Fatal("two texts have the same embedding")
	}

	b := defaultmodel.Bytes()
	sh, err := LoadShard(bytes.NewReader(b), int64(len(b)), 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	split := New()
	peers, mesh := meshed(t, sh)
	if _, err := split.LoadSplit("split", bytes.NewReader(b), int64(len(b)), peers, mesh); err != nil {
		t.Fatal(err)
	}
	sgot, err := split.Embed(inputs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		for k := range got[i].Vector {
			if sgot[i].Vector[k] != got[i].Vector[k] {
				t.Fatalf("split model: input %d element %d is %g, the whole model's %g", i, k, sgot[i].Vector[k], got[i].Vector[k])
			}
		}
	}
	// The session generates normally after embedding.
	if text, d := collect(t, w, GenerateRequest{Prompt: "Once upon a time", MaxTokens: 8}); d.Generated != 8 || text == "" {
		t.Fatalf("after Embed: %q %+v", text, d)
	}
}

// Bad embedding inputs, and a model that makes no embeddings, are refused
// with the field to blame.
func TestEmbedRefusals(t *testing.T) {
	w := builtin(t)
	for _, c := range []struct {
		inputs []EmbedInput
		param  string
	}{
		{nil, "input"},
		{[]EmbedInput{{Text: "", IsText: true}}, "input"},
		{[]EmbedInput{{Text: "a", IsText: true}, {Tokens: []int{1, 1 << 20}}}, "input[1]"},
		{[]EmbedInput{{Tokens: []int{-1}}}, "input"},
		{[]EmbedInput{{Tokens: []int{}}}, "input"},
	} {
		_, err := w.Embed(c.inputs)
		if !errors.Is(err, ErrBadParams) || Param(err) != c.param || Code(err) != CodeBadRequest {
			t.Errorf("%+v: %v (param %q, code %s), want a bad request on %s", c.inputs, err, Param(err), Code(err), c.param)
		}
	}
	long := make([]int, w.sess.Context()+1)
	if _, err := w.Embed([]EmbedInput{{Tokens: long}}); Code(err) != CodeContextFull || Param(err) != "input" {
		t.Errorf("too long: %v", err)
	}

	f, _ := gguf.Parse(defaultmodel.Bytes())
	kv := append(append([]gguf.KeyValue(nil), f.KV...), gguf.KeyValue{Key: "llama.pooling_type", Value: gguf.Uint32(0)})
	var buf bytes.Buffer
	if err := gguf.Write(&buf, kv, f.Tensors, 0); err != nil {
		t.Fatal(err)
	}
	none := New()
	load(t, none, "none.gguf", buf.Bytes())
	_, err := none.Embed([]EmbedInput{{Text: "a", IsText: true}})
	if !errors.Is(err, engine.ErrNoEmbedding) || Code(err) != CodeNoEmbeddings || Param(err) != "model" {
		t.Fatalf("pooling none: %v (code %s, param %q)", err, Code(err), Param(err))
	}
}

// Logprobs come with every generated token: greedy picks the most likely
// token, so its logprob is top_logprobs[0]'s, the alternatives are in
// order and their probabilities sum to at most 1.
func TestLogprobs(t *testing.T) {
	w := builtin(t)
	var lps []Logprob
	text := ""
	d, err := w.Generate(GenerateRequest{Prompt: "Once upon a time", MaxTokens: 24, Logprobs: true, TopLogprobs: 5}, func(tk Token) bool {
		for _, e := range tk.Logprobs { // the Token's buffers are reused: copy
			e.Top = append([]LogprobAlt(nil), e.Top...)
			lps = append(lps, e)
		}
		text += tk.Text
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(lps) != d.Generated || d.Generated != 24 {
		t.Fatalf("%d entries for %d tokens", len(lps), d.Generated)
	}
	joined := ""
	for i, e := range lps {
		if len(e.Top) != 5 || e.Top[0].Token != e.Token || e.Top[0].Logprob != e.Logprob || e.Logprob > 0 {
			t.Fatalf("token %d: %+v", i, e)
		}
		sum := 0.0
		for k, a := range e.Top {
			sum += math.Exp(a.Logprob)
			if k > 0 && a.Logprob > e.Top[k-1].Logprob {
				t.Fatalf("token %d: top_logprobs out of order: %+v", i, e.Top)
			}
		}
		if sum > 1+1e-5 {
			t.Fatalf("token %d: probabilities sum to %g", i, sum)
		}
		joined += e.Token
	}
	if !strings.Contains(joined, strings.TrimSpace(text[:10])) {
		t.Errorf("tokens %q do not spell the text %q", joined, text)
	}
	if _, err := w.Generate(GenerateRequest{Prompt: "x", Logprobs: true, TopLogprobs: 21}, func(Token) bool { return true }); Param(err) != "top_logprobs" {
		t.Errorf("top_logprobs 21: %v", err)
	}
}

var weather = chat.Tool{Name: "get_weather", Description: "The weather in a city",
	Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","maxLength":12},"days":{"type":"integer","minimum":1,"maximum":7}},"required":["city","days"],"additionalProperties":false}`)}

// A named tool_choice makes the reply one call of that function (its name
// first, then its arguments in pieces) whose arguments satisfy its
// parameters, ending with stop "tool_calls"; the call and its result go
// back into the prompt.
func TestToolCall(t *testing.T) {
	w := builtin(t)
	msgs := []chat.Message{{Role: "user", Content: "What is the weather in Paris?"}}
	type call struct{ name, args string }
	var calls []call
	text := ""
	d, err := w.Generate(GenerateRequest{Messages: msgs, MaxTokens: 200, Tools: []chat.Tool{weather}, ToolChoice: chat.ToolChoice{Mode: "function", Function: "get_weather"}, Seed: 3, Temperature: 1, TopP: 1}, func(tk Token) bool {
		text += tk.Text
		for _, c := range tk.Calls {
			if c.Name != "" {
				if c.Index != len(calls) {
					t.Fatalf("call index %d after %d calls", c.Index, len(calls))
				}
				calls = append(calls, call{name: c.Name})
			} else {
				calls[c.Index].args += c.Args
			}
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if d.Stop != StopToolCalls || len(calls) != 1 || calls[0].name != "get_weather" || strings.TrimSpace(text) != "" {
		t.Fatalf("stop %s, calls %+v, text %q", d.Stop, calls, text)
	}
	var args struct {
		City *string `json:"city"`
		Days *int    `json:"days"`
	}
	dec := json.NewDecoder(strings.NewReader(calls[0].args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&args); err != nil || args.City == nil || args.Days == nil || len(*args.City) > 12 || *args.Days < 1 || *args.Days > 7 {
		t.Fatalf("arguments %q: %v", calls[0].args, err)
	}

	// Fed back: the call and its result are in the prompt.
	back := append(msgs, chat.Message{Role: "assistant", ToolCalls: []chat.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: calls[0].args}}},
		chat.Message{Role: "tool", ToolCallID: "call_1", Name: "get_weather", Content: `{"sky":"blue"}`})
	p, err := w.Prompt(&GenerateRequest{Messages: back, Tools: []chat.Tool{weather}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"get_weather", calls[0].args, `{"sky":"blue"}`, "<tool_response>"} {
		if !strings.Contains(p, want) {
			t.Errorf("the prompt has no %q:\n%s", want, p)
		}
	}
}

// Tool requests that cannot run are refused with the field to blame.
func TestToolRefusals(t *testing.T) {
	w := builtin(t)
	msgs := []chat.Message{{Role: "user", Content: "hi"}}
	fn := chat.ToolChoice{Mode: "function", Function: "get_weather"}
	for _, c := range []struct {
		r     GenerateRequest
		param string
	}{
		{GenerateRequest{Messages: msgs, Tools: []chat.Tool{weather}, ToolChoice: chat.ToolChoice{Mode: "function", Function: "nope"}}, "tool_choice.function.name"},
		{GenerateRequest{Messages: msgs, ToolChoice: chat.ToolChoice{Mode: "required"}}, "tool_choice"},
		{GenerateRequest{Messages: msgs, Tools: []chat.Tool{weather, weather}, ToolChoice: fn}, "tools[1].function.name"},
		{GenerateRequest{Messages: msgs, Tools: []chat.Tool{{Name: "f", Parameters: json.RawMessage(`{"type":"string"}`)}}}, "tools[0].function.parameters"},
		{GenerateRequest{Messages: msgs, Tools: []chat.Tool{{Name: "f", Parameters: json.RawMessage(`{"type":"object","properties":{"a":{"type":"frobnicate"}}}`)}}}, "tools[0].function.parameters"},
		{GenerateRequest{Messages: msgs, Tools: []chat.Tool{weather}, ToolChoice: fn, JSON: true}, "response_format"},
		{GenerateRequest{Prompt: "x", Tools: []chat.Tool{weather}, ToolChoice: fn}, "tools"},
	} {
		_, err := w.Generate(c.r, func(Token) bool { return true })
		if !errors.Is(err, ErrBadParams) || Param(err) != c.param || Code(err) != CodeBadRequest {
			t.Errorf("%+v: %v (param %q), want a bad request on %s", c.r, err, Param(err), c.param)
		}
	}
}

// The per-token path of the logprobs and tool-call replies (text through
// the stop sequences, log-probability entries with their alternatives,
// chat.ToolStream's pieces) allocates at most the token's text as a string
// of its own (a caller may keep a Token's strings; chat.ToolStream.Push takes
// one): the same request run a second time (buffers grown, the matcher's
// caches warm) makes at most one allocation per token between its fifth
// Token and its last (runtime.MemStats.Mallocs, read in emit), where each
// log-probability entry and its alternatives used to make several. The
// engine's own per-token path is engine.TestForwardAllocatesNothing's.
func TestGenerateAllocatesNothingPerToken(t *testing.T) {
	w := builtin(t)
	echo := chat.Tool{Name: "echo", Parameters: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`)}
	msgs := []chat.Message{{Role: "user", Content: "Tell me a long story about a cat."}}
	for _, c := range []struct {
		what     string
		perToken uint64 // allocations allowed per token
		r        GenerateRequest
	}{
		{"logprobs, top 5, a stop sequence", 1, GenerateRequest{Prompt: "Once upon a time", MaxTokens: 200, Logprobs: true, TopLogprobs: 5, Stop: []string{"never in this story"}}},
		{"a tool call", 1, GenerateRequest{Messages: msgs, MaxTokens: 200, Tools: []chat.Tool{echo}, ToolChoice: chat.ToolChoice{Mode: "function", Function: "echo"}, Temperature: 1, TopP: 1, Seed: 3}},
		{"a tool call with logprobs", 1, GenerateRequest{Messages: msgs, MaxTokens: 200, Tools: []chat.Tool{echo}, ToolChoice: chat.ToolChoice{Mode: "function", Function: "echo"}, Temperature: 1, TopP: 1, Seed: 3, Logprobs: true, TopLogprobs: 3}},
	} {
		var first, last runtime.MemStats
		var from, to int // the Count of the fifth Token and of the last
		run := func() {
			n := 0
			w.sess.Rewind(0) // the same prefill each time
			if _, err := w.Generate(c.r, func(tk Token) bool {
				if n++; n == 5 {
					runtime.ReadMemStats(&first)
					from = tk.Count
				} else if n > 5 {
					runtime.ReadMemStats(&last)
					to = tk.Count
				}
				return true
			}); err != nil {
				t.Fatalf("%s: %v", c.what, err)
			}
		}
		run()
		run()
		mallocs := last.Mallocs - first.Mallocs
		t.Logf("%s: %d allocations over tokens %d to %d", c.what, mallocs, from, to)
		if to-from < 20 {
			t.Fatalf("%s: tokens %d to %d: too few to measure", c.what, from, to)
		}
		if mallocs > c.perToken*uint64(to-from) {
			t.Errorf("%s: %d allocations over tokens %d to %d, at most %d per token allowed", c.what, mallocs, from, to, c.perToken)
		}
	}
}
