package jinja

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ---- global functions ----

// functions are the global functions a template calls by name.
var functions = []entry[func(a args) (value, error)]{
	{"raise_exception", raiseException},
	{"namespace", namespace},
	{"range", rangeFn},
	{"dict", dictFn},
}

// raise_exception(msg) fails the rendering with the template's message.
func raiseException(a args) (value, error) {
	msg := "raise_exception"
	if len(a.pos) > 0 {
		msg = str(a.pos[0])
	}
	return nil, fmt.Errorf("%w: template error: %s", ErrRender, msg)
}

// namespace(d, k=v, ...) is a dict whose attributes {% set ns.k = v %}
// may assign, also from inside a loop.
func namespace(a args) (value, error) {
	d := newDict()
	d.ns = true
	if len(a.pos) == 1 {
		if src, ok := a.pos[0].(*dict); ok {
			for _, k := range src.keys {
				d.set(k, src.m[k])
			}
		}
	}
	for _, k := range a.kw {
		d.set(k.name, k.v)
	}
	return d, nil
}

// dict(k=v, ...).
func dictFn(a args) (value, error) {
	d := newDict()
	for _, k := range a.kw {
		d.set(k.name, k.v)
	}
	return d, nil
}

// range(stop), range(start, stop[, step]), at most maxSteps items.
func rangeFn(a args) (value, error) {
	var n3 [3]int64
	for i, v := range a.pos {
		n, ok := v.(int64)
		if !ok || i > 2 {
			return nil, fmt.Errorf("%w: bad range() arguments", ErrRender)
		}
		n3[i] = n
	}
	start, stop, step := int64(0), n3[0], int64(1)
	switch len(a.pos) {
	case 0:
		return nil, fmt.Errorf("%w: range() needs an argument", ErrRender)
	case 2:
		start, stop = n3[0], n3[1]
	case 3:
		start, stop, step = n3[0], n3[1], n3[2]
	}
	if step == 0 {
		return nil, fmt.Errorf("%w: range() step is zero", ErrRender)
	}
	n := (stop - start + step - sign(step)) / step
	if n < 0 {
		n = 0
	}
	if n > maxSteps {
		return nil, fmt.Errorf("%w: range of %d items", ErrRender, n)
	}
	out := make([]value, 0, n)
	for i := int64(0); i < n; i++ {
		out = append(out, start+i*step)
	}
	return out, nil
}

func sign(x int64) int64 {
	if x < 0 {
		return -1
	}
	return 1
}

// ---- methods ----

// call is a method's or a test's name (for errors) and its arguments.
type call struct {
	name string
	args []value
}

// str returns argument i, which must be a string.
func (c call) str(i int) (string, error) {
	if i >= len(c.args) {
		return "", fmt.Errorf("%w: %s() needs %d arguments", ErrRender, c.name, i+1)
	}
	s, ok := c.args[i].(string)
	if !ok {
		return "", fmt.Errorf("%w: %s() argument must be a string, not %s", ErrRender, c.name, typeName(c.args[i]))
	}
	return s, nil
}

// one returns the only argument.
func (c call) one() (value, error) {
	if len(c.args) != 1 {
		return nil, fmt.Errorf("%w: %s needs one argument", ErrRender, c.name)
	}
	return c.args[0], nil
}

// callMethod calls obj.name(args...). Methods take no keyword arguments.
func callMethod(obj value, name string, args []value) (value, error) {
	c := call{name, args}
	switch x := obj.(type) {
	case string:
		if m, ok := lookup(stringMethods, name); ok {
			return m(x, c)
		}
	case *dict:
		if m, ok := lookup(dictMethods, name); ok {
			return m(x, c)
		}
	}
	return nil, fmt.Errorf("%w: %s has no method %q", ErrRender, typeName(obj), name)
}

