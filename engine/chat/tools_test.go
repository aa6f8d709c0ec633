package chat

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

var (
	weatherTool = Tool{Name: "get_weather", Description: "Weather", Parameters: json.RawMessage(
		`{"type":"object","properties":{"city":{"type":"string","maxLength":10},"unit":{"enum":["celsius","fahrenheit"]}},"required":["city","unit"],"additionalProperties":false}`)}
	timeTool = Tool{Name: "get_time", Parameters: json.RawMessage(`{"properties":{"zone":{"type":"string"}},"required":["zone"]}`)}
	noArgs   = Tool{Name: "ping"}
)

func TestToolGrammar(t *testing.T) {
	tools := []Tool{weatherTool, timeTool, noArgs}
	paris := CallText("get_weather", `{"city": "Paris", "unit": "celsius"}`)
	utc := CallText("get_time", `{"zone": "UTC"}`)
	ping := CallText("ping", `{}`)
	for _, c := range []struct {
		choice ToolChoice
		yes    []string
		no     []string
	}{
		{ToolChoice{Mode: "required"},
			[]string{paris, utc, ping, CallText("get_weather", `{"city":"Oslo","unit":"fahrenheit"}`)},
			[]string{"", "Hello", paris + "\n" + utc, CallText("get_weather", `{"city": "Paris"}`), CallText("get_weather", `{"city": "Paris", "unit": "kelvin"}`),
				CallText("get_weather", `{"city": "Copenhagen!", "unit": "celsius"}`), CallText("other", `{}`), CallText("ping", `{"a": 1}`), " " + paris}},
		{ToolChoice{Mode: "required", Parallel: true},
			[]string{paris, paris + "\n" + utc, utc + "\n" + paris + "\n" + ping},
			[]string{paris + utc, paris + "\n", "x" + paris}},
		{ToolChoice{Mode: "function", Function: "get_time"},
			[]string{utc},
			[]string{paris, ping, "Hello"}},
		{ToolChoice{Mode: "auto"},
			[]string{paris, "", "Hello there", "<tool", "<tool_cal", "tool_call", " <tool_call>", "{\"a\": 1}"},
			[]string{"<tool_call>", "<tool_call>hello", paris + "\n" + utc, CallText("get_weather", `{}`)}},
	} {
		g, err := ToolGrammar(tools, c.choice)
		if err != nil {
			t.Fatalf("%+v: %v", c.choice, err)
		}
		for _, s := range c.yes {
			if !g.Recognise(s) {
				t.Errorf("%+v: %q refused", c.choice, s)
			}
		}
		for _, s := range c.no {
			if g.Recognise(s) {
				t.Errorf("%+v: %q accepted", c.choice, s)
			}
		}
	}
}

