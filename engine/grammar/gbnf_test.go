package grammar

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/picolm/picolm-wasm/scripts/shareddata"
)

// byteVocab is a vocabulary of the 256 single bytes plus the given multi-byte pieces; eos is the last id.
func byteVocab(extra ...string) ([][]byte, int) {
	var pieces [][]byte
	for c := range 256 {
		pieces = append(pieces, []byte{byte(c)})
	}
	for _, e := range extra {
		pieces = append(pieces, []byte(e))
	}
	pieces = append(pieces, nil)
	return pieces, len(pieces) - 1
}

func mustGBNF(t testing.TB, src string) *GBNF {
	t.Helper()
	g, err := ParseGBNF(src)
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	return g
}

// TestGBNFLanguages: hand-written grammars accept and reject what they should, through the matcher and
// the independent recogniser alike.
func TestGBNFLanguages(t *testing.T) {
	pieces, eos := byteVocab()
	v := NewVocab(pieces, eos)
	for _, tc := range []struct {
		src      string
		yes, not []string
	}{
		{`root ::= "a"`, []string{"a"}, []string{"", "aa", "b"}},
		{`root ::= "ab" | "c"`, []string{"ab", "c"}, []string{"a", "abc", ""}},
		{`root ::= "x"*`, []string{"", "x", "xxxx"}, []string{"y", "xy"}},
		{`root ::= "x"+`, []string{"x", "xxx"}, []string{""}},
		{`root ::= "x"? "y"`, []string{"y", "xy"}, []string{"xxy", "x"}},
		{`root ::= "ab"{2}`, []string{"abab"}, []string{"ab", "ababab"}},
		{`root ::= "a"{2,}`, []string{"aa", "aaaaa"}, []string{"a", ""}},
		{`root ::= "a"{1,3} "b"`, []string{"ab", "aab", "aaab"}, []string{"b", "aaaab"}},
		{`root ::= [a-c]{0,2}`, []string{"", "a", "cb"}, []string{"abc", "d"}},
		{`root ::= [^a-c\n]`, []string{"d", "é", "日"}, []string{"a", "b", "\n", ""}},
		{`root ::= .`, []string{"a", "\n", "😀"}, []string{"", "ab"}},
		{`root ::= [\x41-\x43] "\u00e9" "\U0001F600" "\t\n\r\\\"\[\]"`, []string{"Bé😀\t\n\r\\\"[]"}, []string{"Dé😀\t\n\r\\\"[]"}},
		{"root ::= a b # comment\na ::= \"(\" (a | \"\") \")\"\nb ::= [0-9]+", []string{"()1", "(())42"}, []string{"(()1", "()"}},
		{"root ::=\n  \"a\" |\n  \"b\" (\n  \"c\"\n  )", []string{"a", "bc"}, []string{"b"}},
		{`root ::= ("a" | "b")* "c"`, []string{"c", "abbac"}, []string{"ab"}},
		{`root ::= [日本] "語"`, []string{"日語", "本語"}, []string{"語語"}},
		{`root ::= ws "x" ws` + "\nws ::= [ ]*", []string{"x", "  x ", "x  "}, []string{" y"}},
		{`root ::= "" | "a"`, []string{"", "a"}, []string{"aa"}},
	} {
		g := mustGBNF(t, tc.src)
		m := NewMatcher(g, v)
		for _, s := range tc.yes {
			if !g.Recognise(s) {
				t.Errorf("%q: the recogniser rejects %q", tc.src, s)
			}
			if !m.MatchString(s) {
				t.Errorf("%q: the matcher rejects %q", tc.src, s)
			}
		}
		for _, s := range tc.not {
			if g.Recognise(s) {
				t.Errorf("%q: the recogniser accepts %q", tc.src, s)
			}
			if m.MatchString(s) {
				t.Errorf("%q: the matcher accepts %q", tc.src, s)
			}
		}
	}
}

