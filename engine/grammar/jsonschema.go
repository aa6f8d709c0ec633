package grammar

// JSON Schema to GBNF. The grammar generates a subset of the instances the schema accepts: every output
// validates, though not every valid instance can be generated (keys come in the order of "properties",
// objects get no properties beyond those a schema names unless additionalProperties asks for them,
// numbers have at most 15 integer digits, whitespace is bounded).
//
// Supported: type (one or a list), properties, required, additionalProperties (false, true or a schema:
// then additional keys differ from the named ones), enum, const; items (a schema, or a list as a tuple),
// prefixItems, minItems, maxItems; minLength, maxLength, format (date, time, date-time, uuid), pattern
// (a regular expression of literals, classes, groups, alternation and quantifiers; full matches are
// generated, which also contain a match); integer and number with minimum, maximum, exclusiveMinimum,
// exclusiveMaximum (numbers with bounds get no exponent); anyOf, oneOf (as anyOf: its alternatives
// should be disjoint), allOf (of objects, merged; or of enums, intersected), $ref to "#", "#/$defs/..",
// "#/definitions/.." or any JSON pointer into the document, and nullable. Annotations (title,
// description, default, examples, $schema, $id, $comment, deprecated, readOnly, writeOnly) are ignored.
// Any other keyword is refused with an error naming it.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ErrSchema is returned (wrapped) for a JSON Schema that cannot be converted.
var ErrSchema = errors.New("json schema")

// FromJSONSchema compiles a JSON Schema into a grammar of the JSON documents it accepts.
func FromJSONSchema(schema []byte) (*GBNF, error) {
	src, err := JSONSchemaGBNF(schema)
	if err != nil {
		return nil, err
	}
	g, err := parseGBNF(src)
	if err != nil {
		return nil, fmt.Errorf("%w: the generated grammar does not compile (a bug): %w", ErrSchema, err)
	}
	if err := g.check(); err != nil { // a $ref cycle with no way out, or back to itself before any text
		return nil, fmt.Errorf("%w: the schema has no finite instance, or a $ref reaches itself before any JSON text: %w", ErrSchema, err)
	}
	return g, nil
}

// JSONSchemaGBNF converts a JSON Schema into GBNF source text (see FromJSONSchema).
func JSONSchemaGBNF(schema []byte) (string, error) {
	root, err := parseOrdered(schema)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrSchema, err)
	}
	c := &conv{doc: root, bodies: map[string]string{}, refs: map[string]string{}}
	c.define("root", `""`) // reserved: the schema's own rules get other names
	body, err := c.expr(root, "root", "#")
	if err != nil {
		return "", err
	}
	c.define("root", body)
	var b strings.Builder
	for _, name := range c.order {
		b.WriteString(name)
		b.WriteString(" ::= ")
		b.WriteString(c.bodies[name])
		b.WriteByte('\n')
	}
	return b.String(), nil
}

// jv is a JSON value that keeps the order of object members.
type jv struct {
	kind byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' boolean, 'z' null
	keys []string
	vals []*jv
	arr  []*jv
	s    string // string value, or number text
	b    bool
}

func (v *jv) get(k string) *jv {
	if v == nil || v.kind != 'o' {
		return nil
	}
	for i := len(v.keys) - 1; i >= 0; i-- {
		if v.keys[i] == k {
			return v.vals[i]
		}
	}
	return nil
}

const maxSchemaDepth = 128

func parseOrdered(b []byte) (*jv, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	v, err := decodeValue(d, 0)
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); err == nil {
		return nil, errors.New("more data after the schema")
	}
	return v, nil
}

func decodeValue(d *json.Decoder, depth int) (*jv, error) {
	if depth > maxSchemaDepth {
		return nil, fmt.Errorf("nested deeper than %d", maxSchemaDepth)
	}
	t, err := d.Token()
	if err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	switch t := t.(type) {
	case json.Delim:
		switch t {
		case '{':
			v := &jv{kind: 'o'}
			for d.More() {
				kt, err := d.Token()
				if err != nil {
					return nil, fmt.Errorf("not valid JSON: %w", err)
				}
				val, err := decodeValue(d, depth+1)
				if err != nil {
					return nil, err
				}
				v.keys = append(v.keys, kt.(string))
				v.vals = append(v.vals, val)
			}
			_, err = d.Token()
			return v, err
		case '[':
			v := &jv{kind: 'a'}
			for d.More() {
				val, err := decodeValue(d, depth+1)
				if err != nil {
					return nil, err
				}
				v.arr = append(v.arr, val)
			}
			_, err = d.Token()
			return v, err
		}
	case string:
		return &jv{kind: 's', s: t}, nil
	case json.Number:
		return &jv{kind: 'n', s: t.String()}, nil
	case bool:
		return &jv{kind: 'b', b: t}, nil
	case nil:
		return &jv{kind: 'z'}, nil
	}
	return nil, fmt.Errorf("unexpected JSON token %v", t)
}

// encode appends v as compact JSON.
func (v *jv) encode(b *strings.Builder) {
	switch v.kind {
	case 'o':
		b.WriteByte('{')
		for i, k := range v.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSONString(b, k)
			b.WriteByte(':')
			v.vals[i].encode(b)
		}
		b.WriteByte('}')
	case 'a':
		b.WriteByte('[')
		for i, x := range v.arr {
			if i > 0 {
				b.WriteByte(',')
			}
			x.encode(b)
		}
		b.WriteByte(']')
	case 's':
		writeJSONString(b, v.s)
	case 'n':
		b.WriteString(v.s)
	case 'b':
		b.WriteString(strconv.FormatBool(v.b))
	case 'z':
		b.WriteString("null")
	}
}