// stringMethods are Python's str methods that chat templates call.
var stringMethods = []entry[func(s string, c call) (value, error)]{
	{"strip", func(s string, c call) (value, error) { return trimMethod(s, c, strings.Trim) }},
	{"lstrip", func(s string, c call) (value, error) { return trimMethod(s, c, strings.TrimLeft) }},
	{"rstrip", func(s string, c call) (value, error) { return trimMethod(s, c, strings.TrimRight) }},
	{"upper", func(s string, _ call) (value, error) { return strings.ToUpper(s), nil }},
	{"lower", func(s string, _ call) (value, error) { return strings.ToLower(s), nil }},
	{"title", func(s string, _ call) (value, error) { return title(s), nil }},
	{"capitalize", func(s string, _ call) (value, error) { return capitalize(s), nil }},
	{"startswith", func(s string, c call) (value, error) { return affixMethod(s, c, strings.HasPrefix) }},
	{"endswith", func(s string, c call) (value, error) { return affixMethod(s, c, strings.HasSuffix) }},
	{"split", split},
	{"replace", replaceMethod},
	{"find", find},
}

// trimMethod is strip, lstrip or rstrip: whitespace, or the characters of
// the argument.
func trimMethod(s string, c call, trim func(s, cut string) string) (value, error) {
	cut := " \t\n\r\f\v"
	if len(c.args) > 0 && c.args[0] != nil {
		var err error
		if cut, err = c.str(0); err != nil {
			return nil, err
		}
	}
	return trim(s, cut), nil
}

// affixMethod is startswith or endswith.
func affixMethod(s string, c call, has func(s, affix string) bool) (value, error) {
	a, err := c.str(0)
	if err != nil {
		return nil, err
	}
	return has(s, a), nil
}

// split() splits at runs of whitespace, split(sep) at every sep.
func split(s string, c call) (value, error) {
	if len(c.args) == 0 || c.args[0] == nil {
		return toList(strings.Fields(s)), nil
	}
	sep, err := c.str(0)
	if err != nil {
		return nil, err
	}
	if sep == "" {
		return nil, fmt.Errorf("%w: empty separator", ErrRender)
	}
	return toList(strings.Split(s, sep)), nil
}

func replaceMethod(s string, c call) (value, error) {
	old, err := c.str(0)
	if err != nil {
		return nil, err
	}
	repl, err := c.str(1)
	if err != nil {
		return nil, err
	}
	return replace(s, old, repl)
}

// find returns the index in characters of the first sub, or -1.
func find(s string, c call) (value, error) {
	sub, err := c.str(0)
	if err != nil {
		return nil, err
	}
	i := strings.Index(s, sub)
	if i > 0 {
		i = utf8.RuneCountInString(s[:i])
	}
	return int64(i), nil
}

// dictMethods are Python's dict methods that chat templates call.
var dictMethods = []entry[func(d *dict, c call) (value, error)]{
	{"items", func(d *dict, _ call) (value, error) { return d.items(), nil }},
	{"keys", func(d *dict, _ call) (value, error) { return d.keyList(), nil }},
	{"values", func(d *dict, _ call) (value, error) { return d.values(), nil }},
	{"get", get},
}

// get(k[, default]): the value of k, else default (none).
func get(d *dict, c call) (value, error) {
	k, err := c.str(0)
	if err != nil {
		return nil, err
	}
	if v, ok := d.m[k]; ok {
		return v, nil
	}
	if len(c.args) > 1 {
		return c.args[1], nil
	}
	return nil, nil
}

// ---- string helpers of the methods and filters ----

// replace is s with every old replaced by repl, refused beyond maxOutput.
func replace(s, old, repl string) (value, error) {
	if old != "" && len(repl) > len(old) && int64(strings.Count(s, old))*int64(len(repl)-len(old))+int64(len(s)) > maxOutput {
		return nil, fmt.Errorf("%w: string too long", ErrRender)
	}
	if old == "" && int64(len(s)+1)*int64(len(repl))+int64(len(s)) > maxOutput {
		return nil, fmt.Errorf("%w: string too long", ErrRender)
	}
	return strings.ReplaceAll(s, old, repl), nil
}

func toList(ss []string) []value {
	out := make([]value, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// title is Python's str.title: the first letter of every run of letters
// upper case, the rest lower case.
func title(s string) string {
	var b strings.Builder
	prevLetter := false
	for _, r := range s {
		if unicode.IsLetter(r) {
			if prevLetter {
				b.WriteRune(unicode.ToLower(r))
			} else {
				b.WriteRune(unicode.ToTitle(r))
			}
			prevLetter = true
		} else {
			b.WriteRune(r)
			prevLetter = false
		}
	}
	return b.String()
}

// capitalize is Python's str.capitalize.
func capitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	return string(unicode.ToUpper(r)) + strings.ToLower(s[n:])
}