// TestGBNFErrors: bad grammars are refused with the line, column and rule.
func TestGBNFErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{`root ::= foo`, "line 1 column 10: undefined rule foo"},
		{"root ::= \"a\"\nroot ::= \"b\"", "line 2 column 1 (rule root): rule root is defined twice (first at line 1 column 1)"},
		{`a ::= "x"`, "no root rule"},
		{`root ::= root "a" | "b"`, "left recursion is not supported: root -> root"},
		{"root ::= a\na ::= b \"x\"\nb ::= \"\" | a", "left recursion is not supported: a -> b -> a"},
		{`root ::= ("a"?)*`, "left recursion"},
		{`root ::= "a" root`, "rule root can never end"},
		{`root ::= "abc`, "line 1 column 10 (rule root): unterminated literal"},
		{`root ::= [abc`, "line 1 column 10 (rule root): unterminated character class"},
		{`root ::= "a"{3,2}`, "line 1 column 13 (rule root): repetition {3,2}: the maximum is below the minimum"},
		{`root ::= "a"{100000}`, "repetition count 100000 is over the limit of 10000"},
		{`root ::= "a"{99999999999}`, "is over the limit of 10000"},
		{`root ::= "a"{,3}`, "expected a number in the repetition"},
		{`root ::= "a"**`, "'*' with nothing before it to repeat"},
		{`root ::= * "a"`, "line 1 column 10 (rule root): '*' with nothing before it to repeat"},
		{`root ::= "\q"`, `unknown escape \q`},
		{`root ::= "\x4"`, `\x needs 2 hex digits`},
		{`root ::= "\uD800"`, `is not a Unicode scalar value`},
		{`root ::= [z-a]`, "is backwards"},
		{`root ::= []`, "empty character class"},
		{`root ::= ("a"`, "expected ')' to close the group at line 1 column 10"},
		{`root ::= "a" )`, "line 1 column 14 (rule root): expected the end of the line"},
		{"root = \"a\"", "line 1 column 6 (rule root): expected ::= after the rule name"},
		{`::= "a"`, "line 1 column 1: expected a rule name"},
		{`root ::= <[1234]>`, "token references"},
		{"root ::= \"a\"\n\n  x y", "line 3 column 5 (rule x): expected ::="},
		{`root ::= [^\x00-\U0010FFFF]`, "can never end"},
		{"root ::= \"\xff\"", "line 1 column 11: the grammar is not valid UTF-8"},
		{`root ::= ` + strings.Repeat("(", 300) + `"a"` + strings.Repeat(")", 300), "groups nested more than 256 deep"},
		{`root ::= ("a"{10000}){10000}{10000}`, "nothing before it to repeat"},
		{`root ::= ` + strings.Repeat(`"ab"{10000} `, 110), "more than 1048576 elements"},
	} {
		_, err := ParseGBNF(tc.src)
		if err == nil || !errors.Is(err, ErrGrammar) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want an error containing %q", tc.src, err, tc.want)
		}
	}
}

// llamaGrammars are llama.cpp's grammars/*.gbnf (MIT licence; see testdata/gbnf/README.md).
func llamaGrammars(t testing.TB) map[string]string {
	files, err := filepath.Glob("testdata/gbnf/*.gbnf")
	if err != nil || len(files) < 8 {
		t.Fatalf("testdata/gbnf: %v files, %v", len(files), err)
	}
	out := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(f)] = string(b)
	}
	return out
}

// sampleWalk generates up to budget tokens under m, drawing uniformly among the allowed tokens (eos
// twice as likely as one other token once allowed, so outputs vary in length). It returns the text and
// whether the walk ended complete.
func sampleWalk(t *testing.T, m *Matcher, pieces [][]byte, eos int, budget int, r *rand.Rand) (string, bool) {
	t.Helper()
	logits := make([]float32, len(pieces))
	var out []byte
	m.Reset()
	for n := 0; n < budget; n++ {
		clear(logits)
		if !m.Mask(logits, budget-n) {
			t.Fatalf("nothing allowed after %q (budget %d left)", out, budget-n)
		}
		var allowed []int
		for id, l := range logits {
			if !math.IsInf(float64(l), -1) {
				allowed = append(allowed, id)
				if id == eos {
					allowed = append(allowed, id)
				}
			}
		}
		id := allowed[r.IntN(len(allowed))]
		if err := m.Accept(id); err != nil {
			t.Fatalf("after %q: the mask allowed %d %q but Accept refuses: %v", out, id, pieces[id], err)
		}
		if id == eos {
			return string(out), true
		}
		out = append(out, pieces[id]...)
		if m.Done() {
			return string(out), true
		}
	}
	return string(out), m.Complete()
}

