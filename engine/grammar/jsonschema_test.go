package grammar

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func schemaFiles(t testing.TB) map[string][]byte {
	files, err := filepath.Glob("testdata/schemas/*.json")
	if err != nil || len(files) < 30 {
		t.Fatalf("testdata/schemas: %d files, %v", len(files), err)
	}
	out := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(f)] = b
	}
	return out
}

// TestSchemasCompile: every schema of the corpus compiles, and random walks through its grammar (on a
// byte vocabulary) give well-formed JSON.
func TestSchemasCompile(t *testing.T) {
	pieces, eos := byteVocab(`{"`, `": `, `", "`, "true", "null", "false")
	v := NewVocab(pieces, eos)
	r := rand.New(rand.NewPCG(11, 12))
	for name, b := range schemaFiles(t) {
		g, err := FromJSONSchema(b)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		m := NewMatcher(g, v)
		for range 5 {
			out, ok := sampleWalk(t, m, pieces, eos, 200, r)
			if !ok || !json.Valid([]byte(out)) || !g.Recognise(out) {
				t.Errorf("%s: %q (complete %v)", name, out, ok)
			}
		}
	}
}

// TestSchemaRefusals: what the converter does not implement is refused, naming the keyword.
func TestSchemaRefusals(t *testing.T) {
	for _, tc := range []struct{ schema, want string }{
		{`{"type": "kaboom"}`, `unknown type "kaboom"`},
		{`{"type": 123}`, "type must be a string"},
		{`{"not": {"type": "string"}}`, `keyword "not" is not supported`},
		{`{"type": "object", "properties": {"a": {"type": "number", "multipleOf": 3}}}`, `at #/properties/a: keyword "multipleOf" is not supported`},
		{`{"type": "array", "uniqueItems": true}`, `keyword "uniqueItems" is not supported`},
		{`{"patternProperties": {"^x": {}}}`, `keyword "patternProperties"`},
		{`{"if": {}, "then": {}}`, `keyword "if"`},
		{`{"type": "string", "format": "email"}`, `format "email" is not supported`},
		{`{"type": "string", "pattern": "(a)\\1"}`, "backreferences are not supported"},
		{`{"type": "string", "pattern": "a(?=b)"}`, "lookaround is not supported"},
		{`{"type": "string", "pattern": "\\bword"}`, "word boundaries"},
		{`{"type": "string", "pattern": "a^b"}`, "the anchor ^ is supported only at the start"},
		{`{"$ref": "https://example.com/s.json"}`, "only references inside the schema"},
		{`{"$ref": "#/definitions/missing"}`, `no member "definitions"`},
		{`{"$ref": "#"}`, "refers to itself"},
		{`{"type": "string", "minLength": 5, "maxLength": 2}`, "maxLength 2 is below minLength 5"},
		{`{"type": "integer", "minimum": 5, "maximum": 4}`, "no integer within the bounds"},
		{`{"type": "integer", "minimum": 1e300}`, "no integer within the bounds"},
		{`{"type": "array", "minItems": 100000}`, "over the limit"},
		{`{"enum": []}`, "enum must be a non-empty array"},
		{`{"type": "string", "enum": [1, 2]}`, "no enum value has the schema's type"},
		{`false`, "accepts nothing"},
		{`{"type": `, "not valid JSON"},
		{`{} {}`, "more data after the schema"},
		{strings.Repeat(`{"items":`, 200) + `{}` + strings.Repeat(`}`, 200), "nested deeper than"},
	} {
		_, err := FromJSONSchema([]byte(tc.schema))
		if err == nil || !errors.Is(err, ErrSchema) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.60s: got %v, want an error containing %q", tc.schema, err, tc.want)
		}
	}
}

