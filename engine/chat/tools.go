package chat

// Tool calling. The assistant calls a tool by writing, in its reply, the
// Hermes format that Qwen2/2.5, Hermes and SmolLM3 are trained on (and that
// their chat templates describe to the model):
//
//	<tool_call>
//	{"name": "get_weather", "arguments": {"city": "Paris"}}
//	</tool_call>
//
// one block per call, blocks separated by a newline. ToolGrammar makes the
// grammar that constrains a reply to it, ToolStream reads calls back out of
// the generated text as it arrives, and FormatTools renders tools, calls and
// results for the next turn.
//
// Templates that render tools, tool_calls or role "tool" messages themselves
// (probed once per template: the probe's names must appear in its output)
// get them as Hugging Face's apply_chat_template passes them. For what a
// template does not render (and for the plain transcript), the fallback is:
//   - the tools: a system message listing them as compact JSON ({"name",
//     "description", "parameters"}) in <tools></tools> and asking for the
//     format above (merged after the first system
//     message's text when there is one);
//   - an assistant's calls: appended to its content as <tool_call> blocks;
//   - tool results: a user message holding each result in
//     <tool_response></tool_response>, consecutive results in one message.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/picolm/picolm-wasm/engine/grammar"
	"github.com/picolm/picolm-wasm/engine/jinja"
)

// Tool is a function the assistant may call.
type Tool struct {
	Name        string
	Description string
	Parameters  json.RawMessage // a JSON Schema of the arguments object; nil: no arguments
}

// ToolCall is a call the assistant made.
type ToolCall struct {
	ID        string // the caller's id of the call ("" when none)
	Name      string
	Arguments string // the arguments object as JSON text
}

// The markers of the Hermes format.
const (
	ToolCallOpen  = "<tool_call>"
	ToolCallClose = "</tool_call>"
)

// toolCaps are the parts of tool calling a template renders itself.
type toolCaps struct {
	tools, calls, results bool
}

// probeTools finds out which parts of tool calling template t renders: each
// probe's unusual name must show in the output of a conversation holding it.
func probeTools(t *jinja.Template) toolCaps {
	var c toolCaps
	if t == nil {
		return c
	}
	try := func(msgs []Message, tools []Tool, want string) bool {
		s, err := render(t, msgs, tools, true, "<s>", "</s>")
		return err == nil && strings.Contains(s, want)
	}
	user := Message{Role: "user", Content: "u"}
	c.tools = try([]Message{user}, []Tool{{Name: "probe_tool_x7", Parameters: json.RawMessage(`{"type":"object"}`)}}, "probe_tool_x7")
	call := Message{Role: "assistant", ToolCalls: []ToolCall{{ID: "call_1", Name: "probe_call_y7", Arguments: `{"a":1}`}}}
	c.calls = try([]Message{user, call}, nil, "probe_call_y7")
	c.results = try([]Message{user, call, {Role: "tool", ToolCallID: "call_1", Content: "probe_result_z7"}}, nil, "probe_result_z7")
	return c
}

// NativeTools reports which parts of tool calling the formatter's template
// renders itself: the tool list, the assistant's calls, the tool results.
// The others get the fallback (see above).
func (f *Formatter) NativeTools() (tools, calls, results bool) {
	return f.caps.tools, f.caps.calls, f.caps.results
}

// fallback rewrites what the template does not render itself into messages
// it does (see above). tools comes back nil when it went into a message.
func (f *Formatter) fallback(msgs []Message, tools []Tool) ([]Message, []Tool) {
	c := f.caps
	needed := len(tools) > 0 && !c.tools
	for _, m := range msgs {
		needed = needed || len(m.ToolCalls) > 0 && !c.calls || m.Role == "tool" && !c.results
	}
	if !needed {
		return msgs, tools
	}
	out := make([]Message, 0, len(msgs)+1)
	if len(tools) > 0 && !c.tools {
		text := ToolsPrompt(tools)
		if len(msgs) > 0 && msgs[0].Role == "system" {
			text = msgs[0].Content + "\n\n" + text
			msgs = msgs[1:]
		}
		out = append(out, Message{Role: "system", Content: text})
		tools = nil
	}
	for _, m := range msgs {
		switch {
		case len(m.ToolCalls) > 0 && !c.calls:
			var b strings.Builder
			b.WriteString(m.Content)
			for i, tc := range m.ToolCalls {
				if b.Len() > 0 || i > 0 {
					b.WriteByte('\n')
				}
				b.WriteString(CallText(tc.Name, tc.Arguments))
			}
			out = append(out, Message{Role: "assistant", Content: b.String()})
		case m.Role == "tool" && !c.results:
			block := "<tool_response>\n" + m.Content + "\n</tool_response>"
			if n := len(out); n > 0 && out[n-1].Role == "user" && strings.HasSuffix(out[n-1].Content, "</tool_response>") {
				out[n-1].Content += "\n" + block
			} else {
				out = append(out, Message{Role: "user", Content: block})
			}
		default:
			out = append(out, m)
		}
	}
	return out, tools
}