func TestToolGrammarErrors(t *testing.T) {
	for _, c := range []struct {
		tools  []Tool
		choice ToolChoice
		says   string
	}{
		{nil, ToolChoice{Mode: "required"}, "no tools"},
		{[]Tool{{Name: "a b"}}, ToolChoice{Mode: "required"}, "only a-z"},
		{[]Tool{{Name: ""}}, ToolChoice{Mode: "required"}, "1 to 64"},
		{[]Tool{{Name: "f", Parameters: json.RawMessage(`{"type":"string"}`)}}, ToolChoice{Mode: "required"}, `"type" must be "object"`},
		{[]Tool{{Name: "f", Parameters: json.RawMessage(`[1]`)}}, ToolChoice{Mode: "required"}, "JSON Schema object"},
		{[]Tool{{Name: "f", Parameters: json.RawMessage(`{"type":"object","not":{}}`)}}, ToolChoice{Mode: "required"}, `keyword "not"`},
		{[]Tool{{Name: "f", Parameters: json.RawMessage(`{"$ref":"#/nowhere"}`)}}, ToolChoice{Mode: "required"}, "nowhere"},
		{[]Tool{{Name: "f", Parameters: json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"#/$defs/b"}}}`)}}, ToolChoice{Mode: "required"}, `no member "$defs"`},
		{[]Tool{weatherTool}, ToolChoice{Mode: "function", Function: "g"}, "not among the tools"},
		{[]Tool{weatherTool}, ToolChoice{Mode: "sometimes"}, "unknown tool choice"},
	} {
		_, err := ToolGrammar(c.tools, c.choice)
		if err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%+v %+v: %v, want an error saying %q", c.tools, c.choice, err, c.says)
		}
		if len(c.tools) == 1 && c.choice.Mode == "required" {
			if err := CheckTool(c.tools[0]); err == nil || !strings.Contains(err.Error(), c.says) {
				t.Errorf("CheckTool %+v: %v, want an error saying %q", c.tools[0], err, c.says)
			}
		}
	}
	for _, tool := range []Tool{weatherTool, timeTool, noArgs} {
		if err := CheckTool(tool); err != nil {
			t.Errorf("CheckTool %s: %v", tool.Name, err)
		}
	}
}

// collect runs text through a ToolStream in pieces of the given sizes
// (cycled) and returns the content and the calls it read.
func collect(text string, sizes []int) (string, []ToolCall, bool) {
	var p ToolStream
	var content strings.Builder
	var calls []ToolCall
	ok := true
	ev := func(e ToolEvent) {
		switch {
		case !e.Call:
			content.WriteString(e.Content)
		case e.Name != "":
			if e.Index != len(calls) || e.Args != "" {
				ok = false
			}
			calls = append(calls, ToolCall{Name: e.Name})
		default:
			if e.Index != len(calls)-1 || e.Args == "" {
				ok = false
			}
			calls[e.Index].Arguments += e.Args
		}
	}
	for i := 0; text != ""; i++ {
		n := min(max(sizes[i%len(sizes)], 1), len(text))
		p.Push(text[:n], ev)
		text = text[n:]
	}
	p.Flush(ev)
	return content.String(), calls, ok
}

func TestToolStream(t *testing.T) {
	paris, utc := `{"city": "Paris", "unit": "celsius"}`, `{"zone": "a \"}\" b\\"}`
	for _, c := range []struct {
		text    string
		content string
		calls   []ToolCall
	}{
		{CallText("get_weather", paris), "", []ToolCall{{Name: "get_weather", Arguments: paris}}},
		{CallText("get_weather", paris) + "\n" + CallText("get_time", utc), "", []ToolCall{{Name: "get_weather", Arguments: paris}, {Name: "get_time", Arguments: utc}}},
		{" " + CallText("ping", "{}"), " " + CallText("ping", "{}"), nil}, // the grammar's text, not a call
		{"<tool_call>\n{\"name\": \"f\", \"arguments\":   {\"a\": [1, {\"b\": []}]} \n}\n</tool_call>", "", []ToolCall{{Name: "f", Arguments: `{"a": [1, {"b": []}]}`}}},
		{"Hello, world", "Hello, world", nil},
		{"Hello <tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>", "Hello <tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>", nil},
		{"<tool_call>not a call", "<tool_call>not a call", nil},
		{"<tool", "<tool", nil},
		{"<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1", "", []ToolCall{{Name: "f", Arguments: `{"a": 1`}}}, // cut short
		{"<tool_call>\n{\"name\": \"f\"", "<tool_call>\n{\"name\": \"f\"", nil},
		{"", "", nil},
	} {
		for _, sizes := range [][]int{{1 << 20}, {1}, {2}, {3, 1, 7}, {5, 11}} {
			content, calls, ok := collect(c.text, sizes)
			if !ok || content != c.content || len(calls) != len(c.calls) {
				t.Fatalf("%q in pieces %v: content %q, calls %+v (well-formed events %v); want %q, %+v", c.text, sizes, content, calls, ok, c.content, c.calls)
			}
			for i := range calls {
				if calls[i] != c.calls[i] {
					t.Fatalf("%q in pieces %v: call %d %+v, want %+v", c.text, sizes, i, calls[i], c.calls[i])
				}
			}
		}
		content, calls := ParseToolCalls(c.text)
		if content != strings.TrimSpace(c.content) || len(calls) != len(c.calls) {
			t.Errorf("ParseToolCalls(%q) = %q, %+v", c.text, content, calls)
		}
	}
}

// FuzzToolStream: any text, in any pieces, reads as it does whole, and the
// events are well formed.
func FuzzToolStream(f *testing.F) {
	f.Add(CallText("get_weather", `{"city": "Paris"}`)+"\n"+CallText("f", `{"a": "}"}`), uint8(3))
	f.Add("<tool_call>\n{\"name\": \"\\u0041\", \"arguments\": [", uint8(1))
	f.Add("hi <tool_call>", uint8(2))
	f.Fuzz(func(t *testing.T, text string, size uint8) {
		c1, k1, ok1 := collect(text, []int{1 << 30})
		c2, k2, ok2 := collect(text, []int{int(size), int(size/3) + 1})
		if !ok1 || !ok2 || c1 != c2 || len(k1) != len(k2) {
			t.Fatalf("whole: %q %+v %v; in pieces of %d: %q %+v %v", c1, k1, ok1, size, c2, k2, ok2)
		}
		for i := range k1 {
			if k1[i] != k2[i] {
				t.Fatalf("call %d: %+v vs %+v", i, k1[i], k2[i])
			}
		}
	})
}

var toolConv = []Message{
	{Role: "user", Content: "Weather in Paris?"},
	{Role: "assistant", ToolCalls: []ToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"city": "Paris"}`}}},
	{Role: "tool", ToolCallID: "call_1", Content: `{"t": 3}`},
}

