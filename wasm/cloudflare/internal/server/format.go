package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/picolm/picolm-wasm/engine/chat"
	"github.com/picolm/picolm-wasm/engine/grammar"
)

// parseFormat reads response_format and the grammar extension into j:
//
//	{"type": "text"}                                     free text
//	{"type": "json_object"}                              one JSON value (the JSON automaton)
//	{"type": "json_schema", "json_schema": {"name", "schema", "description", "strict"}}
//	                                                     JSON valid under schema (engine/grammar's conversion)
//	{"type": "grammar", "grammar": "root ::= ..."}       a sentence of this GBNF grammar (extension, as the JS API's)
//	"grammar": "root ::= ..."                            the same (llama.cpp's extension)
//
// A schema or grammar that cannot be compiled is a 400 naming the problem.
// strict is accepted either way: the output always follows the schema.
func (s *Server) parseFormat(req request, j *job) *apiError {
	if req.Grammar != nil {
		g, err := s.grammars.Get("gbnf\x00"+*req.Grammar, func() (*grammar.GBNF, error) { return grammar.ParseGBNF(*req.Grammar) })
		if err != nil {
			return badRequest("grammar", "the grammar cannot be compiled: %v", err)
		}
		j.grammar = g
	}
	top := object{m: map[string]json.RawMessage{"response_format": req.ResponseFormat}}
	rf, given, aerr := top.member("response_format", []string{"type", "json_schema", "grammar"})
	if aerr != nil || !given {
		return aerr
	}
	typ, aerr := rf.str("type")
	if aerr != nil {
		return aerr
	}
	t := ""
	if typ != nil {
		t = *typ
	}
	if t != "json_schema" {
		if aerr := rf.checkGiven(namedCheck{"json_schema", nullOnly(`json_schema goes with "type": "json_schema"`)}); aerr != nil {
			return aerr
		}
	}
	if t != "grammar" {
		if aerr := rf.checkGiven(namedCheck{"grammar", nullOnly(`grammar goes with "type": "grammar"`)}); aerr != nil {
			return aerr
		}
	}
	switch t {
	case "grammar":
		if j.grammar != nil {
			return badRequest("response_format", "response_format grammar and grammar cannot both be given")
		}
		src, aerr := rf.str("grammar")
		if aerr != nil {
			return aerr
		}
		if src == nil || *src == "" {
			return badRequest(rf.param("grammar"), "%s is required with \"type\": \"grammar\": GBNF source text", rf.param("grammar"))
		}
		g, err := s.grammars.Get("gbnf\x00"+*src, func() (*grammar.GBNF, error) { return grammar.ParseGBNF(*src) })
		if err != nil {
			return badRequest(rf.param("grammar"), "the grammar cannot be compiled: %v", err)
		}
		j.grammar = g
		return nil
	case "", "text":
		return nil
	case "json_object":
		if j.grammar != nil {
			return badRequest("response_format", "response_format json_object and grammar cannot both be given")
		}
		j.json = true
		return nil
	case "json_schema":
	default:
		return badRequest("response_format.type", "response_format type %q is not supported: use \"text\", \"json_object\", \"json_schema\" or \"grammar\"", t)
	}
	if j.grammar != nil {
		return badRequest("response_format", "response_format json_schema and grammar cannot both be given")
	}
	js, ok, aerr := rf.member("json_schema", []string{"name", "description", "schema", "strict"})
	if aerr != nil {
		return aerr
	}
	if !ok {
		return badRequest("response_format.json_schema", `response_format.json_schema is required with "type": "json_schema"`)
	}
	name, aerr := js.str("name")
	if aerr != nil {
		return aerr
	}
	if name == nil {
		return badRequest(js.param("name"), "%s is required", js.param("name"))
	}
	if err := checkName(*name); err != nil {
		return badRequest(js.param("name"), "%s: %v", js.param("name"), err)
	}
	if _, aerr := js.str("description"); aerr != nil {
		return aerr
	}
	if _, aerr := js.boolean("strict"); aerr != nil {
		return aerr
	}
	schema, ok := js.get("schema")
	if !ok {
		j.json = true // no schema: any JSON object, as json_object
		return nil
	}
	if schema[0] != '{' {
		return wrongType(js.param("schema"), schema, "a JSON Schema object")
	}
	g, err := s.grammars.Get("schema\x00"+compact(schema), func() (*grammar.GBNF, error) { return grammar.FromJSONSchema(schema) })
	if err != nil {
		return badRequest(js.param("schema"), "the schema cannot be used: %v", err)
	}
	j.grammar = g
	return nil
}

// checkName accepts OpenAI's names of schemas and functions: 1 to 64 of
// a-z, A-Z, 0-9, underscore and dash.
func checkName(name string) error {
	if name == "" || len(name) > 64 {
		return fmt.Errorf("a name must be 1 to 64 characters (got %d)", len(name))
	}
	for _, c := range []byte(name) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return fmt.Errorf("%q has %q: only a-z, A-Z, 0-9, _ and - are allowed", name, c)
		}
	}
	return nil
}

