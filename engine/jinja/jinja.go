// Package jinja runs the subset of Jinja that chat templates use (Hugging
// Face's tokenizer_config.json "chat_template", which a GGUF file carries in
// tokenizer.chat_template), with the whitespace rules Hugging Face renders
// them with (trim_blocks and lstrip_blocks).
//
// Supported: text, {{ }}, {% if/elif/else %}, {% for %} (with loop.*, loop
// filters, else, break/continue), {% set %} (also namespace attributes and
// block sets), {% macro %}, {% generation %}, {% raw %}, comments, the Python
// operators and literals, the string and dict methods of methods.go, the
// filters of filters.go, the tests of tests.go and the global functions
// raise_exception, namespace, range and dict. Anything else is an error: at
// Parse time for unknown statements and syntax, at Render time for unknown
// filters, tests, methods and functions.
//
// A template cannot hang or exhaust memory: the source, the nesting, the
// rendered text, loop iterations and macro calls are bounded (lex.go,
// parse.go, eval.go), and exceeding a bound is an ErrRender.
//
// The files follow the pipeline: lex.go cuts the source into text and tags
// and tags into tokens, parse.go builds the tree, eval.go renders it over the
// values of value.go.
package jinja

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Sentinel errors.
var (
	// ErrTemplate: the template does not parse or uses a statement outside
	// the supported subset. The error text says where.
	ErrTemplate = errors.New("jinja: bad template")
	// ErrRender: the template failed while rendering (raise_exception, an
	// unknown filter, a type error, a resource limit).
	ErrRender = errors.New("jinja: template error")
)

// Template is a compiled template. It is immutable and safe for concurrent
// use.
type Template struct {
	src  string
	body []node
}

// Parse compiles a template.
func Parse(src string) (*Template, error) {
	body, err := parseTemplate(src)
	if err != nil {
		return nil, err
	}
	return &Template{src: src, body: body}, nil
}

// Source returns the template text.
func (t *Template) Source() string { return t.src }

// Dict is a dict value with its keys in order (Python dicts keep insertion
// order, which a template sees when it iterates or prints one).
type Dict []Item

// Item is one key of a Dict.
type Item struct {
	Key   string
	Value any
}

// Render runs the template with the global variables vars. A value is nil
// (none), a bool, an int or int64, a float64, a string, a []any (list), a
// Dict, a map[string]any (a dict with its keys sorted) or a []Dict.
func (t *Template) Render(vars map[string]any) (string, error) {
	globals := make(map[string]value, len(vars))
	for k, v := range vars {
		x, err := fromGo(v)
		if err != nil {
			return "", fmt.Errorf("%w: variable %q: %v", ErrRender, k, err)
		}
		globals[k] = x
	}
	// Template variables live one scope below the globals, so a template's
	// top-level {% set messages = ... %} shadows without touching them.
	st := &state{sc: &scope{vars: map[string]value{}, parent: &scope{vars: globals}}}
	var out strings.Builder
	err := st.render(t.body, &out)
	if err == errBreak || err == errContinue {
		err = nil
	}
	if err != nil {
		return "", err
	}
	return out.String(), nil
}

// fromGo converts a Go value given to Render.
func fromGo(v any) (value, error) {
	switch x := v.(type) {
	case nil, bool, int64, float64, string:
		return x, nil
	case int:
		return int64(x), nil
	case []any:
		return fromGoList(x)
	case []Dict:
		return fromGoList(x)
	case Dict:
		d := newDict()
		for _, it := range x {
			e, err := fromGo(it.Value)
			if err != nil {
				return nil, err
			}
			d.set(it.Key, e)
		}
		return d, nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		d := newDict()
		for _, k := range keys {
			e, err := fromGo(x[k])
			if err != nil {
				return nil, err
			}
			d.set(k, e)
		}
		return d, nil
	}
	return nil, fmt.Errorf("unsupported Go type %T", v)
}

func fromGoList[T any](x []T) (value, error) {
	l := make([]value, len(x))
	for i, e := range x {
		var err error
		if l[i], err = fromGo(e); err != nil {
			return nil, err
		}
	}
	return l, nil
}
