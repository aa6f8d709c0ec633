package jinja

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Values are Go values of these types:
//
//	undefined  a missing variable, attribute or item (prints as "")
//	nil        none
//	bool, int64, float64, string
//	[]value    list (and tuple)
//	*dict      dict, namespace, loop
//	*macro     a macro defined by the template
type value = any

type undefinedT struct{}

var undefined value = undefinedT{}

type dict struct {
	keys []string
	m    map[string]value
	ns   bool // a namespace(): attributes may be assigned
}

func newDict() *dict { return &dict{m: map[string]value{}} }

func (d *dict) set(k string, v value) {
	if _, ok := d.m[k]; !ok {
		d.keys = append(d.keys, k)
	}
	d.m[k] = v
}

func (d *dict) get(k string) (value, bool) {
	v, ok := d.m[k]
	return v, ok
}

// keyList, values and items are the dict's keys, values and [key, value]
// pairs, in order.
func (d *dict) keyList() []value {
	out := make([]value, len(d.keys))
	for i, k := range d.keys {
		out[i] = k
	}
	return out
}

func (d *dict) values() []value {
	out := make([]value, len(d.keys))
	for i, k := range d.keys {
		out[i] = d.m[k]
	}
	return out
}

func (d *dict) items() []value {
	out := make([]value, len(d.keys))
	for i, k := range d.keys {
		out[i] = []value{k, d.m[k]}
	}
	return out
}

func isUndefined(v value) bool { _, ok := v.(undefinedT); return ok }

// truth is Python's truthiness.
func truth(v value) bool {
	switch x := v.(type) {
	case nil, undefinedT:
		return false
	case bool:
		return x
	case int64:
		return x != 0
	case float64:
		return x != 0
	case string:
		return x != ""
	case []value:
		return len(x) > 0
	case *dict:
		return len(x.keys) > 0
	}
	return true
}

// str is Python's str() as Jinja prints values.
func str(v value) string {
	switch x := v.(type) {
	case undefinedT:
		return ""
	case string:
		return x
	}
	var b strings.Builder
	repr(&b, v, false)
	return b.String()
}

// repr writes Python's repr (quote=true) or str.
func repr(b *strings.Builder, v value, quote bool) {
	switch x := v.(type) {
	case undefinedT:
	case nil:
		b.WriteString("None")
	case bool:
		if x {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case float64:
		b.WriteString(pyFloat(x))
	case string:
		if quote {
			pyQuote(b, x)
		} else {
			b.WriteString(x)
		}
	case []value:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			repr(b, e, true)
		}
		b.WriteByte(']')
	case *dict:
		b.WriteByte('{')
		for i, k := range x.keys {
			if i > 0 {
				b.WriteString(", ")
			}
			pyQuote(b, k)
			b.WriteString(": ")
			repr(b, x.m[k], true)
		}
		b.WriteByte('}')
	case *macro:
		b.WriteString("<macro " + x.name + ">")
	}
}

func pyFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eIn") {
		s += ".0"
	}
	return s
}

func pyQuote(b *strings.Builder, s string) {
	q := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		q = '"'
	}
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == rune(q) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatInt(int64(r)|0x100, 16)[1:])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(q)
}

// toJSON writes v as Python's json.dumps(v, ensure_ascii=False, indent=indent)
// does (the tojson filter of Hugging Face's chat templates).
func toJSON(b *strings.Builder, v value, indent int, sortKeys bool, level int) {
	nl := func(l int) {
		if indent > 0 {
			b.WriteByte('\n')
			b.WriteString(strings.Repeat(" ", indent*l))
		}
	}
	sep := ", "
	if indent > 0 {
		sep = ","
	}
	switch x := v.(type) {
	case nil, undefinedT:
		b.WriteString("null")
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case float64:
		switch {
		case math.IsInf(x, 1):
			b.WriteString("Infinity")
		case math.IsInf(x, -1):
			b.WriteString("-Infinity")
		case math.IsNaN(x):
			b.WriteString("NaN")
		default:
			b.WriteString(pyFloat(x))
		}
	case string:
		jsonQuote(b, x)
	case []value:
		if len(x) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(sep)
			}
			nl(level + 1)
			toJSON(b, e, indent, sortKeys, level+1)
		}
		nl(level)
		b.WriteByte(']')
	case *dict:
		if len(x.keys) == 0 {
			b.WriteString("{}")
			return
		}
		keys := x.keys
		if sortKeys {
			keys = append([]string(nil), keys...)
			sort.Strings(keys)
		}
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteString(sep)
			}
			nl(level + 1)
			jsonQuote(b, k)
			b.WriteString(": ")
			toJSON(b, x.m[k], indent, sortKeys, level+1)
		}
		nl(level)
		b.WriteByte('}')
	default:
		jsonQuote(b, str(v))
	}
}

func jsonQuote(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteString(`\ufffd`)
			i++
			continue
		}
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if r < 0x20 {
				b.WriteString(`\u00`)
				b.WriteString(strconv.FormatInt(int64(r)|0x100, 16)[1:])
			} else {
				b.WriteString(s[i : i+n])
			}
		}
		i += n
	}
	b.WriteByte('"')
}

func typeName(v value) string {
	switch v.(type) {
	case undefinedT:
		return "undefined"
	case nil:
		return "none"
	case bool:
		return "bool"
	case int64:
		return "int"
	case float64:
		return "float"
	case string:
		return "str"
	case []value:
		return "list"
	case *dict:
		return "dict"
	case *macro:
		return "macro"
	}
	return "object"
}

// equal is Python's ==.
func equal(a, b value) bool {
	switch x := a.(type) {
	case undefinedT:
		return isUndefined(b)
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case int64, float64:
		fa, _ := toFloat(a)
		fb, ok := toFloat(b)
		if _, isBool := b.(bool); isBool {
			return false
		}
		return ok && fa == fb
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []value:
		y, ok := b.([]value)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case *dict:
		y, ok := b.(*dict)
		if !ok || len(x.keys) != len(y.keys) {
			return false
		}
		for _, k := range x.keys {
			w, ok := y.m[k]
			if !ok || !equal(x.m[k], w) {
				return false
			}
		}
		return true
	}
	return a == b
}

func toFloat(v value) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}