// TestIntegerBounds: an integer schema's grammar accepts exactly the integers within its bounds (all of
// -130..310 checked), for inclusive and exclusive bounds, fractional ones and one-sided ones; a number
// schema's grammar accepts only values within them.
func TestIntegerBounds(t *testing.T) {
	bounds := []string{"", "-123", "-10", "-5", "-1", "0", "0.5", "1", "3", "10", "23", "30", "99.9", "100", "207", "300"}
	decimals := []string{"0.5", "-0.5", "1.25", "-1.75", "9.99", "-10.01", "22.5", "299.95", "-122.5", "0.05", "41.9"}
	for _, lo := range bounds {
		for _, hi := range bounds {
			for _, excl := range []bool{false, true} {
				minKey, maxKey := "minimum", "maximum"
				if excl {
					minKey, maxKey = "exclusiveMinimum", "exclusiveMaximum"
				}
				var parts []string
				if lo != "" {
					parts = append(parts, fmt.Sprintf("%q: %s", minKey, lo))
				}
				if hi != "" {
					parts = append(parts, fmt.Sprintf("%q: %s", maxKey, hi))
				}
				in := func(x float64) bool {
					if lo != "" {
						l, _ := strconv.ParseFloat(lo, 64)
						if x < l || excl && x == l {
							return false
						}
					}
					if hi != "" {
						h, _ := strconv.ParseFloat(hi, 64)
						if x > h || excl && x == h {
							return false
						}
					}
					return true
				}
				for _, typ := range []string{"integer", "number"} {
					schema := fmt.Sprintf(`{"type": %q, %s}`, typ, strings.Join(parts, ", "))
					if len(parts) == 0 {
						schema = fmt.Sprintf(`{"type": %q}`, typ)
					}
					g, err := FromJSONSchema([]byte(schema))
					if err != nil {
						some := false
						for n := -130; n <= 310; n++ {
							some = some || in(float64(n))
						}
						if typ == "integer" && !some && strings.Contains(err.Error(), "no integer") {
							continue
						}
						if typ == "number" && strings.Contains(err.Error(), "no number") && !in(0.5) && !in(-0.5) {
							continue
						}
						t.Fatalf("%s: %v", schema, err)
					}
					for n := -130; n <= 310; n++ {
						s := strconv.Itoa(n)
						if got := g.Recognise(s); got != in(float64(n)) {
							t.Errorf("%s: %s accepted %v", schema, s, got)
						}
					}
					if len(parts) > 0 && g.Recognise("-0") || g.Recognise("007") { // unbounded, "-0" is JSON's 0
						t.Errorf("%s: accepts -0 or 007", schema)
					}
					for _, d := range decimals {
						x, _ := strconv.ParseFloat(d, 64)
						if g.Recognise(d) && (!in(x) || typ == "integer") {
							t.Errorf("%s: accepts %s", schema, d)
						}
					}
				}
			}
		}
	}
}

// TestPatterns: a pattern's grammar generates strings the pattern matches (checked with Go's regexp,
// whose syntax these patterns share), as JSON string contents.
func TestPatterns(t *testing.T) {
	pieces, eos := byteVocab()
	v := NewVocab(pieces, eos)
	r := rand.New(rand.NewPCG(21, 22))
	for _, p := range []string{
		`^abc?d*efg+(hij)?kl$`, `^\[\]\{\}\(\)\|\+\*\?$`, `^"$`, `^A|B|C|D$`, `^(\([0-9]{1,3}\))?[0-9]{3}-[0-9]{4} a{3,5}nd...$`,
		`^(?:foo|bar)baz$`, `^(?:(?:ab)+c)?d$`, `^[A-Z][a-z]+\d{2}[-_.][^\s"]{1,3}\w?$`, `^"\\(x|y)\t$`,
		`[a-f0-9]{2,4}`, `^\S+@\S+\.[a-z]{2,3}$`, `^[^a-z]{3}$`, `^\x41\u00e9.$`, `^(a|b)*?c{2}$`, `^$`, `^\s?\W\D$`,
	} {
		schema, _ := json.Marshal(map[string]string{"type": "string", "pattern": p})
		g, err := FromJSONSchema(schema)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		re := regexp.MustCompile(strings.ReplaceAll(p, `\u00e9`, `\x{e9}`)) // Go's spelling of \u
		m := NewMatcher(g, v)
		for range 20 {
			out, ok := sampleWalk(t, m, pieces, eos, 60, r)
			var s string
			if !ok || json.Unmarshal([]byte(out), &s) != nil || !re.MatchString(s) {
				t.Errorf("%s: generated %q (complete %v), which it does not match", p, out, ok)
				break
			}
		}
	}
}

// FuzzJSONSchema: any input is converted or refused with ErrSchema; what converts compiles.
func FuzzJSONSchema(f *testing.F) {
	for _, b := range schemaFiles(f) {
		f.Add(b)
	}
	f.Add([]byte(`{"type":"string","pattern":"^(a|[^b-d]{2,})+\\d$"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := FromJSONSchema(b)
		if err != nil {
			if !errors.Is(err, ErrSchema) {
				t.Fatalf("error without ErrSchema: %v", err)
			}
			if strings.Contains(err.Error(), "a bug") {
				t.Fatalf("%s: %v", b, err)
			}
			return
		}
		pieces, eos := byteVocab()
		m := NewMatcher(g, NewVocab(pieces, eos))
		logits := make([]float32, len(pieces))
		m.Mask(logits, 50)
	})
}
