package server

import (
	"fmt"
	"strings"
	"testing"
)

// nested is a completions body with a member "a" (or name) holding value v
// wrapped in depth arrays or objects.
func nested(name string, depth int, objects bool, v string) string {
	open, close := strings.Repeat("[", depth), strings.Repeat("]", depth)
	if objects {
		open, close = strings.Repeat(`{"a":`, depth), strings.Repeat("}", depth)
	}
	return `{"prompt":"Once","max_tokens":2,"` + name + `":` + open + v + close + `}`
}

// The issue-13 reproducers: 9 KB of nested arrays, nested objects 5,000
// deep. Natively encoding/json decodes them (Go's stacks grow), so before
// the limit they were answered 200 with the field ignored; in the Worker
// they took the Go program down. Now: a 400 naming the limit, and the member.
func TestNestedBodyRefused(t *testing.T) {
	s, _ := newServer(t, Config{})
	for _, tc := range []struct {
		name, body, param string
	}{
		{"arrays 4500", nested("a", 4500, false, ""), "a"},
		{"objects 5000", nested("a", 5000, true, "1"), "a"},
		{"arrays 65 in stop", nested("stop", 64, false, `"x"`), "stop"},
		{"in messages", `{"messages":[{"role":"user","content":` + strings.Repeat("[", 100) + `]}]}`, "messages"},
		{"top level", strings.Repeat("[", 100), ""},
		{"escaped key", `{"a\"b":` + strings.Repeat("[", 100), `a"b`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := "/v1/completions"
			if strings.Contains(tc.body, "messages") {
				path = "/v1/chat/completions"
			}
			e := wantError(t, do(t, s, "POST", path, tc.body), 400, tc.param)
			if !strings.Contains(e.Error.Message, fmt.Sprintf("the limit is %d levels", MaxJSONDepth)) {
				t.Errorf("message %q does not name the limit", e.Error.Message)
			}
		})
	}
	// At the limit the body is decoded: "a" is then refused as an unknown
	// field, and stop as the wrong type (64 levels: the body, then 63 arrays).
	e := wantError(t, do(t, s, "POST", "/v1/completions", nested("a", MaxJSONDepth-1, false, "")), 400, "a")
	if !strings.Contains(e.Error.Message, "unknown field") {
		t.Errorf("at the limit: %q", e.Error.Message)
	}
	wantError(t, do(t, s, "POST", "/v1/completions", nested("stop", MaxJSONDepth-1, false, `"x"`)), 400, "stop")
	// Brackets in strings do not count, nor do escaped quotes end a string.
	deepText := strings.Repeat("[{", 3000) + `\"` + strings.Repeat("[", 100)
	if w := do(t, s, "POST", "/v1/completions", `{"prompt":"[[{\\\"","max_tokens":1,"stop":"`+deepText+`"}`); w.Code != 200 {
		t.Fatalf("brackets inside strings: %d %s", w.Code, w.Body)
	}
	// The server goes on serving.
	if w := do(t, s, "GET", "/health", ""); w.Code != 200 {
		t.Fatalf("health after: %d", w.Code)
	}
}

func TestCheckDepth(t *testing.T) {
	for _, tc := range []struct {
		body string
		ok   bool
	}{
		{``, true},
		{`{}`, true},
		{`[[[]]]`, true},
		{`[[[[]]]]`, false},
		{`[[[`, true},          // three levels, unterminated: the decoder's to refuse
		{`]]]][[[[[[[[`, true}, // malformed at once: the decoder refuses the first ]
		{`{"a":[{"b":[]}]}`, false},
		{`{"a":"[[[[[[","b":1}`, true},
		{`{"a":"\\","b":[[[[]]]]}`, false}, // the escaped backslash ends before the quote
		{`{"a":"\"[[[[[[\""}`, true},
		{`"[[[[[[[[`, true}, // an unterminated string
	} {
		aerr := checkDepth([]byte(tc.body), 3)
		if (aerr == nil) != tc.ok {
			t.Errorf("%s: error %v, want ok=%v", tc.body, aerr, tc.ok)
		}
	}
}

