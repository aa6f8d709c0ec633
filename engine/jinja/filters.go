package jinja

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A filter gets the value left of the "|" and the filter's arguments.
type filter func(v value, a args) (value, error)

// filters are Jinja's filters by name, with their aliases. map is not in
// the table: it applies the others by name (see applyFilter).
var filters = []entry[filter]{
	{"trim", func(v value, _ args) (value, error) { return strings.TrimSpace(str(v)), nil }},
	{"upper", func(v value, _ args) (value, error) { return strings.ToUpper(str(v)), nil }},
	{"lower", func(v value, _ args) (value, error) { return strings.ToLower(str(v)), nil }},
	{"title", func(v value, _ args) (value, error) { return title(str(v)), nil }},
	{"capitalize", func(v value, _ args) (value, error) { return capitalize(str(v)), nil }},
	{"string", func(v value, _ args) (value, error) { return str(v), nil }},
	{"e", escape},
	{"escape", escape},
	{"safe", func(v value, _ args) (value, error) { return v, nil }},

	{"length", length},
	{"count", length},
	{"tojson", tojson},
	{"int", toInt},
	{"float", toFloatFilter},
	{"abs", abs},
	{"default", defaultFilter},
	{"d", defaultFilter},

	{"list", list},
	{"first", func(v value, _ args) (value, error) { return end(v, false), nil }},
	{"last", func(v value, _ args) (value, error) { return end(v, true), nil }},
	{"join", join},
	{"replace", replaceFilter},
	{"items", items},
	{"unique", unique},
	{"reverse", reverse},
	{"indent", indent},

	{"select", func(v value, a args) (value, error) { return selecting(v, a, "select", false, true) }},
	{"reject", func(v value, a args) (value, error) { return selecting(v, a, "reject", false, false) }},
	{"selectattr", func(v value, a args) (value, error) { return selecting(v, a, "selectattr", true, true) }},
	{"rejectattr", func(v value, a args) (value, error) { return selecting(v, a, "rejectattr", true, false) }},
}

// applyFilter runs the filter name. map is dispatched here rather than from
// the table because it calls applyFilter itself, and a table row that
// refers back to the table is an initialization cycle.
func applyFilter(name string, v value, a args) (value, error) {
	if name == "map" {
		return mapFilter(v, a)
	}
	f, ok := lookup(filters, name)
	if !ok {
		return nil, fmt.Errorf("%w: unknown filter %q", ErrRender, name)
	}
	return f(v, a)
}

// escape is HTML escaping of the value as printed.
func escape(v value, _ args) (value, error) {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;").Replace(str(v)), nil
}

// length is the number of characters, items or keys.
func length(v value, _ args) (value, error) {
	switch x := v.(type) {
	case string:
		return int64(utf8.RuneCountInString(x)), nil
	case []value:
		return int64(len(x)), nil
	case *dict:
		return int64(len(x.keys)), nil
	case undefinedT:
		return int64(0), nil
	}
	return nil, fmt.Errorf("%w: %s has no length", ErrRender, typeName(v))
}

// tojson(indent=N, sort_keys=B) is Python's json.dumps.
func tojson(v value, a args) (value, error) {
	indent := 0
	if n, ok := a.get(0, "indent").(int64); ok {
		indent = int(n)
	}
	var b strings.Builder
	toJSON(&b, v, indent, truth(a.keyword("sort_keys")), 0)
	return b.String(), nil
}

// toInt is the int filter: 0 for what does not convert.
func toInt(v value, _ args) (value, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case float64:
		return int64(x), nil
	case bool:
		if x {
			return int64(1), nil
		}
		return int64(0), nil
	case string:
		s := strings.TrimSpace(x)
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n, nil
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return int64(f), nil
		}
	}
	return int64(0), nil
}

// toFloatFilter is the float filter: 0.0 for what does not convert.
func toFloatFilter(v value, _ args) (value, error) {
	if f, ok := toFloat(v); ok {
		return f, nil
	}
	if s, ok := v.(string); ok {
		if f, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil {
			return f, nil
		}
	}
	return 0.0, nil
}

func abs(v value, _ args) (value, error) {
	switch x := v.(type) {
	case int64:
		if x < 0 {
			return -x, nil
		}
		return x, nil
	case float64:
		return math.Abs(x), nil
	}
	return nil, fmt.Errorf("%w: abs of %s", ErrRender, typeName(v))
}

// default(value="", boolean=false) replaces an undefined value, or with
// boolean also a false one.
func defaultFilter(v value, a args) (value, error) {
	def := a.get(0, "default_value")
	if isUndefined(def) {
		def = ""
	}
	if isUndefined(v) || truth(a.get(1, "boolean")) && !truth(v) {
		return def, nil
	}
	return v, nil
}

// list is a list's items, a string's characters or a dict's keys.
func list(v value, _ args) (value, error) {
	switch x := v.(type) {
	case []value:
		return x, nil
	case string:
		return chars(x), nil
	case *dict:
		return x.keyList(), nil
	case undefinedT:
		return []value{}, nil
	}
	return nil, fmt.Errorf("%w: cannot make a list of %s", ErrRender, typeName(v))
}

// end is the first or the last item of a list or character of a string;
// undefined for an empty one or another value.
func end(v value, last bool) value {
	var items []value
	switch x := v.(type) {
	case []value:
		items = x
	case string:
		items = chars(x)
	}
	switch {
	case len(items) == 0:
		return undefined
	case last:
		return items[len(items)-1]
	}
	return items[0]
}