// ToolsPrompt is the fallback's system text: the tools as JSON in
// <tools></tools> and how to call them.
func ToolsPrompt(tools []Tool) string {
	var b strings.Builder
	b.WriteString("You can call these functions:\n<tools>")
	for _, t := range tools {
		b.WriteByte('\n')
		b.WriteString(toolJSON(t))
	}
	b.WriteString("\n</tools>\nTo call one, reply with its name and arguments:\n" +
		ToolCallOpen + "\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n" + ToolCallClose)
	return b.String()
}

// toolJSON is a tool as compact JSON, {"name", "description",
// "parameters"}: a small model's context is short.
func toolJSON(t Tool) string {
	var b bytes.Buffer
	b.WriteString(`{"name":`)
	writeJSONString(&b, t.Name)
	if t.Description != "" {
		b.WriteString(`,"description":`)
		writeJSONString(&b, t.Description)
	}
	if len(t.Parameters) > 0 {
		b.WriteString(`,"parameters":`)
		if json.Compact(&b, t.Parameters) != nil {
			b.WriteString("{}")
		}
	}
	b.WriteString("}")
	return b.String()
}

func writeJSONString(b *bytes.Buffer, s string) {
	q, _ := json.Marshal(s)
	b.Write(q)
}

// CallText is one call in the Hermes format, as the assistant writes it.
func CallText(name, arguments string) string {
	var b bytes.Buffer
	b.WriteString(ToolCallOpen + "\n{\"name\": ")
	writeJSONString(&b, name)
	b.WriteString(", \"arguments\": ")
	if a := strings.TrimSpace(arguments); a != "" {
		b.WriteString(a)
	} else {
		b.WriteString("{}")
	}
	b.WriteString("}\n" + ToolCallClose)
	return b.String()
}

// messageDict is a message as a template sees it: role and content, and
// tool_calls (OpenAI's shape, the arguments as an object), tool_call_id and
// name when the message has them.
func messageDict(m Message) jinja.Dict {
	d := jinja.Dict{{Key: "role", Value: m.Role}, {Key: "content", Value: m.Content}}
	if len(m.ToolCalls) > 0 {
		calls := make([]any, len(m.ToolCalls))
		for i, tc := range m.ToolCalls {
			fn := jinja.Dict{{Key: "name", Value: tc.Name}, {Key: "arguments", Value: jsonValue(tc.Arguments)}}
			calls[i] = jinja.Dict{{Key: "id", Value: tc.ID}, {Key: "type", Value: "function"}, {Key: "function", Value: fn}}
		}
		d = append(d, jinja.Item{Key: "tool_calls", Value: calls})
	}
	if m.Role == "tool" {
		d = append(d, jinja.Item{Key: "tool_call_id", Value: m.ToolCallID})
		if m.Name != "" {
			d = append(d, jinja.Item{Key: "name", Value: m.Name})
		}
	}
	return d
}

// toolDicts are the tools as a template's tools variable.
func toolDicts(tools []Tool) []any {
	out := make([]any, len(tools))
	for i, t := range tools {
		fn := jinja.Dict{{Key: "name", Value: t.Name}}
		if t.Description != "" {
			fn = append(fn, jinja.Item{Key: "description", Value: t.Description})
		}
		if len(t.Parameters) > 0 {
			fn = append(fn, jinja.Item{Key: "parameters", Value: jsonValue(string(t.Parameters))})
		}
		out[i] = jinja.Dict{{Key: "type", Value: "function"}, {Key: "function", Value: fn}}
	}
	return out
}