func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// parseTools reads tools, tool_choice and parallel_tool_calls. The tools
// go into the prompt (FormatTools); unless tool_choice is "none" the reply
// is constrained by chat.ToolGrammar and read for calls:
//
//	"auto" (the default with tools)  text, or calls of any of the tools
//	"required"                       calls of any of the tools
//	{"type": "function", "function": {"name": N}}   calls of N
//
// parallel_tool_calls (default true) lets a reply hold several calls.
func (s *Server) parseTools(req request, j *job) ([]chat.Tool, *apiError) {
	var tools []chat.Tool
	if !isNull(req.Tools) {
		raw := req.Tools
		var items []json.RawMessage
		if raw[0] != '[' || json.Unmarshal(raw, &items) != nil {
			return nil, wrongType("tools", raw, "an array of tools")
		}
		if len(items) > maxTools {
			return nil, badRequest("tools", "at most %d tools are allowed (got %d)", maxTools, len(items))
		}
		seen := map[string]bool{}
		for i, item := range items {
			t, aerr := parseTool(item, "tools["+strconv.Itoa(i)+"]")
			if aerr != nil {
				return nil, aerr
			}
			if seen[t.Name] {
				return nil, badRequest("tools["+strconv.Itoa(i)+"].function.name", "two tools are named %q", t.Name)
			}
			seen[t.Name] = true
			tools = append(tools, t)
		}
	}
	choice := chat.ToolChoice{Mode: "none", Parallel: req.ParallelToolCalls == nil || *req.ParallelToolCalls}
	if len(tools) > 0 {
		choice.Mode = "auto"
	}
	if raw := req.ToolChoice; !isNull(raw) {
		switch raw[0] {
		case '"':
			var m string
			json.Unmarshal(raw, &m)
			switch m {
			case "none", "auto", "required":
				choice.Mode = m
			default:
				return nil, badRequest("tool_choice", "tool_choice %q is not supported: use \"none\", \"auto\", \"required\" or {\"type\": \"function\", \"function\": {\"name\": ...}}", m)
			}
		case '{':
			top := object{m: map[string]json.RawMessage{"tool_choice": raw}}
			o, _, aerr := top.member("tool_choice", []string{"type", "function"})
			if aerr != nil {
				return nil, aerr
			}
			typ, aerr := o.str("type")
			if aerr != nil {
				return nil, aerr
			}
			if typ == nil || *typ != "function" {
				return nil, badRequest("tool_choice.type", `tool_choice.type must be "function"`)
			}
			_, name, aerr := subField[string](o, "function", "name", "a string", []string{"name"})
			if aerr != nil {
				return nil, aerr
			}
			if name == nil {
				return nil, badRequest("tool_choice.function.name", "tool_choice.function.name is required")
			}
			choice.Mode, choice.Function = "function", *name
		default:
			return nil, wrongType("tool_choice", raw, `"none", "auto", "required" or a {"type": "function"} object`)
		}
	}
	calls, err := choice.Calls(tools)
	switch {
	case errors.Is(err, chat.ErrUnknownFunction):
		return nil, badRequest("tool_choice.function.name", "%s", strings.TrimPrefix(err.Error(), chat.ErrUnknownFunction.Error()+": "))
	case err != nil:
		return nil, badRequest("tool_choice", "%s", strings.TrimPrefix(err.Error(), chat.ErrNeedsTools.Error()+": "))
	case !calls: // "none", or "auto" with no tools
		return tools, nil
	}
	if j.json || j.grammar != nil {
		return nil, badRequest("response_format", "response_format json_object or json_schema, or grammar, cannot constrain a reply that may call tools: send tool_choice \"none\" with them")
	}
	key := fmt.Sprintf("tools\x00%s\x00%v\x00%s", choice.Mode, choice.Parallel, choice.Function)
	for _, t := range tools {
		key += "\x00" + t.Name + "\x00" + compact(t.Parameters)
	}
	g, err := s.grammars.Get(key, func() (*grammar.GBNF, error) { return chat.ToolGrammar(tools, choice) })
	if err != nil {
		return nil, badRequest("tools", "the tools cannot be called: %v", err)
	}
	j.grammar, j.tools = g, true
	return tools, nil
}

// maxTools is the most tools a request may have (OpenAI's limit).
const maxTools = 128

// parseTool reads one {"type": "function", "function": {"name",
// "description", "parameters", "strict"}} and checks that its parameters
// compile (a schema that does not is a 400 naming the tool and the
// problem).
func parseTool(raw json.RawMessage, param string) (chat.Tool, *apiError) {
	var t chat.Tool
	o, ok, aerr := asObject(raw, param)
	if aerr != nil {
		return t, aerr
	}
	if !ok {
		return t, badRequest(param, "%s is null: want a {\"type\": \"function\", \"function\"} object", param)
	}
	if aerr := o.only("type", "function"); aerr != nil {
		return t, aerr
	}
	typ, aerr := o.str("type")
	if aerr != nil {
		return t, aerr
	}
	if typ == nil || *typ != "function" {
		return t, badRequest(o.param("type"), `%s must be "function" (the only kind of tool)`, o.param("type"))
	}
	fn, ok, aerr := o.member("function", []string{"name", "description", "parameters", "strict"})
	if aerr != nil {
		return t, aerr
	}
	if !ok {
		return t, badRequest(o.param("function"), "%s is required", o.param("function"))
	}
	name, aerr := fn.str("name")
	if aerr != nil {
		return t, aerr
	}
	if name == nil {
		return t, badRequest(fn.param("name"), "%s is required", fn.param("name"))
	}
	if err := checkName(*name); err != nil {
		return t, badRequest(fn.param("name"), "%s: %v", fn.param("name"), err)
	}
	t.Name = *name
	desc, aerr := fn.str("description")
	if aerr != nil {
		return t, aerr
	}
	if desc != nil {
		t.Description = *desc
	}
	if _, aerr := fn.boolean("strict"); aerr != nil {
		return t, aerr
	}
	if p, ok := fn.get("parameters"); ok {
		if p[0] != '{' {
			return t, wrongType(fn.param("parameters"), p, "a JSON Schema object")
		}
		t.Parameters = p
	}
	if err := chat.CheckTool(t); err != nil {
		return t, badRequest(fn.param("parameters"), "%s cannot be used: %v", fn.param("parameters"), strings.TrimPrefix(err.Error(), "tools: "))
	}
	return t, nil
}