var cityTool = []Tool{{Name: "get_weather", Description: "Weather", Parameters: json.RawMessage(`{"type": "object", "properties": {"city": {"type": "string"}}}`)}}

// Qwen2.5's template renders tools, calls and results itself: the prompt is
// what transformers' apply_chat_template makes of the conversation.
func TestFormatToolsQwen(t *testing.T) {
	f := New(readTemplate(t, "qwen2.5.jinja"), "", "<|im_end|>", false)
	if a, b, c := f.NativeTools(); !a || !b || !c {
		t.Fatalf("qwen2.5 renders tools %v, calls %v, results %v: want all", a, b, c)
	}
	got, err := f.FormatTools(toolConv, cityTool)
	if err != nil {
		t.Fatal(err)
	}
	want := "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>\n" +
		`{"type": "function", "function": {"name": "get_weather", "description": "Weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}` +
		"\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n" +
		"<|im_start|>user\nWeather in Paris?<|im_end|>\n" +
		"<|im_start|>assistant\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call><|im_end|>\n" +
		"<|im_start|>user\n<tool_response>\n{\"t\": 3}\n</tool_response><|im_end|>\n" +
		"<|im_start|>assistant\n"
	if got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
	// The reply the tool grammar makes is what the template writes back.
	if _, calls := ParseToolCalls(CallText("get_weather", `{"city": "Paris"}`)); len(calls) != 1 || !strings.Contains(got, CallText(calls[0].Name, calls[0].Arguments)) {
		t.Errorf("the template does not write calls as CallText does")
	}
}

// Llama 3.2's template renders them too, in its own words.
func TestFormatToolsLlama32(t *testing.T) {
	f := New(readTemplate(t, "llama3.2.jinja"), "<|begin_of_text|>", "<|eot_id|>", true)
	if a, b, c := f.NativeTools(); !a || !b || !c {
		t.Fatalf("llama3.2 renders tools %v, calls %v, results %v: want all", a, b, c)
	}
	got, err := f.FormatTools(toolConv, cityTool)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`"name": "get_weather"`, `"city"`, `3}`, "Weather in Paris?"} {
		if !strings.Contains(got, s) {
			t.Errorf("%q missing from %q", s, got)
		}
	}
}