// jsonValue decodes JSON text into the values a template takes, objects as
// ordered Dicts; text that is not one JSON value stays a string.
func jsonValue(s string) any {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	v, err := decodeJSON(d, 0)
	if err != nil {
		return s
	}
	if _, err := d.Token(); err != io.EOF {
		return s
	}
	return v
}

func decodeJSON(d *json.Decoder, depth int) (any, error) {
	if depth > 64 {
		return nil, errors.New("nested too deeply")
	}
	t, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch x := t.(type) {
	case json.Delim:
		switch x {
		case '{':
			var o jinja.Dict
			for d.More() {
				k, err := d.Token()
				if err != nil {
					return nil, err
				}
				v, err := decodeJSON(d, depth+1)
				if err != nil {
					return nil, err
				}
				o = append(o, jinja.Item{Key: k.(string), Value: v})
			}
			_, err := d.Token()
			if o == nil {
				o = jinja.Dict{}
			}
			return o, err
		case '[':
			l := []any{}
			for d.More() {
				v, err := decodeJSON(d, depth+1)
				if err != nil {
					return nil, err
				}
				l = append(l, v)
			}
			_, err := d.Token()
			return l, err
		}
		return nil, fmt.Errorf("unexpected %v", x)
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i, nil
		}
		f, err := x.Float64()
		return f, err
	}
	return t, nil // string, bool, nil
}

// ToolChoice says what ToolGrammar lets the assistant do.
type ToolChoice struct {
	Mode     string // "auto": text or calls; "required": calls; "function": calls of Function
	Function string
	Parallel bool // more than one call in a reply
}

// The errors of ToolChoice.Calls.
var (
	ErrNeedsTools      = errors.New("the tool choice needs tools")
	ErrUnknownFunction = errors.New("the tool choice names a function that is not among the tools")
)

// Calls reports whether a reply with tools may call any under choice c, as
// the Cloudflare Worker and the browser decide it before ToolGrammar: not
// for "none" (or "") nor for "auto" with no tools; "required" and "function"
// need tools (ErrNeedsTools), and "function" one of them (ErrUnknownFunction).
func (c ToolChoice) Calls(tools []Tool) (bool, error) {
	switch c.Mode {
	case "", "none":
		return false, nil
	case "auto":
		return len(tools) > 0, nil
	case "required", "function":
	default:
		return false, fmt.Errorf("%w: unknown tool choice %q", ErrTools, c.Mode)
	}
	if len(tools) == 0 {
		return false, fmt.Errorf("%w: tool_choice %q needs tools", ErrNeedsTools, c.Mode)
	}
	if c.Mode == "function" {
		for _, t := range tools {
			if t.Name == c.Function {
				return true, nil
			}
		}
		return false, fmt.Errorf("%w: tool_choice names the function %q, which is not among the tools", ErrUnknownFunction, c.Function)
	}
	return true, nil
}

// ErrTools is returned (wrapped) by ToolGrammar for tools that cannot be
// called: a bad name, a parameters schema that cannot be compiled (the error
// names the tool and the problem), a choice of an unknown function.
var ErrTools = errors.New("tools")