func writeJSONString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20:
			fmt.Fprintf(b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

func (v *jv) json() string {
	var b strings.Builder
	v.encode(&b)
	return b.String()
}

// gbnfLiteral quotes s as a GBNF literal.
func gbnfLiteral(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7F:
			fmt.Fprintf(&b, `\x%02X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// gbnfClass writes code point ranges as a GBNF character class.
func gbnfClass(rs []crange) string {
	var b strings.Builder
	b.WriteByte('[')
	esc := func(r rune) {
		switch {
		case 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9':
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02X`, r)
		case r < 0x10000:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			fmt.Fprintf(&b, `\U%08X`, r)
		}
	}
	for _, r := range rs {
		// Surrogates are no characters (GBNF refuses their escapes): clip them off the ends.
		if 0xD800 <= r.lo && r.lo <= 0xDFFF {
			r.lo = 0xE000
		}
		if 0xD800 <= r.hi && r.hi <= 0xDFFF {
			r.hi = 0xD7FF
		}
		if r.lo > r.hi {
			continue
		}
		esc(r.lo)
		if r.hi > r.lo {
			b.WriteByte('-')
			esc(r.hi)
		}
	}
	b.WriteByte(']')
	return b.String()
}

// The rules every schema grammar may use, by name.
var primitives = map[string]string{
	"space":         `| " " | "\n" [ \t]{0,20}`,
	"key-char":      `[^"\\\x7F\x00-\x1F]`,
	"char":          `[^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" ([0-9a-cA-CefEF] [0-9a-fA-F]{3} | [dD] [0-7] [0-9a-fA-F]{2}))`,
	"string":        `"\"" char* "\"" space`,
	"integral-part": `[0] | [1-9] [0-9]{0,14}`,
	"number":        `("-"? integral-part) ("." [0-9]{1,15})? ([eE] [-+]? [0-9]{1,2})? space`,
	"integer":       `("-"? integral-part) space`,
	"boolean":       `("true" | "false") space`,
	"null":          `"null" space`,
	"value":         `object | array | string | number | boolean | null`,
	"object":        `"{" space ( string ":" space value ("," space string ":" space value)* )? "}" space`,
	"array":         `"[" space ( value ("," space value)* )? "]" space`,
	"date":          `[0-9]{4} "-" ( ("0" [13578] | "1" [02]) "-" ("0" [1-9] | [12] [0-9] | "3" [01]) | ("0" [469] | "11") "-" ("0" [1-9] | [12] [0-9] | "30") | "02" "-" ("0" [1-9] | "1" [0-9] | "2" [0-8]) )`,
	"time":          `([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9] ":" [0-5] [0-9] ("." [0-9]{1,3})? ("Z" | [+-] ([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9])`,
	"date-time":     `date "T" time`,
	"uuid":          `[0-9a-fA-F]{8} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{12}`,
}

// primitiveDeps are the rules each primitive refers to.
var primitiveDeps = map[string][]string{
	"string": {"char", "space"}, "number": {"integral-part", "space"}, "integer": {"integral-part", "space"},
	"boolean": {"space"}, "null": {"space"}, "value": {"object", "array", "string", "number", "boolean", "null"},
	"object": {"space", "string", "value"}, "array": {"space", "value"}, "date-time": {"date", "time"},
}

type conv struct {
	doc    *jv
	bodies map[string]string
	order  []string
	refs   map[string]string // JSON pointer -> rule name
	depth  int
}

// use makes sure primitive rule name is defined and returns its name.
func (c *conv) use(name string) string {
	if _, ok := c.bodies[name]; ok {
		return name
	}
	c.bodies[name] = primitives[name]
	c.order = append(c.order, name)
	for _, d := range primitiveDeps[name] {
		c.use(d)
	}
	return name
}