// TestLlamaGrammars: each of llama.cpp's grammars loads, and random walks through what the mask allows
// (on the stories260K and LLaMA 32k vocabularies) end complete within the budget, in outputs the
// independent recogniser accepts.
func TestLlamaGrammars(t *testing.T) {
	for _, model := range []string{"stories260K.gguf", "llama-2-tiny-random.gguf"} {
		pieces, eos, err := readSPMVocab(shareddata.Path(t, model))
		if err != nil {
			t.Fatal(err)
		}
		v := NewVocab(pieces, eos)
		for name, src := range llamaGrammars(t) {
			g := mustGBNF(t, src)
			m := NewMatcher(g, v)
			r := rand.New(rand.NewPCG(7, uint64(len(name))))
			for seed := range 6 {
				budget := 20 + 30*seed
				out, ok := sampleWalk(t, m, pieces, eos, budget, r)
				if !ok {
					t.Errorf("%s %s: incomplete after %d tokens: %q", model, name, budget, out)
				}
				if !g.Recognise(out) {
					t.Errorf("%s %s: the recogniser rejects %q", model, name, out)
				}
				if seed == 0 {
					t.Logf("%s %s: %q", model, name, out)
				}
			}
		}
	}
}

// jsonGBNF is the JSON automaton's language as GBNF (without its nesting limit): the whole RFC 8259
// grammar, whitespace runs of at most MaxWhitespace, no whitespace after the top-level value.
const jsonGBNF = `root   ::= ws value
value  ::= object | array | string | number | "true" | "false" | "null"
object ::= "{" ws ( string ws ":" ws value ws ( "," ws string ws ":" ws value ws )* )? "}"
array  ::= "[" ws ( value ws ( "," ws value ws )* )? "]"
string ::= "\"" ( [^"\\\x00-\x1F] | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F]{4} ) )* "\""
number ::= "-"? ( "0" | [1-9] [0-9]* ) ( "." [0-9]+ )? ( [eE] [-+]? [0-9]+ )?
ws     ::= [ \t\n\r]{0,8}
`