// ToolGrammar returns the grammar that constrains a reply to the Hermes
// format: each call's name one of the tools' (or choice.Function) and its
// arguments valid under that tool's parameters (engine/grammar's JSON
// Schema conversion; a tool without parameters takes {}). With
// choice.Parallel the reply may hold several calls, one per line.
//
// "auto" lets a small model choose without a separate classifier: the
// grammar is the choice of the calls and of any text that does not start
// with "<tool_call>" (which the model may end at any point), so the first
// tokens decide, and a reply that starts calling must finish the call.
func ToolGrammar(tools []Tool, choice ToolChoice) (*grammar.GBNF, error) {
	if len(tools) == 0 {
		return nil, fmt.Errorf("%w: no tools to call", ErrTools)
	}
	r := grammar.NewSchemaRules()
	var calls []string
	found := false
	for i, t := range tools {
		if err := checkToolName(t.Name); err != nil {
			return nil, fmt.Errorf("%w: tool %d: %w", ErrTools, i, err)
		}
		if choice.Mode == "function" && t.Name != choice.Function {
			continue
		}
		found = true
		params, err := objectSchema(t.Parameters)
		if err != nil {
			return nil, fmt.Errorf("%w: tool %d (%s): parameters: %w", ErrTools, i, t.Name, err)
		}
		args, err := r.Schema(params, "args-"+t.Name)
		if err != nil {
			return nil, fmt.Errorf("%w: tool %d (%s): parameters: %w", ErrTools, i, t.Name, err)
		}
		var name bytes.Buffer
		writeJSONString(&name, t.Name)
		calls = append(calls, r.Rule("call-"+t.Name,
			grammar.Literal(ToolCallOpen+"\n{\"name\": "+name.String()+", \"arguments\": ")+" "+args+" "+grammar.Literal("}\n"+ToolCallClose)))
	}
	if !found {
		return nil, fmt.Errorf("%w: tool_choice names the function %q, which is not among the tools", ErrTools, choice.Function)
	}
	call := r.Rule("call", strings.Join(calls, " | "))
	body := call
	if choice.Parallel {
		body = call + ` ("\n" ` + call + `)*`
	}
	switch choice.Mode {
	case "auto":
		body = "(" + body + ") | " + grammar.NotPrefix(ToolCallOpen)
	case "required", "function":
	default:
		return nil, fmt.Errorf("%w: unknown tool choice %q", ErrTools, choice.Mode)
	}
	g, err := r.Compile(body)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrTools, err)
	}
	return g, nil
}

// CheckTool reports why t cannot be called, if it cannot: a bad name, or
// parameters that are not an object schema or cannot be compiled. The error
// wraps ErrTools and grammar.ErrSchema for a schema problem.
func CheckTool(t Tool) error {
	if err := checkToolName(t.Name); err != nil {
		return fmt.Errorf("%w: %w", ErrTools, err)
	}
	params, err := objectSchema(t.Parameters)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrTools, err)
	}
	r := grammar.NewSchemaRules()
	args, err := r.Schema(params, "args")
	if err != nil {
		return fmt.Errorf("%w: %w", ErrTools, err)
	}
	if _, err := r.Compile(args); err != nil {
		return fmt.Errorf("%w: %w", ErrTools, err)
	}
	return nil
}

// checkToolName accepts OpenAI's function names: 1 to 64 of a-z, A-Z, 0-9,
// underscore and dash.
func checkToolName(name string) error {
	if name == "" || len(name) > 64 {
		return fmt.Errorf("the function name must be 1 to 64 characters, got %d", len(name))
	}
	for _, c := range []byte(name) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return fmt.Errorf("the function name %q has %q: only a-z, A-Z, 0-9, _ and - are allowed", name, c)
		}
	}
	return nil
}

// objectSchema checks that a parameters schema describes objects and makes
// that explicit: no schema is a function of no arguments (the object {}),
// one without a type gets "type": "object" (unless it combines or refers to
// other schemas, which then say what the arguments are); another type is an
// error.
func objectSchema(p json.RawMessage) ([]byte, error) {
	p = bytes.TrimSpace(p)
	if len(p) == 0 || string(p) == "null" {
		return []byte(noArguments), nil
	}
	var top map[string]json.RawMessage
	if p[0] != '{' || json.Unmarshal(p, &top) != nil {
		return nil, errors.New("a function's parameters must be a JSON Schema object")
	}
	if t, ok := top["type"]; ok {
		if string(bytes.TrimSpace(t)) != `"object"` {
			return nil, fmt.Errorf(`the arguments must be an object: "type" must be "object", not %s`, t)
		}
		return p, nil
	}
	if len(top) == 0 {
		return []byte(noArguments), nil
	}
	for _, k := range []string{"$ref", "anyOf", "oneOf", "allOf", "enum", "const"} {
		if _, ok := top[k]; ok {
			return p, nil
		}
	}
	return append([]byte(`{"type":"object",`), p[1:]...), nil
}

// noArguments is the schema of a function without parameters.
const noArguments = `{"type":"object","properties":{},"additionalProperties":false}`