// Every OpenAI field the API does not implement is refused with a 400 that
// names it, unless its value asks for nothing (then it is accepted); wrong
// types are refused for every field; numbers that do not fit say so.
func TestFieldsNotIgnored(t *testing.T) {
	s, _ := newServer(t, Config{MaxTokensCap: 4})
	const cmpl, chat = "/v1/completions", "/v1/chat/completions"
	body := func(path, extra string) string {
		if path == chat {
			return `{"messages":[{"role":"user","content":"hi"}],"max_tokens":2,` + extra + `}`
		}
		return `{"prompt":"Once","max_tokens":2,` + extra + `}`
	}
	refused := []struct {
		path, extra, param, says string
	}{
		// The list.
		{cmpl, `"logprobs":6`, "logprobs", "between 0 and 5"},
		{cmpl, `"logprobs":-1`, "logprobs", "between 0 and 5"},
		{cmpl, `"logprobs":true`, "logprobs", "want an integer"},
		{cmpl, `"logprobs":1.5`, "logprobs", "must be an integer"},
		{chat, `"top_logprobs":3`, "top_logprobs", `needs "logprobs": true`},
		{chat, `"logprobs":true,"top_logprobs":21`, "top_logprobs", "between 0 and 20"},
		{chat, `"logprobs":true,"top_logprobs":-1`, "top_logprobs", "between 0 and 20"},
		{cmpl, `"echo":true`, "echo", "not supported"},
		{cmpl, `"best_of":3`, "best_of", "not supported"},
		{cmpl, `"suffix":"The end."`, "suffix", "not supported"},
		{chat, `"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"array"}}}]`, "tools[0].function.parameters", `"type" must be "object"`},
		{chat, `"tools":[{"type":"custom","custom":{"name":"f"}}]`, "tools[0].custom", "unknown field"},
		{chat, `"tools":[{"type":"function","function":{"name":"f g"}}]`, "tools[0].function.name", "only a-z"},
		{chat, `"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"a":{"type":"string","format":"email"}}}}}]`, "tools[0].function.parameters", "format"},
		{chat, `"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"sometimes"`, "tool_choice", "not supported"},
		{chat, `"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":{"type":"function","function":{"name":"g"}}`, "tool_choice.function.name", "not among the tools"},
		{chat, `"tools":[{"type":"function","function":{"name":"f"}}],"response_format":{"type":"json_object"}`, "response_format", "cannot constrain"},
		{chat, `"response_format":{"type":"json_schema","json_schema":{"name":"s","schema":{"type":"object","dependentRequired":{}}}}`, "response_format.json_schema.schema", `keyword "dependentRequired" is not supported`},
		{chat, `"response_format":{"type":"json_schema","json_schema":{"schema":{}}}`, "response_format.json_schema.name", "required"},
		{chat, `"response_format":{"type":"json_schema"}`, "response_format.json_schema", "required"},
		{chat, `"response_format":{"type":"json_schema","json_schema":{"name":"s","schema":[]}}`, "response_format.json_schema.schema", "want a JSON Schema object"},
		{chat, `"response_format":{"type":"json_schema","json_schema":{"name":"s","schema":{"type":"object","properties":{"a":{"type":"integer","minimum":5,"maximum":2}}}}}`, "response_format.json_schema.schema", ""},
		{cmpl, `"grammar":"root ::= [a-"`, "grammar", "cannot be compiled"},
		{cmpl, `"grammar":"root ::= \"a\"","response_format":{"type":"json_object"}`, "response_format", "cannot both"},
		{cmpl, `"grammar":5`, "grammar", "want a string"},
		{cmpl, `"frequency_penalty":"x"`, "frequency_penalty", "wrong type for frequency_penalty: got a string, want a number"},
		{cmpl, `"temperature":1e309`, "temperature", "out of range"},
		{cmpl, `"temperature":-1e400`, "temperature", "out of range"},
		{cmpl, `"n":5`, "n", "n must be 1"},
		// Unknown fields and the other endpoint's.
		{cmpl, `"foo":1`, "foo", "unknown field foo"},
		{cmpl, `"Temperature":0.5`, "Temperature", "unknown field"},
		{cmpl, `"repeat_penalty":1.1`, "repeat_penalty", "unknown field"},
		{cmpl, `"max_token":3`, "max_token", "unknown field"},
		{cmpl, `"tools":[]`, "tools", "chat completions field"},
		{cmpl, `"max_completion_tokens":3`, "max_completion_tokens", "completions take max_tokens"},
		{chat, `"echo":false`, "echo", "completions field"},
		{chat, `"suffix":""`, "suffix", "completions field"},
		// Not implemented, and not harmless.
		{cmpl, `"frequency_penalty":0.5`, "frequency_penalty", "not supported"},
		{cmpl, `"presence_penalty":-3`, "presence_penalty", "between -2 and 2"},
		{cmpl, `"logit_bias":{"50256":-100}`, "logit_bias", "not supported"},
		{chat, `"tool_choice":"required"`, "tool_choice", "needs tools"},
		{chat, `"tool_choice":{"type":"function","function":{"name":"f"}}`, "tool_choice", "needs tools"},
		{chat, `"store":true`, "store", "not supported"},
		{chat, `"service_tier":"flex"`, "service_tier", "not supported"},
		{chat, `"modalities":["text","audio"]`, "modalities", "not supported"},
		{chat, `"audio":{"voice":"alloy","format":"mp3"}`, "audio", "not supported"},
		{chat, `"reasoning_effort":"low"`, "reasoning_effort", "not supported"},
		{chat, `"prediction":{"type":"content","content":"x"}`, "prediction", "not supported"},
		{chat, `"web_search_options":{}`, "web_search_options", "not supported"},
		{chat, `"functions":[{"name":"f"}]`, "functions", "not supported"},
		{cmpl, `"stream":true,"stream_options":{"include_obfuscation":true}`, "stream_options.include_obfuscation", "not supported"},
		{cmpl, `"stream":true,"stream_options":{"include_usage":true,"chunk_size":3}`, "stream_options.chunk_size", "unknown field"},
		{cmpl, `"response_format":{"type":"json_object","schema":{}}`, "response_format.schema", "unknown field"},
		{cmpl, `"response_format":{"type":"json_object","json_schema":{}}`, "response_format.json_schema", "not supported"},
		// Wrong types, field by field.
		{cmpl, `"model":5`, "model", "got a number, want a string"},
		{cmpl, `"max_tokens":"3"`, "max_tokens", "got a string, want an integer"},
		{cmpl, `"max_tokens":1.5`, "max_tokens", "must be an integer"},
		{cmpl, `"max_tokens":1e20`, "max_tokens", "out of range"},
		{cmpl, `"max_tokens":99999999999999999999`, "max_tokens", "out of range"},
		{cmpl, `"seed":-1e19`, "seed", "out of range"},
		{cmpl, `"seed":true`, "seed", "got a boolean, want an integer"},
		{cmpl, `"top_k":[]`, "top_k", "got an array, want an integer"},
		{cmpl, `"top_p":{}`, "top_p", "got an object, want a number"},
		{cmpl, `"min_p":"0.1"`, "min_p", "want a number"},
		{cmpl, `"n":"1"`, "n", "want an integer"},
		{cmpl, `"stream":1`, "stream", "want a boolean"},
		{cmpl, `"stream":true,"stream_options":[]`, "stream_options", "want an object"},
		{cmpl, `"stream":true,"stream_options":{"include_usage":"yes"}`, "stream_options.include_usage", "want a boolean"},
		{cmpl, `"response_format":"json_object"`, "response_format", "want an object"},
		{cmpl, `"response_format":{"type":1}`, "response_format.type", "want a string"},
		{cmpl, `"presence_penalty":null,"frequency_penalty":[0]`, "frequency_penalty", "want a number"},
		{cmpl, `"logit_bias":[]`, "logit_bias", "want an object"},
		{cmpl, `"user":42`, "user", "want a string"},
		{cmpl, `"echo":"false"`, "echo", "want a boolean"},
		{cmpl, `"best_of":"1"`, "best_of", "want an integer"},
		{cmpl, `"suffix":0`, "suffix", "want a string"},
		{chat, `"logprobs":1`, "logprobs", "want a boolean"},
		{chat, `"top_logprobs":"0"`, "top_logprobs", "want an integer"},
		{chat, `"tools":{}`, "tools", "want an array"},
		{chat, `"parallel_tool_calls":"no"`, "parallel_tool_calls", "want a boolean"},
		{chat, `"metadata":{"k":1}`, "metadata.k", "want a string"},
		{chat, `"modalities":"text"`, "modalities", "want an array of strings"},
		{chat, `"service_tier":1`, "service_tier", "want a string"},
		// Message members.
		{chat, `"messages":[{"role":"user","content":"hi","name":"bob"}]`, "messages[0].name", "not supported"},
		{chat, `"messages":[{"role":"user","content":"hi","cache_control":{}}]`, "messages[0].cache_control", "unknown field"},
		{chat, `"messages":[{"role":"assistant","content":"hi","tool_calls":[{"id":"1"}]}]`, "messages[0].tool_calls[0].function", "required"},
		{chat, `"messages":[{"role":"assistant","tool_calls":[{"id":"1","type":"function","function":{"name":"f","arguments":"{"}}]}]`, "messages[0].tool_calls[0].function.arguments", "not JSON"},
		{chat, `"messages":[{"role":"user","content":"hi","tool_calls":[]}]`, "messages[0].tool_calls", "only an assistant"},
		{chat, `"messages":[{"role":"tool","content":"3"}]`, "messages[0].tool_call_id", "required"},
		{chat, `"messages":[{"role":"user","content":"hi","tool_call_id":"c"}]`, "messages[0].tool_call_id", "not supported"},
		{chat, `"messages":[{"role":"user","content":[{"type":"text","text":"hi","cache_control":{}}]}]`, "messages[0].content[0].cache_control", "unknown field"},
		{chat, `"messages":[{"role":"user","content":[{"type":"text"}]}]`, "messages[0].content[0].text", "required"},
		{chat, `"messages":[{"role":"user","content":[{"type":"text","text":5}]}]`, "messages[0].content[0].text", "want a string"},
		{chat, `"messages":[null]`, "messages[0]", "null"},
		{chat, `"messages":[{"role":7,"content":"hi"}]`, "messages[0].role", "want a string"},
	}
	for _, tc := range refused {
		b := body(tc.path, tc.extra)
		if strings.HasPrefix(tc.extra, `"messages"`) {
			b = `{"max_tokens":2,` + tc.extra + `}`
		}
		t.Run(tc.extra, func(t *testing.T) {
			e := wantError(t, do(t, s, "POST", tc.path, b), 400, tc.param)
			if !strings.Contains(e.Error.Message, tc.says) {
				t.Errorf("message %q does not say %q", e.Error.Message, tc.says)
			}
		})
	}

	// What OpenAI clients send by default, and the harmless values of the
	// fields the API does not implement, are accepted.
	accepted := []struct{ path, extra string }{
		{cmpl, `"logprobs":null,"echo":false,"best_of":1,"suffix":null,"frequency_penalty":0,"presence_penalty":0,"logit_bias":{},"user":"u-1","n":1`},
		{cmpl, `"suffix":"","best_of":null,"echo":null,"temperature":1e-400,"max_tokens":1e3,"top_k":4.0,"seed":-5`},
		{cmpl, `"stream":false,"stream_options":null,"response_format":{"type":"text"},"stop":null,"model":null`},
		{cmpl, `"stream":true,"stream_options":{"include_usage":true,"include_obfuscation":false}`},
		{chat, `"logprobs":false,"top_logprobs":0,"tools":[],"tool_choice":"none","parallel_tool_calls":true,"store":false`},
		{chat, `"tool_choice":"auto","functions":[ ],"function_call":"none","metadata":{"k":"v"},"service_tier":"auto","modalities":["text"]`},
		{chat, `"audio":null,"prediction":null,"reasoning_effort":null,"verbosity":null,"web_search_options":null,"prompt_cache_key":"k","safety_identifier":"s"`},
		{chat, `"prompt":null,"max_completion_tokens":2,"frequency_penalty":null`},
		{cmpl, `"messages":null,"tools":null`},
		{cmpl, "\"stream\" :\n\ttrue , \"stream_options\" : {\r\n \"include_usage\" : true } ,\"logit_bias\": { } ,\"temperature\" : 0.5 "},
		{chat, "\"tools\" : [ \n ] , \"modalities\" : [ \"text\" ]"},
		{chat, `"tools":[{"type":"function","function":{"name":"f","description":"d","strict":true}}],"tool_choice":"none","logprobs":true,"top_logprobs":2`},
		{chat, `"response_format":{"type":"json_schema","json_schema":{"name":"s","description":"d","strict":false,"schema":{"type":"object"}}}`},
		{cmpl, `"grammar":"root ::= [a-z]+"`},
		{chat, `"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},{"role":"tool","tool_call_id":"c1","name":"f","content":"ok"}]`},
		// An assistant message copied back from a response, with its nulls.
		{chat, `"messages":[{"role":"user","content":"hi","name":""},{"role":"assistant","content":"Hello","refusal":null,"tool_calls":[],"function_call":null,"audio":null},{"role":"user","content":[{"type":"text","text":"more"}]}]`},
	}
	for _, tc := range accepted {
		b := body(tc.path, tc.extra)
		if strings.HasPrefix(tc.extra, `"messages":[`) {
			b = `{"max_tokens":2,` + tc.extra + `}`
		}
		t.Run("ok "+tc.extra, func(t *testing.T) {
			if w := do(t, s, "POST", tc.path, b); w.Code != 200 {
				t.Errorf("%d %s", w.Code, w.Body)
			}
		})
	}
}