// fresh returns an unused rule name based on hint.
func (c *conv) fresh(hint string) string {
	var b strings.Builder
	for _, r := range hint {
		if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	base := b.String()
	if base == "" {
		base = "r"
	}
	if len(base) > 60 {
		base = base[:60]
	}
	name := base
	for i := 1; ; i++ {
		_, taken := c.bodies[name]
		_, prim := primitives[name]
		if !taken && !prim {
			return name
		}
		name = base + "-" + strconv.Itoa(i)
	}
}

// define sets the body of a rule made by fresh (or root).
func (c *conv) define(name, body string) {
	if _, ok := c.bodies[name]; !ok {
		c.order = append(c.order, name)
	}
	c.bodies[name] = body
}

// rule defines a new rule for body and returns its name.
func (c *conv) rule(hint, body string) string {
	name := c.fresh(hint)
	c.define(name, body)
	return name
}

func schemaErr(path, format string, args ...any) error {
	return fmt.Errorf("%w: at %s: %s", ErrSchema, path, fmt.Sprintf(format, args...))
}

var annotations = map[string]bool{"title": true, "description": true, "default": true, "examples": true,
	"$schema": true, "$id": true, "$comment": true, "deprecated": true, "readOnly": true, "writeOnly": true,
	"$defs": true, "definitions": true}

var supported = map[string]bool{"type": true, "properties": true, "required": true, "additionalProperties": true,
	"enum": true, "const": true, "items": true, "prefixItems": true, "minItems": true, "maxItems": true,
	"minLength": true, "maxLength": true, "format": true, "pattern": true, "minimum": true, "maximum": true,
	"exclusiveMinimum": true, "exclusiveMaximum": true, "anyOf": true, "oneOf": true, "allOf": true, "$ref": true,
	"nullable": true}

// check refuses keywords the converter does not implement.
func checkKeywords(s *jv, path string) error {
	for _, k := range s.keys {
		if !supported[k] && !annotations[k] && !strings.HasPrefix(k, "x-") {
			if k == "uniqueItems" {
				if v := s.get(k); v.kind == 'b' && !v.b {
					continue
				}
			}
			return schemaErr(path, "keyword %q is not supported", k)
		}
	}
	return nil
}

// expr returns a GBNF expression for the documents schema s accepts (name: a hint for the rules it makes).
func (c *conv) expr(s *jv, name, path string) (string, error) {
	if c.depth++; c.depth > maxSchemaDepth {
		return "", schemaErr(path, "schemas nested deeper than %d", maxSchemaDepth)
	}
	defer func() { c.depth-- }()
	switch s.kind {
	case 'b':
		if s.b {
			return c.use("value"), nil
		}
		return "", schemaErr(path, "the schema false accepts nothing")
	case 'o':
	default:
		return "", schemaErr(path, "a schema must be an object or a boolean, not %s", s.json())
	}
	if err := checkKeywords(s, path); err != nil {
		return "", err
	}
	if n := s.get("nullable"); n != nil {
		if n.kind != 'b' {
			return "", schemaErr(path, "nullable must be a boolean")
		}
		if n.b {
			inner, err := c.expr(without(s, "nullable"), name, path)
			if err != nil {
				return "", err
			}
			return "(" + inner + " | " + c.use("null") + ")", nil
		}
	}
	if r := s.get("$ref"); r != nil {
		if r.kind != 's' {
			return "", schemaErr(path, "$ref must be a string")
		}
		for _, k := range s.keys {
			if k != "$ref" && !annotations[k] {
				return "", schemaErr(path, "keyword %q beside $ref is not supported", k)
			}
		}
		return c.ref(r.s, path)
	}
	if a := s.get("allOf"); a != nil {
		merged, err := c.mergeAllOf(s, path)
		if err != nil {
			return "", err
		}
		return c.expr(merged, name, path)
	}
	for _, kw := range []string{"anyOf", "oneOf"} {
		a := s.get(kw)
		if a == nil {
			continue
		}
		if a.kind != 'a' || len(a.arr) == 0 {
			return "", schemaErr(path, "%s must be a non-empty array", kw)
		}
		typ := s.get("type")
		for _, k := range s.keys {
			if k != kw && k != "type" && !annotations[k] {
				return "", schemaErr(path, "keyword %q beside %s is not supported", k, kw)
			}
		}
		var alts []string
		for i, alt := range a.arr {
			if typ != nil && alt.kind == 'o' && alt.get("type") == nil && alt.get("$ref") == nil {
				alt = with(alt, "type", typ)
			}
			e, err := c.expr(alt, name+"-"+strconv.Itoa(i), fmt.Sprintf("%s/%s/%d", path, kw, i))
			if err != nil {
				return "", err
			}
			alts = append(alts, e)
		}
		return c.rule(name, strings.Join(alts, " | ")), nil
	}
	if v := s.get("const"); v != nil {
		return gbnfLiteral(v.json()) + " " + c.use("space"), nil
	}
	if e := s.get("enum"); e != nil {
		if e.kind != 'a' || len(e.arr) == 0 {
			return "", schemaErr(path, "enum must be a non-empty array")
		}
		types := typeList(s.get("type"))
		var alts []string
		for _, v := range e.arr {
			if types == nil || slices.Contains(types, jsonType(v)) || jsonType(v) == "integer" && slices.Contains(types, "number") {
				alts = append(alts, gbnfLiteral(v.json()))
			}
		}
		if len(alts) == 0 {
			return "", schemaErr(path, "no enum value has the schema's type")
		}
		return "(" + strings.Join(alts, " | ") + ") " + c.use("space"), nil
	}
	t := s.get("type")
	if t != nil && t.kind == 'a' {
		if len(t.arr) == 0 {
			return "", schemaErr(path, "type must not be an empty list")
		}
		var alts []string
		for _, x := range t.arr {
			e, err := c.expr(with(s, "type", x), name, path)
			if err != nil {
				return "", err
			}
			alts = append(alts, e)
		}
		return c.rule(name, strings.Join(alts, " | ")), nil
	}
	var typ string
	if t != nil {
		if t.kind != 's' {
			return "", schemaErr(path, "type must be a string or a list of strings")
		}
		typ = t.s
	} else {
		typ = inferType(s)
	}
	switch typ {
	case "object":
		return c.object(s, name, path)
	case "array":
		return c.array(s, name, path)
	case "string":
		return c.str(s, name, path)
	case "integer", "number":
		return c.number(s, typ, path)
	case "boolean":
		return c.use("boolean"), nil
	case "null":
		return c.use("null"), nil
	case "":
		return c.use("value"), nil
	}
	return "", schemaErr(path, "unknown type %q", typ)
}

func typeList(t *jv) []string {
	switch {
	case t == nil:
		return nil
	case t.kind == 's':
		return []string{t.s}
	case t.kind == 'a':
		var l []string
		for _, x := range t.arr {
			if x.kind == 's' {
				l = append(l, x.s)
			}
		}
		return l
	}
	return nil
}

func jsonType(v *jv) string {
	switch v.kind {
	case 'o':
		return "object"
	case 'a':
		return "array"
	case 's':
		return "string"
	case 'b':
		return "boolean"
	case 'z':
		return "null"
	}
	if f, err := strconv.ParseFloat(v.s, 64); err == nil && f == math.Trunc(f) {
		return "integer"
	}
	return "number"
}

// inferType is the type a schema without "type" implies by its keywords ("" for any value).
func inferType(s *jv) string {
	has := func(ks ...string) bool {
		for _, k := range ks {
			if s.get(k) != nil {
				return true
			}
		}
		return false
	}
	switch {
	case has("properties", "required", "additionalProperties"):
		return "object"
	case has("items", "prefixItems", "minItems", "maxItems"):
		return "array"
	case has("minLength", "maxLength", "pattern", "format"):
		return "string"
	case has("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
		return "number"
	}
	return ""
}

// with returns a copy of object s with key k set to v; without, with k removed.
func with(s *jv, k string, v *jv) *jv {
	n := without(s, k)
	n.keys = append(n.keys, k)
	n.vals = append(n.vals, v)
	return n
}

func without(s *jv, k string) *jv {
	n := &jv{kind: 'o'}
	for i, key := range s.keys {
		if key != k {
			n.keys = append(n.keys, key)
			n.vals = append(n.vals, s.vals[i])
		}
	}
	return n
}

// ref returns the rule for a JSON pointer into the schema document, converting it on first use (a
// recursive schema refers to its rule by name).
func (c *conv) ref(ref, path string) (string, error) {
	if name, ok := c.refs[ref]; ok {
		return name, nil
	}
	target, err := c.resolve(ref)
	if err != nil {
		return "", schemaErr(path, "$ref %q: %v", ref, err)
	}
	hint := "ref" + strings.ReplaceAll(strings.TrimPrefix(ref, "#"), "/", "-")
	name := c.fresh(hint)
	c.refs[ref] = name
	c.define(name, `""`) // placeholder while the target converts
	body, err := c.expr(target, name, ref)
	if err != nil {
		return "", err
	}
	if body == name {
		return "", schemaErr(path, "$ref %q refers to itself", ref)
	}
	c.define(name, body)
	return name, nil
}

func (c *conv) resolve(ref string) (*jv, error) {
	if !strings.HasPrefix(ref, "#") {
		return nil, errors.New("only references inside the schema (starting with #) are supported")
	}
	v := c.doc
	p := strings.TrimPrefix(ref, "#")
	if p == "" {
		return v, nil
	}
	if !strings.HasPrefix(p, "/") {
		return nil, errors.New("anchors are not supported, only JSON pointers")
	}
	for _, part := range strings.Split(p[1:], "/") {
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		switch v.kind {
		case 'o':
			next := v.get(part)
			if next == nil {
				return nil, fmt.Errorf("no member %q", part)
			}
			v = next
		case 'a':
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(v.arr) {
				return nil, fmt.Errorf("no element %q", part)
			}
			v = v.arr[i]
		default:
			return nil, fmt.Errorf("%q goes inside a scalar", part)
		}
	}
	return v, nil
}

// deref follows $ref (without converting) so allOf can merge what it refers to.
func (c *conv) deref(s *jv, path string) (*jv, error) {
	for i := 0; s.kind == 'o' && s.get("$ref") != nil; i++ {
		if i > 32 {
			return nil, schemaErr(path, "$ref chain longer than 32")
		}
		r := s.get("$ref")
		if r.kind != 's' {
			return nil, schemaErr(path, "$ref must be a string")
		}
		t, err := c.resolve(r.s)
		if err != nil {
			return nil, schemaErr(path, "$ref %q: %v", r.s, err)
		}
		s = t
	}
	return s, nil
}

// mergeAllOf merges the schemas of allOf (and s's own keywords) into one: properties and required are
// united, enums intersected; an anyOf part contributes its alternatives' properties as optional.
func (c *conv) mergeAllOf(s *jv, path string) (*jv, error) {
	a := s.get("allOf")
	if a.kind != 'a' || len(a.arr) == 0 {
		return nil, schemaErr(path, "allOf must be a non-empty array")
	}
	out := &jv{kind: 'o'}
	props := &jv{kind: 'o'}
	var required []*jv
	var enum *jv
	var parts []*jv
	parts = append(parts, without(s, "allOf"))
	for i, p := range a.arr {
		d, err := c.deref(p, fmt.Sprintf("%s/allOf/%d", path, i))
		if err != nil {
			return nil, err
		}
		if d.kind != 'o' {
			return nil, schemaErr(path, "allOf/%d must be an object schema", i)
		}
		if d.get("allOf") != nil {
			if d, err = c.mergeAllOf(d, fmt.Sprintf("%s/allOf/%d", path, i)); err != nil {
				return nil, err
			}
		}
		parts = append(parts, d)
	}
	addProps := func(p *jv) {
		if p == nil || p.kind != 'o' {
			return
		}
		for i, k := range p.keys {
			if props.get(k) == nil {
				props.keys = append(props.keys, k)
				props.vals = append(props.vals, p.vals[i])
			}
		}
	}
	for i, p := range parts {
		ppath := path
		if i > 0 {
			ppath = fmt.Sprintf("%s/allOf/%d", path, i-1)
		}
		for j, k := range p.keys {
			v := p.vals[j]
			switch {
			case annotations[k]:
			case k == "properties":
				addProps(v)
			case k == "required":
				if v.kind == 'a' {
					required = append(required, v.arr...)
				}
			case k == "enum":
				if enum == nil {
					enum = v
				} else {
					enum = intersect(enum, v)
				}
			case k == "anyOf":
				if v.kind != 'a' {
					return nil, schemaErr(ppath, "anyOf must be an array")
				}
				for n, alt := range v.arr {
					d, err := c.deref(alt, fmt.Sprintf("%s/anyOf/%d", ppath, n))
					if err != nil {
						return nil, err
					}
					if d.kind != 'o' || d.get("required") != nil || d.get("properties") == nil {
						return nil, schemaErr(ppath, "anyOf inside allOf: only alternatives of optional properties are supported")
					}
					addProps(d.get("properties"))
				}
			default:
				if prev := out.get(k); prev != nil && prev.json() != v.json() {
					return nil, schemaErr(ppath, "allOf: merging two different %q is not supported", k)
				}
				if out.get(k) == nil {
					out.keys = append(out.keys, k)
					out.vals = append(out.vals, v)
				}
			}
		}
	}
	if len(props.keys) > 0 {
		out = with(out, "properties", props)
	}
	if len(required) > 0 {
		out = with(out, "required", &jv{kind: 'a', arr: required})
	}
	if enum != nil {
		if len(enum.arr) == 0 {
			return nil, schemaErr(path, "allOf: the enums have no value in common")
		}
		out = with(out, "enum", enum)
	}
	return out, nil
}

func intersect(a, b *jv) *jv {
	out := &jv{kind: 'a'}
	if a.kind != 'a' || b.kind != 'a' {
		return out
	}
	for _, x := range a.arr {
		for _, y := range b.arr {
			if x.json() == y.json() {
				out.arr = append(out.arr, x)
				break
			}
		}
	}
	return out
}

func nonNegInt(s *jv, k, path string) (int, bool, error) {
	v := s.get(k)
	if v == nil {
		return 0, false, nil
	}
	if v.kind != 'n' {
		return 0, false, schemaErr(path, "%s must be a number", k)
	}
	f, err := strconv.ParseFloat(v.s, 64)
	if err != nil || f < 0 || f != math.Trunc(f) {
		return 0, false, schemaErr(path, "%s must be a non-negative integer", k)
	}
	if f > MaxRepeat {
		return 0, false, schemaErr(path, "%s %s is over the limit of %d", k, v.s, MaxRepeat)
	}
	return int(f), true, nil
}

// repeatSep is item repeated between lo and hi times (hi < 0: unbounded), separated by "," space.
func (c *conv) repeatSep(item string, lo, hi int) string {
	sp := c.use("space")
	sep := `"," ` + sp + " " + item
	switch {
	case hi == 0:
		return `""`
	case lo == 0:
		return "(" + c.repeatSep(item, 1, hi) + ")?"
	}
	tail := ""
	switch {
	case hi < 0:
		tail = fmt.Sprintf("(%s){%d,}", sep, lo-1)
	default:
		tail = fmt.Sprintf("(%s){%d,%d}", sep, lo-1, hi-1)
	}
	return item + " " + tail
}

func (c *conv) array(s *jv, name, path string) (string, error) {
	minItems, _, err := nonNegInt(s, "minItems", path)
	if err != nil {
		return "", err
	}
	maxItems, hasMax, err := nonNegInt(s, "maxItems", path)
	if err != nil {
		return "", err
	}
	if !hasMax {
		maxItems = -1
	} else if maxItems < minItems {
		return "", schemaErr(path, "maxItems %d is below minItems %d", maxItems, minItems)
	}
	sp := c.use("space")
	var tuple []*jv
	items := s.get("items")
	if p := s.get("prefixItems"); p != nil {
		switch p.kind {
		case 'a':
			tuple = p.arr
		case 'o':
			items = p // llama.cpp's test reads an object prefixItems as the items schema
		default:
			return "", schemaErr(path, "prefixItems must be an array")
		}
	}
	if items != nil && items.kind == 'a' {
		tuple, items = items.arr, nil
	}
	var parts []string
	for i, t := range tuple {
		if maxItems >= 0 && i >= maxItems {
			break
		}
		e, err := c.expr(t, fmt.Sprintf("%s-%d", name, i), fmt.Sprintf("%s/prefixItems/%d", path, i))
		if err != nil {
			return "", err
		}
		parts = append(parts, e)
	}
	n := len(parts)
	var body strings.Builder
	body.WriteString(`"[" ` + sp + " ")
	for i, p := range parts {
		if i > 0 {
			body.WriteString(`"," ` + sp + " ")
		}
		body.WriteString(p + " ")
	}
	more := 0 // items after the tuple: between lo and hi
	lo, hi := max(minItems-n, 0), -1
	if maxItems >= 0 {
		hi = maxItems - n
	}
	item := ""
	switch {
	case items != nil && items.kind == 'b' && !items.b:
		hi = 0
		if lo > 0 {
			return "", schemaErr(path, "minItems %d needs items beyond the tuple, which items: false forbids", minItems)
		}
	case items != nil:
		if item, err = c.expr(items, name+"-item", path+"/items"); err != nil {
			return "", err
		}
	case n > 0:
		hi = lo // a tuple alone: only the extra items minItems asks for
		item = c.use("value")
	default:
		item = c.use("value")
	}
	if hi != 0 {
		more = 1
	}
	if more > 0 {
		if n == 0 {
			body.WriteString(c.repeatSep(item, lo, hi) + " ")
		} else {
			sep := `("," ` + sp + " " + item + ")"
			if hi < 0 {
				fmt.Fprintf(&body, "%s{%d,} ", sep, lo)
			} else {
				fmt.Fprintf(&body, "%s{%d,%d} ", sep, lo, hi)
			}
		}
	}
	body.WriteString(`"]" ` + sp)
	return c.rule(name, body.String()), nil
}

func (c *conv) object(s *jv, name, path string) (string, error) {
	sp := c.use("space")
	props := s.get("properties")
	if props != nil && props.kind != 'o' {
		return "", schemaErr(path, "properties must be an object")
	}
	req := map[string]bool{}
	var reqOrder []string
	if r := s.get("required"); r != nil {
		if r.kind != 'a' {
			return "", schemaErr(path, "required must be an array")
		}
		for _, x := range r.arr {
			if x.kind != 's' {
				return "", schemaErr(path, "required must list strings")
			}
			if !req[x.s] {
				req[x.s] = true
				reqOrder = append(reqOrder, x.s)
			}
		}
	}
	type prop struct {
		key  string
		kv   string
		need bool
	}
	var all []prop
	names := map[string]bool{}
	if props != nil {
		for i, k := range props.keys {
			if names[k] {
				continue
			}
			names[k] = true
			e, err := c.expr(props.vals[i], name+"-"+k, path+"/properties/"+k)
			if err != nil {
				return "", err
			}
			kv := c.rule(name+"-"+k+"-kv", gbnfLiteral(jsonQuote(k))+" "+sp+` ":" `+sp+" "+e)
			all = append(all, prop{k, kv, req[k]})
		}
	}
	for _, k := range reqOrder { // required but not described: any value
		if !names[k] {
			names[k] = true
			kv := c.rule(name+"-"+k+"-kv", gbnfLiteral(jsonQuote(k))+" "+sp+` ":" `+sp+" "+c.use("value"))
			all = append(all, prop{k, kv, true})
		}
	}
	// Additional properties: a schema or true; absent means none when properties are named.
	additional := ""
	ap := s.get("additionalProperties")
	switch {
	case ap == nil && props == nil && len(reqOrder) == 0:
		additional = c.use("value")
	case ap == nil, ap.kind == 'b' && !ap.b:
	case ap.kind == 'b' && ap.b:
		additional = c.use("value")
	default:
		e, err := c.expr(ap, name+"-additional", path+"/additionalProperties")
		if err != nil {
			return "", err
		}
		additional = e
	}
	addKV := ""
	if additional != "" {
		var keys []string
		for k := range names {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		addKV = c.rule(name+"-additional-kv", c.keyExcept(keys)+` ":" `+sp+" "+additional)
	}
	var required, optional []prop
	for _, p := range all {
		if p.need {
			required = append(required, p)
		} else {
			optional = append(optional, p)
		}
	}
	// optional[i:] in order, any subset, then additional properties; rest(i) follows a property already
	// written, first(i) starts the list.
	addMany := ""
	if addKV != "" {
		addMany = fmt.Sprintf(`( "," %s %s )*`, sp, addKV)
	}
	rests := make([]string, len(optional)+1)
	rests[len(optional)] = addMany
	for i := len(optional) - 1; i >= 0; i-- {
		next := fmt.Sprintf(`( "," %s %s )?`, sp, optional[i].kv)
		if rests[i+1] != "" {
			next += " " + rests[i+1]
		}
		if i < len(optional)-1 || addMany != "" {
			rests[i] = c.rule(name+"-"+optional[i].key+"-rest", strings.TrimSpace(next))
		} else {
			rests[i] = next
		}
	}
	// Alternatives that start the optional list: optional[i] then rest(i+1), or the additional ones.
	var starts []string
	for i, p := range optional {
		e := p.kv
		if rests[i+1] != "" {
			e += " " + rests[i+1]
		}
		starts = append(starts, e)
	}
	if addKV != "" {
		starts = append(starts, addKV+" "+addMany)
	}
	var body strings.Builder
	body.WriteString(`"{" ` + sp + " ")
	for i, p := range required {
		if i > 0 {
			body.WriteString(`"," ` + sp + " ")
		}
		body.WriteString(p.kv + " ")
	}
	if len(starts) > 0 {
		if len(required) > 0 {
			fmt.Fprintf(&body, `( "," %s ( %s ) )? `, sp, strings.Join(starts, " | "))
		} else {
			fmt.Fprintf(&body, `( %s )? `, strings.Join(starts, " | "))
		}
	}
	body.WriteString(`"}" ` + sp)
	return c.rule(name, body.String()), nil
}

func jsonQuote(s string) string {
	var b strings.Builder
	writeJSONString(&b, s)
	return b.String()
}

// keyExcept is a grammar for an object key (a JSON string) that is none of names, built over the trie of
// the names' characters (only plain characters are written in keys: no escapes).
func (c *conv) keyExcept(names []string) string {
	sp := c.use("space")
	plain := c.use("key-char")
	if len(names) == 0 {
		return fmt.Sprintf(`"\"" %s* "\"" %s`, plain, sp)
	}
	var rs [][]rune
	for _, n := range names {
		rs = append(rs, []rune(n))
	}
	return fmt.Sprintf(`"\"" %s "\"" %s`, c.trieExcept(rs, plain), sp)
}

// trieExcept: strings of plain characters that are none of words (all sharing the prefix consumed so far).
func (c *conv) trieExcept(words [][]rune, plain string) string {
	endsHere := false
	next := map[rune][][]rune{}
	var firsts []rune
	for _, w := range words {
		if len(w) == 0 {
			endsHere = true
			continue
		}
		if _, ok := next[w[0]]; !ok {
			firsts = append(firsts, w[0])
		}
		next[w[0]] = append(next[w[0]], w[1:])
	}
	slices.Sort(firsts)
	var alts []string
	for _, r := range firsts {
		alts = append(alts, gbnfClass([]crange{{r, r}})+" "+c.trieExcept(next[r], plain))
	}
	// A character that starts none of the words, then anything.
	var ex []crange
	for _, r := range firsts {
		ex = append(ex, crange{r, r})
	}
	ex = append(ex, crange{'"', '"'}, crange{'\\', '\\'}, crange{0, 0x1F}, crange{0x7F, 0x7F})
	alts = append(alts, gbnfClass(complement(ex))+" "+plain+"*")
	body := strings.Join(alts, " | ")
	if endsHere {
		return "(" + body + ")" // the word itself is excluded: something must follow
	}
	return "(" + body + ")?"
}

// complement returns the code points not in rs, sorted and merged.
func complement(rs []crange) []crange {
	rs = slices.Clone(rs)
	slices.SortFunc(rs, func(a, b crange) int { return int(a.lo - b.lo) })
	var out []crange
	next := rune(0)
	for _, r := range rs {
		if r.lo > next {
			out = append(out, crange{next, r.lo - 1})
		}
		next = max(next, r.hi+1)
	}
	if next <= utf8.MaxRune {
		out = append(out, crange{next, utf8.MaxRune})
	}
	return out
}

func (c *conv) str(s *jv, name, path string) (string, error) {
	sp := c.use("space")
	minLen, _, err := nonNegInt(s, "minLength", path)
	if err != nil {
		return "", err
	}
	maxLen, hasMax, err := nonNegInt(s, "maxLength", path)
	if err != nil {
		return "", err
	}
	if hasMax && maxLen < minLen {
		return "", schemaErr(path, "maxLength %d is below minLength %d", maxLen, minLen)
	}
	lengths := s.get("minLength") != nil || hasMax
	if f := s.get("format"); f != nil {
		if f.kind != 's' {
			return "", schemaErr(path, "format must be a string")
		}
		if lengths || s.get("pattern") != nil {
			return "", schemaErr(path, "format with minLength, maxLength or pattern is not supported")
		}
		switch f.s {
		case "date", "time", "date-time", "uuid":
			return c.rule(name, `"\"" `+c.use(f.s)+` "\"" `+sp), nil
		}
		return "", schemaErr(path, "format %q is not supported (date, time, date-time and uuid are)", f.s)
	}
	if p := s.get("pattern"); p != nil {
		if p.kind != 's' {
			return "", schemaErr(path, "pattern must be a string")
		}
		if lengths {
			return "", schemaErr(path, "pattern with minLength or maxLength is not supported")
		}
		e, err := regexGBNF(p.s)
		if err != nil {
			return "", schemaErr(path, "pattern %q: %v", p.s, err)
		}
		return c.rule(name, `"\"" (`+e+`) "\"" `+sp), nil
	}
	if !lengths {
		return c.use("string"), nil
	}
	ch := c.use("char")
	rep := fmt.Sprintf("%s{%d,}", ch, minLen)
	if hasMax {
		rep = fmt.Sprintf("%s{%d,%d}", ch, minLen, maxLen)
	}
	return c.rule(name, `"\"" `+rep+` "\"" `+sp), nil
}

// number converts integer and number schemas, with their bounds.
func (c *conv) number(s *jv, typ, path string) (string, error) {
	var lo, hi *big.Rat
	loX, hiX := false, false
	var loText, hiText string // the bounds as the schema writes them
	for _, b := range []struct {
		key      string
		dst      **big.Rat
		excl, lo bool
	}{{"minimum", &lo, false, true}, {"maximum", &hi, false, false}, {"exclusiveMinimum", &lo, true, true}, {"exclusiveMaximum", &hi, true, false}} {
		v := s.get(b.key)
		if v == nil {
			continue
		}
		if v.kind == 'b' { // draft 4's boolean exclusiveMinimum/Maximum
			return "", schemaErr(path, "%s as a boolean (draft 4) is not supported", b.key)
		}
		if v.kind != 'n' {
			return "", schemaErr(path, "%s must be a number", b.key)
		}
		f, err := strconv.ParseFloat(v.s, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return "", schemaErr(path, "%s %s is not a number", b.key, v.s)
		}
		text := v.s
		if math.Abs(f) > 1e17 { // far beyond 15 digits: no huge exact value (1e999999999) is built
			text = strconv.FormatFloat(math.Copysign(1e17, f), 'f', 0, 64)
		}
		r, ok := new(big.Rat).SetString(text)
		if !ok {
			return "", schemaErr(path, "%s %s is not a number", b.key, v.s)
		}
		// The tighter bound wins.
		if *b.dst == nil || b.lo && r.Cmp(*b.dst) > 0 || !b.lo && r.Cmp(*b.dst) < 0 || r.Cmp(*b.dst) == 0 && b.excl {
			*b.dst = r
			if b.lo {
				loX, loText = b.excl, text
			} else {
				hiX, hiText = b.excl, text
			}
		}
	}
	sp := c.use("space")
	if lo == nil && hi == nil {
		return c.use(typ), nil
	}
	limit := new(big.Int).SetUint64(999_999_999_999_999) // 15 digits
	neg := new(big.Int).Neg(limit)
	clamp := func(x *big.Int) int64 {
		switch {
		case x.Cmp(limit) > 0:
			return limit.Int64() + 1
		case x.Cmp(neg) < 0:
			return neg.Int64() - 1
		}
		return x.Int64()
	}
	// Integers: L <= n <= H, the bounds rounded inwards (and past an exclusive bound).
	lc, hf := neg.Int64()-1, limit.Int64()+1 // ceil(lo), floor(hi); beyond 15 digits when unbounded
	L, H := neg.Int64(), limit.Int64()
	if lo != nil {
		lc = clamp(ceilRat(lo))
		L = max(L, lc)
		if loX && new(big.Rat).SetInt64(lc).Cmp(lo) == 0 {
			L = max(L, lc+1)
		}
	}
	if hi != nil {
		hf = clamp(floorRat(hi))
		H = min(H, hf)
		if hiX && new(big.Rat).SetInt64(hf).Cmp(hi) == 0 {
			H = min(H, hf-1)
		}
	}
	var alts []string
	if L <= H {
		alts = intRange(L, H)
	}
	if typ == "number" {
		// n.ddd (a last digit not 0) lies strictly between n and n+1, and -m.ddd between -m-1 and -m:
		// within the bounds, exclusive or not, for n in [max(0, ceil(lo)), floor(hi)-1] and m in
		// [max(0, -floor(hi)), -ceil(lo)-1].
		frac := `"." [0-9]{0,14} [1-9]`
		for _, a := range natRange(max(0, lc), min(hf-1, limit.Int64())) {
			alts = append(alts, "("+a+") "+frac)
		}
		for _, a := range natRange(max(0, -hf), min(-lc-1, limit.Int64())) {
			alts = append(alts, `"-" (`+a+") "+frac)
		}
	}
	if typ == "number" { // an inclusive fractional bound is itself a value
		if lo != nil && !loX && !lo.IsInt() && (hi == nil || lo.Cmp(hi) <= 0) {
			alts = append(alts, gbnfLiteral(loText))
		}
		if hi != nil && !hiX && !hi.IsInt() && (lo == nil || hi.Cmp(lo) > 0) {
			alts = append(alts, gbnfLiteral(hiText))
		}
	}
	if len(alts) == 0 {
		return "", schemaErr(path, "no %s within the bounds has at most 15 integer digits", typ)
	}
	return "(" + strings.Join(alts, " | ") + ") " + sp, nil
}

func ceilRat(r *big.Rat) *big.Int {
	q, m := new(big.Int).DivMod(r.Num(), r.Denom(), new(big.Int))
	if m.Sign() != 0 {
		q.Add(q, big.NewInt(1)) // DivMod floors (Euclidean, positive denominator)
	}
	return q
}

func floorRat(r *big.Rat) *big.Int {
	q, _ := new(big.Int).DivMod(r.Num(), r.Denom(), new(big.Int))
	return q
}

// intRange returns GBNF alternatives for the integers in [lo, hi] (lo <= hi), written as JSON writes
// them: no leading zeros, no "-0".
func intRange(lo, hi int64) []string {
	var alts []string
	if lo < 0 {
		// -m for m in [max(1, -hi), -lo]
		for _, a := range natRange(max(1, -hi), -lo) {
			alts = append(alts, `"-" (`+a+")")
		}
	}
	if hi >= 0 {
		alts = append(alts, natRange(max(lo, 0), hi)...)
	}
	return alts
}

// natRange returns alternatives for the naturals in [lo, hi] (0 <= lo <= hi), split by digit count.
func natRange(lo, hi int64) []string {
	if lo > hi {
		return nil
	}
	var alts []string
	a, b := strconv.FormatInt(lo, 10), strconv.FormatInt(hi, 10)
	for n := len(a); n <= len(b); n++ {
		from, to := a, b
		if n > len(a) {
			from = "1" + strings.Repeat("0", n-1)
		}
		if n < len(b) {
			to = strings.Repeat("9", n)
		}
		alts = append(alts, sameLen(from, to))
	}
	return alts
}

// sameLen is a GBNF expression for the decimal strings between a and b (same length, a <= b).
func sameLen(a, b string) string {
	if a == "" {
		return `""`
	}
	if a[0] == b[0] {
		if len(a) == 1 {
			return `"` + a[:1] + `"`
		}
		return `"` + a[:1] + `" (` + sameLen(a[1:], b[1:]) + ")"
	}
	n := len(a) - 1
	digits := func(k int) string {
		if k == 0 {
			return ""
		}
		return fmt.Sprintf(" [0-9]{%d}", k)
	}
	if strings.Trim(a[1:], "0") == "" && strings.Trim(b[1:], "9") == "" {
		return fmt.Sprintf("[%c-%c]%s", a[0], b[0], digits(n))
	}
	var alts []string
	alts = append(alts, `"`+a[:1]+`" (`+sameLen(a[1:], strings.Repeat("9", n))+")")
	if a[0]+1 <= b[0]-1 {
		alts = append(alts, fmt.Sprintf("[%c-%c]%s", a[0]+1, b[0]-1, digits(n)))
	}
	alts = append(alts, `"`+b[:1]+`" (`+sameLen(strings.Repeat("0", n), b[1:])+")")
	return "(" + strings.Join(alts, " | ") + ")"
}

// SchemaRules builds one grammar out of several JSON Schemas and rules written around them (a tool-call
// grammar: a choice of wrappers, each around one function's arguments). Each schema is converted as
// FromJSONSchema converts one, its $refs resolved inside its own document; the rules of all of them
// share the primitive rules and get distinct names.
type SchemaRules struct {
	c *conv
}

// NewSchemaRules returns an empty set of rules.
func NewSchemaRules() *SchemaRules {
	c := &conv{bodies: map[string]string{}, refs: map[string]string{}}
	c.define("root", `""`) // reserved for Compile
	return &SchemaRules{c: c}
}

// Schema converts schema and returns the name of the rule of its instances (hint suggests the name).
// Errors wrap ErrSchema and name the place in schema.
func (r *SchemaRules) Schema(schema []byte, hint string) (string, error) {
	doc, err := parseOrdered(schema)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrSchema, err)
	}
	c := r.c
	c.doc, c.refs = doc, map[string]string{} // pointers are into this document
	name := c.fresh(hint)
	c.define(name, `""`)
	body, err := c.expr(doc, name, "#")
	if err != nil {
		return "", err
	}
	if body == name {
		return "", schemaErr("#", "the schema refers to itself")
	}
	c.define(name, body)
	return name, nil
}

// Rule defines a new rule with the GBNF body and returns its name (hint suggests it).
func (r *SchemaRules) Rule(hint, body string) string { return r.c.rule(hint, body) }

// Compile makes the grammar whose root rule is the GBNF expression root. It fails (wrapping ErrGrammar)
// only for a body written by the caller that does not compile, or a grammar with no finite sentence.
func (r *SchemaRules) Compile(root string) (*GBNF, error) {
	c := r.c
	c.define("root", root)
	var b strings.Builder
	for _, name := range c.order {
		b.WriteString(name)
		b.WriteString(" ::= ")
		b.WriteString(c.bodies[name])
		b.WriteByte('\n')
	}
	return ParseGBNF(b.String())
}

// Literal quotes s as a GBNF literal: the expression that matches exactly s.
func Literal(s string) string { return gbnfLiteral(s) }

// NotPrefix is a GBNF expression for every string that does not start with p (the empty string
// included), p non-empty: a proper prefix of p, or a string that leaves p at some character.
func NotPrefix(p string) string {
	rs := []rune(p)
	var b strings.Builder
	b.WriteString("(")
	for i, r := range rs {
		b.WriteString(`"" | `)
		b.WriteString(gbnfClass(complement([]crange{{r, r}})))
		b.WriteString(" " + anyChar + "*")
		if i+1 < len(rs) {
			b.WriteString(" | " + gbnfLiteral(string(r)) + " (")
		}
	}
	b.WriteString(strings.Repeat(")", len(rs)))
	return b.String()
}

// anyChar is a GBNF class of every character.
const anyChar = `[\x00-\U0010FFFF]`