// TestJSONGrammarAgreesWithPDA: the JSON automaton and jsonGBNF accept the same documents (valid ones and
// corrupted ones), and from the same states their masks allow the same tokens.
func TestJSONGrammarAgreesWithPDA(t *testing.T) {
	g := mustGBNF(t, jsonGBNF)
	pieces, eos, err := readSPMVocab(shareddata.Path(t, "llama-2-tiny-random.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	v := NewVocab(pieces, eos)
	m := NewMatcher(g, v)
	pda := v.JSON()
	r := rand.New(rand.NewPCG(3, 4))
	docs := append([]string{}, validDocs...)
	docs = append(docs, invalidDocs...)
	for range 300 {
		docs = append(docs, randomJSON(r, 0))
	}
	n := len(docs)
	for i := range n { // corruptions: a byte changed, dropped or duplicated
		d := []byte(docs[i])
		if len(d) == 0 {
			continue
		}
		k := r.IntN(len(d))
		switch r.IntN(3) {
		case 0:
			d[k] = `{}[]",:0-e.tfn \\u`[r.IntN(18)]
		case 1:
			d = append(d[:k], d[k+1:]...)
		default:
			d = slices.Insert(d, k, d[k])
		}
		docs = append(docs, string(d))
	}
	agree := 0
	for _, d := range docs {
		if strings.Count(d, "[")+strings.Count(d, "{") > MaxDepth {
			continue
		}
		_, a := feed([]byte(d))
		b := m.MatchString(d)
		if a != b {
			t.Errorf("%q: automaton %v, grammar %v", d, a, b)
		}
		agree++
	}
	// The masks, from the states after prefixes of valid documents (past the first byte: the automaton
	// prefers an object or array at the start), with a budget too large to matter.
	la, lb := make([]float32, len(pieces)), make([]float32, len(pieces))
	states := 0
	for _, d := range slices.Concat(validDocs, docs[len(validDocs)+len(invalidDocs):][:50]) {
		// Shallow documents only: the automaton's nesting limit is not in the grammar.
		if !pdaComplete(d) || d == "" || d[0] != '{' && d[0] != '[' || strings.Count(d, "[")+strings.Count(d, "{") > MaxDepth/2 {
			continue
		}
		for cut := 1; cut < len(d); cut += 1 + r.IntN(4) {
			st, ms := pda.Start(), m
			ms.Reset()
			ok := true
			for _, c := range []byte(d[:cut]) {
				ok = ok && st.step(c)
			}
			if !ok || !feedMatcher(ms, d[:cut]) {
				t.Fatalf("prefix %q refused", d[:cut])
			}
			clear(la)
			clear(lb)
			pda.Mask(&st, la, 1<<20)
			ms.Mask(lb, 1<<20)
			for id := range la {
				if math.IsInf(float64(la[id]), -1) != math.IsInf(float64(lb[id]), -1) {
					t.Fatalf("after %q token %d %q: automaton allows %v, grammar %v", d[:cut], id, pieces[id], !math.IsInf(float64(la[id]), -1), !math.IsInf(float64(lb[id]), -1))
				}
			}
			states++
		}
	}
	t.Logf("%d documents agree; %d masks agree", agree, states)
}

func pdaComplete(s string) bool { _, ok := feed([]byte(s)); return ok }

// feedMatcher steps m over the bytes of s as one committed string (a test helper: Accept works on tokens).
func feedMatcher(m *Matcher, s string) bool {
	st := m.cur
	for i := 0; i < len(s); i++ {
		var ok bool
		if st, ok = m.step(st, s[i]); !ok {
			return false
		}
	}
	m.cur = st
	m.compact()
	return true
}

// randomJSON makes a random JSON document with odd strings and numbers.
func randomJSON(r *rand.Rand, depth int) string {
	ws := func() string { return []string{"", "", " ", "\n  ", "\t"}[r.IntN(5)] }
	k := r.IntN(9)
	if depth > 4 {
		k = 2 + r.IntN(7)
	}
	switch k {
	case 0:
		var parts []string
		for range r.IntN(4) {
			parts = append(parts, ws()+randomJSONString(r)+ws()+":"+ws()+randomJSON(r, depth+1)+ws())
		}
		return "{" + ws() + strings.Join(parts, ",") + "}"
	case 1:
		var parts []string
		for range r.IntN(4) {
			parts = append(parts, ws()+randomJSON(r, depth+1)+ws())
		}
		return "[" + ws() + strings.Join(parts, ",") + "]"
	case 2, 3:
		return randomJSONString(r)
	case 4, 5:
		return []string{"0", "-0", "12", "-3.25", "1e5", "2E-07", "0.0", "99999999999999999999"}[r.IntN(8)]
	}
	return []string{"true", "false", "null"}[r.IntN(3)]
}

func randomJSONString(r *rand.Rand) string {
	parts := []string{"a", "é", "日本", "😀", `\"`, `\\`, `\n`, `\u00e9`, `\uD83D\uDE00`, " ", "\x7f", `\/`}
	var b strings.Builder
	b.WriteByte('"')
	for range r.IntN(5) {
		b.WriteString(parts[r.IntN(len(parts))])
	}
	b.WriteByte('"')
	return b.String()
}

// TestMatcherNoAllocs: in steady state, Mask and Accept allocate nothing.
func TestMatcherNoAllocs(t *testing.T) {
	pieces, eos, err := readSPMVocab(shareddata.Path(t, "llama-2-tiny-random.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	v := NewVocab(pieces, eos)
	src := llamaGrammars(t)["json.gbnf"]
	m := NewMatcher(mustGBNF(t, src), v)
	logits := make([]float32, len(pieces))
	pcg := rand.NewPCG(1, 2)
	r := rand.New(pcg)
	step := func() {
		clear(logits)
		m.Mask(logits, 1000)
		// Choose a token deterministically among the allowed ones without allocating.
		n := 0
		for _, l := range logits {
			if !math.IsInf(float64(l), -1) {
				n++
			}
		}
		k := r.IntN(n)
		for id, l := range logits {
			if !math.IsInf(float64(l), -1) {
				if k == 0 {
					if id == eos || m.Accept(id) != nil {
						m.Reset()
					}
					if m.Done() {
						m.Reset()
					}
					return
				}
				k--
			}
		}
	}
	// One run is 150 tokens from the start, the same each time: AllocsPerRun's warm-up run grows the
	// buffers to their working size, and the runs it counts must not allocate at all.
	run := func() {
		pcg.Seed(1, 2)
		m.Reset()
		for range 150 {
			step()
		}
	}
	if a := testing.AllocsPerRun(5, run); a != 0 {
		t.Errorf("%v allocations per 150 tokens masked and accepted", a)
	}
}

// TestGBNFBudget: with a small budget the output is complete when it runs out; the shortest sentence,
// in single-byte tokens, is ClosingCost at the start (Unclosable when the vocabulary cannot spell it).
func TestGBNFBudget(t *testing.T) {
	pieces, eos := byteVocab("abc", "abcabc")
	v := NewVocab(pieces, eos)
	g := mustGBNF(t, `root ::= "abc"+ [0-9]{3}`)
	m := NewMatcher(g, v)
	if c := m.ClosingCost(); c != 6 { // "abc" then 3 digits, a single-byte token each
		t.Fatalf("start cost %d, want 6", c)
	}
	r := rand.New(rand.NewPCG(5, 6))
	for budget := 6; budget < 14; budget++ {
		for range 20 {
			out, ok := sampleWalk(t, m, pieces, eos, budget, r)
			if !ok || !g.Recognise(out) {
				t.Fatalf("budget %d: %q (complete %v)", budget, out, ok)
			}
		}
	}
	g2 := mustGBNF(t, `root ::= "☃"`) // needs its 3 byte tokens
	if c := NewMatcher(g2, v).ClosingCost(); c != 3 {
		t.Errorf("☃ costs %d, want 3", c)
	}
	noBytes := [][]byte{[]byte("a"), nil}
	if c := NewMatcher(g2, NewVocab(noBytes, 1)).ClosingCost(); c != Unclosable {
		t.Errorf("☃ without byte tokens costs %d, want Unclosable", c)
	}
}

// FuzzParseGBNF: any input compiles or is refused with ErrGrammar; what compiles can be matched (a few
// masked and accepted tokens on a byte vocabulary) without panicking or hanging.
func FuzzParseGBNF(f *testing.F) {
	for _, src := range llamaGrammars(f) {
		f.Add(src)
	}
	f.Add(jsonGBNF)
	f.Add("root ::= (\"a\" | [b-d]+){2,5} x?\nx ::= [^\\n]* \"\\u00e9\"")
	f.Fuzz(func(t *testing.T, src string) {
		g, err := ParseGBNF(src)
		if err != nil {
			if !errors.Is(err, ErrGrammar) {
				t.Fatalf("error without ErrGrammar: %v", err)
			}
			return
		}
		pieces, eos := byteVocab("ab", "\xc3\xa9", "\xe6")
		m := NewMatcher(g, NewVocab(pieces, eos))
		logits := make([]float32, len(pieces))
		for range 8 {
			clear(logits)
			if !m.Mask(logits, 16) {
				return
			}
			for id, l := range logits {
				if !math.IsInf(float64(l), -1) {
					if id == eos {
						return
					}
					if err := m.Accept(id); err != nil {
						t.Fatalf("mask allowed %q, Accept: %v", pieces[id], err)
					}
					break
				}
			}
		}
	})
}