// A template without tool support (Zephyr) and the plain transcript get the
// fallback: a system message with the tools, the calls in the assistant's
// text, the results in a user turn.
func TestFormatToolsFallback(t *testing.T) {
	tools := ToolsPrompt(cityTool)
	call := CallText("get_weather", `{"city": "Paris"}`)
	result := "<tool_response>\n{\"t\": 3}\n</tool_response>"
	plain := New("", "<s>", "</s>", true)
	got, err := plain.FormatTools(append([]Message{{Role: "system", Content: "Be brief."}}, toolConv...), cityTool)
	if err != nil {
		t.Fatal(err)
	}
	want := "Be brief.\n\n" + tools + "\n\nUser: Weather in Paris?\nAssistant: " + call + "\nUser: " + result + "\nAssistant:"
	if got != want {
		t.Errorf("plain: got\n%q\nwant\n%q", got, want)
	}
	if !strings.Contains(tools, `{"name":"get_weather","description":"Weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}`) {
		t.Errorf("tools prompt %q", tools)
	}
	src, _ := Builtin("zephyr")
	z := New(src, "<s>", "</s>", true)
	if a, b, c := z.NativeTools(); a || b || c {
		t.Fatalf("zephyr renders tools %v, calls %v, results %v: want none", a, b, c)
	}
	got, err = z.FormatTools(append(toolConv, Message{Role: "tool", ToolCallID: "call_2", Content: "4"}), cityTool)
	if err != nil {
		t.Fatal(err)
	}
	want = "<|system|>\n" + tools + "</s>\n<|user|>\nWeather in Paris?</s>\n<|assistant|>\n" + call + "</s>\n<|user|>\n" + result + "\n<tool_response>\n4\n</tool_response></s>\n<|assistant|>\n"
	if got != want {
		t.Errorf("zephyr: got\n%q\nwant\n%q", got, want)
	}
	// Without tools, a conversation formats exactly as Format does.
	a, _ := z.FormatTools(conv4, nil)
	b, _ := z.Format(conv4)
	if a != b {
		t.Errorf("FormatTools without tools %q, Format %q", a, b)
	}
}

// FuzzToolGrammar: any tool (name and parameters) either compiles, and
// CheckTool accepts it, or is refused with ErrTools; never a panic.
func FuzzToolGrammar(f *testing.F) {
	f.Add("get_weather", string(weatherTool.Parameters), "auto")
	f.Add("f", `{"properties":{"a":{"$ref":"#"}}}`, "required")
	f.Add("f", `{"anyOf":[{"type":"object"},{"type":"string"}]}`, "function")
	f.Add("x-y", `{"$defs":{"a":{"type":"object"}},"$ref":"#/$defs/a"}`, "required")
	f.Fuzz(func(t *testing.T, name, params, mode string) {
		tool := Tool{Name: name, Parameters: json.RawMessage(params)}
		if !json.Valid(tool.Parameters) {
			tool.Parameters = nil
		}
		g, err := ToolGrammar([]Tool{tool}, ToolChoice{Mode: mode, Function: name, Parallel: len(params)%2 == 0})
		if err != nil {
			if !errors.Is(err, ErrTools) {
				t.Fatalf("%v does not wrap ErrTools", err)
			}
			return
		}
		if mode == "auto" && !g.Recognise("hello") {
			t.Fatalf("auto refuses text")
		}
		if err := CheckTool(tool); err != nil {
			t.Fatalf("ToolGrammar compiles %+v, CheckTool refuses it: %v", tool, err)
		}
	})
}

// ToolChoice.Calls decides whether a reply may call tools as the Worker and
// the browser need it: none for "none" and for "auto" without tools, errors
// for a choice that needs tools or names a missing function.
func TestToolChoiceCalls(t *testing.T) {
	tools := []Tool{{Name: "a"}, {Name: "b"}}
	for _, c := range []struct {
		choice ToolChoice
		tools  []Tool
		calls  bool
		err    error
	}{
		{ToolChoice{}, tools, false, nil},
		{ToolChoice{Mode: "none"}, tools, false, nil},
		{ToolChoice{Mode: "auto"}, nil, false, nil},
		{ToolChoice{Mode: "auto"}, tools, true, nil},
		{ToolChoice{Mode: "required"}, tools, true, nil},
		{ToolChoice{Mode: "required"}, nil, false, ErrNeedsTools},
		{ToolChoice{Mode: "function", Function: "b"}, tools, true, nil},
		{ToolChoice{Mode: "function", Function: "c"}, tools, false, ErrUnknownFunction},
		{ToolChoice{Mode: "function", Function: "a"}, nil, false, ErrNeedsTools},
		{ToolChoice{Mode: "sometimes"}, tools, false, ErrTools},
	} {
		calls, err := c.choice.Calls(c.tools)
		if calls != c.calls || (c.err == nil) != (err == nil) || c.err != nil && !errors.Is(err, c.err) {
			t.Errorf("%+v with %d tools: %v, %v; want %v, %v", c.choice, len(c.tools), calls, err, c.calls, c.err)
		}
	}
}