// join(d="", attribute=A) joins the items (or their attribute A) as printed.
func join(v value, a args) (value, error) {
	sep, _ := a.get(0, "d").(string)
	items, err := iterItems(v)
	if err != nil {
		return nil, err
	}
	if attr, ok := a.get(1, "attribute").(string); ok {
		for i, it := range items {
			items[i] = attrOf(it, attr)
		}
	}
	var b strings.Builder
	for i, it := range items {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(str(it))
		if b.Len() > maxOutput {
			return nil, fmt.Errorf("%w: string too long", ErrRender)
		}
	}
	return b.String(), nil
}

// replace(old, new) on the value as printed.
func replaceFilter(v value, a args) (value, error) {
	old, ok1 := a.get(0, "old").(string)
	repl, ok2 := a.get(1, "new").(string)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("%w: replace needs two strings", ErrRender)
	}
	return replace(str(v), old, repl)
}

// items is a dict's [key, value] pairs; empty for anything else.
func items(v value, _ args) (value, error) {
	if d, ok := v.(*dict); ok {
		return d.items(), nil
	}
	return []value{}, nil
}

// unique drops the items equal to an earlier one.
func unique(v value, _ args) (value, error) {
	items, err := iterItems(v)
	if err != nil {
		return nil, err
	}
	out := []value{}
	for _, it := range items {
		dup := false
		for _, o := range out {
			if equal(o, it) {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, it)
		}
	}
	return out, nil
}

func reverse(v value, _ args) (value, error) {
	switch x := v.(type) {
	case string:
		r := []rune(x)
		for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
			r[i], r[j] = r[j], r[i]
		}
		return string(r), nil
	case []value:
		out := make([]value, len(x))
		for i := range x {
			out[len(x)-1-i] = x[i]
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w: cannot reverse %s", ErrRender, typeName(v))
}

// indent(width=4, first=false, blank=false) indents every line but the
// first (and the first with first) that is not blank (blank ones too with
// blank).
func indent(v value, a args) (value, error) {
	width := int64(4)
	if n, ok := a.get(0, "width").(int64); ok {
		width = n
	}
	if width < 0 || width > 1024 {
		return nil, fmt.Errorf("%w: bad indent width", ErrRender)
	}
	pad := strings.Repeat(" ", int(width))
	lines := strings.Split(str(v), "\n")
	for i := 1; i < len(lines); i++ {
		if lines[i] != "" || truth(a.get(2, "blank")) {
			lines[i] = pad + lines[i]
		}
	}
	s := strings.Join(lines, "\n")
	if truth(a.get(1, "first")) {
		s = pad + s
	}
	if len(s) > maxOutput {
		return nil, fmt.Errorf("%w: string too long", ErrRender)
	}
	return s, nil
}

// selecting is select and reject (byAttr false: "select(test, args...)" on
// the items) and selectattr and rejectattr ("selectattr(attr, test,
// args...)" on an attribute of the items). Without a test, the item's truth
// decides. keep is whether the passing items are kept.
func selecting(v value, a args, name string, byAttr, keep bool) (value, error) {
	items, err := iterItems(v)
	if err != nil {
		return nil, err
	}
	rest, attr := a.pos, ""
	if byAttr {
		s, ok := a.get(0, "").(string)
		if !ok {
			return nil, fmt.Errorf("%w: %s needs an attribute name", ErrRender, name)
		}
		attr, rest = s, rest[1:]
	}
	out := []value{}
	for _, it := range items {
		x := it
		if byAttr {
			x = attrOf(it, attr)
		}
		pass := truth(x)
		if len(rest) > 0 {
			tn, ok := rest[0].(string)
			if !ok {
				return nil, fmt.Errorf("%w: %s: test name must be a string", ErrRender, name)
			}
			if pass, err = runTest(tn, x, rest[1:]); err != nil {
				return nil, err
			}
		}
		if pass == keep {
			out = append(out, it)
		}
	}
	return out, nil
}

// mapFilter is map(attribute=A), the items' attribute A, or map(filter,
// args...), the filter applied to every item.
func mapFilter(v value, a args) (value, error) {
	items, err := iterItems(v)
	if err != nil {
		return nil, err
	}
	out := make([]value, len(items))
	if attr, ok := a.keyword("attribute").(string); ok {
		for i, it := range items {
			out[i] = attrOf(it, attr)
		}
		return out, nil
	}
	if len(a.pos) == 0 {
		return nil, fmt.Errorf("%w: map needs a filter or attribute=", ErrRender)
	}
	name, ok := a.pos[0].(string)
	if !ok {
		return nil, fmt.Errorf("%w: map needs a filter name", ErrRender)
	}
	for i, it := range items {
		if out[i], err = applyFilter(name, it, args{pos: a.pos[1:]}); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// iterItems is a copy of the items a for loop would visit.
func iterItems(v value) ([]value, error) {
	switch x := v.(type) {
	case []value:
		return append([]value(nil), x...), nil
	case *dict:
		return x.keyList(), nil
	case string:
		return chars(x), nil
	case undefinedT, nil:
		return nil, nil
	}
	return nil, fmt.Errorf("%w: %s is not iterable", ErrRender, typeName(v))
}

// chars is a string's characters, one string each.
func chars(s string) []value {
	out := []value{}
	for _, r := range s {
		out = append(out, string(r))
	}
	return out
}

// attrOf follows a dotted attribute path ("a.b") through dicts.
func attrOf(v value, path string) value {
	for _, part := range strings.Split(path, ".") {
		d, ok := v.(*dict)
		if !ok {
			return undefined
		}
		x, ok := d.m[part]
		if !ok {
			return undefined
		}
		v = x
	}
	return v
}
