package grammar

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
	"unsafe"

	"github.com/picolm/picolm-wasm/scripts/shareddata"
)

// feed runs the automaton over doc byte by byte and reports whether every byte is accepted and the
// document is complete at the end.
func feed(doc []byte) (State, bool) {
	st := start()
	for _, c := range doc {
		if !st.step(c) {
			return st, false
		}
	}
	return st, st.Complete()
}

var validDocs = []string{
	`{}`, `[]`, ` {}`, `{ }`, `[ ]`, "{\n}", "[\t]", "\r\n[]",
	`{"a":1}`, `{"a" : 1 , "b" : [true, false, null]}`,
	`[0, -0, 1, -1, 10, 123456789, 0.5, -0.0, 1.25e10, 1E+2, 1e-2, 0e0, -12.5E-07]`,
	`["", "a", "\"", "\\", "\/", "\b\f\n\r\t", "\u0041\u00e9\uD83D\uDE00", "\uFFFF", "é", "日本語", "😀"]`,
	`{"nested":{"deeper":{"deepest":[[[]]]}}}`,
	`[{"a":{}},{"b":[]},[{}]]`,
	`[1,[2,[3,[4]]]]`,
	`{"k":"v","k2":{"x":[1,2,{"y":null}]}}`,
	`[true,false,null,"x",1,{},[]]`,
	`{"a":"` + "\x7f" + `"}`, // DEL is not a control character in JSON
	"[1 ,2\n,3]",
	`[1]`, `[-1]`, `[0]`, `[1.5]`, `[1e5]`, `{"":""}`,
	`{"a":true}`, `{"a":false}`, `{"a":null}`,
	`[` + strings.Repeat(`[`, MaxDepth-1) + strings.Repeat(`]`, MaxDepth-1) + `]`,
	`[` + strings.Repeat(" ", MaxWhitespace) + `1]`,
	// Bare values at the top level (what Mask allows when the budget is too small for a container).
	`1`, `0`, `-0.5e3`, `123`, `"a"`, `""`, `true`, `false`, `null`, ` 7`, `"\u0041é"`,
}

var invalidDocs = []string{
	``, ` `, `-`, `1.`, `"a`, `tru`, `01`, `1 `, `"a" `, `true `, `1,2`, `1]`, `"a"x`, `truex`, `nul`, // bare values
	`{`, `[`, `{"a"`, `{"a":`, `{"a":1`, `[1,`, `["abc`, `[1.`, `[-`, `[tru`, // truncated
	`[1,]`, `{"a":1,}`, `[,1]`, `{,}`, `[1 2]`, `{"a" 1}`, `{"a":1 "b":2}`, // commas
	`[01]`, `[-01]`, `[00]`, `[1.]`, `[.5]`, `[1e]`, `[1e+]`, `[+1]`, `[1.e5]`, `[--1]`, `[0x10]`, `[1E+-2]`, // numbers
	`["\x"]`, `["\u12"]`, `["\u12G4"]`, `["\U0041"]`, `["\'"]`, "[\"\t\"]", "[\"\n\"]", "[\"\x00\"]", // strings
	"[\"\xff\"]", "[\"\xc0\x80\"]", "[\"\xed\xa0\x80\"]", "[\"\xe2\x82\"]", "[\"\xf4\x90\x80\x80\"]", "[\"\x80\"]", // UTF-8
	`[True]`, `[nul]`, `[nulll]`, `[truefalse]`, `[t rue]`, // literals
	`{1:2}`, `{a:1}`, `{'a':1}`, `{"a"::1}`, `{"a":1}}`, `[]]`, `[}`, `{]`, `[1}`, `{"a":[}`, // structure
	`{}{}`, `{} `, `[]x`, `[] []`, // nothing after the top-level value
	`[` + strings.Repeat(`[`, MaxDepth) + strings.Repeat(`]`, MaxDepth) + `]`, // too deep
	`[` + strings.Repeat(" ", MaxWhitespace+1) + `1]`,                         // too much whitespace
	`[1` + strings.Repeat(" ", MaxWhitespace+1) + `]`,
}

func TestPDAHandWritten(t *testing.T) {
	for _, d := range validDocs {
		if !json.Valid([]byte(d)) {
			t.Fatalf("test bug: %q is not valid JSON", d)
		}
		if _, ok := feed([]byte(d)); !ok {
			t.Errorf("rejected valid %q", d)
		}
	}
	for _, d := range invalidDocs {
		if _, ok := feed([]byte(d)); ok {
			t.Errorf("accepted invalid %q", d)
		}
	}
}

// jsonShape returns the maximum nesting depth and the longest whitespace run outside strings of a valid
// JSON document.
func jsonShape(doc []byte) (depth, wsRun int) {
	d, run, inStr, esc := 0, 0, false, false
	for _, c := range doc {
		if inStr {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		if isWS(c) {
			run++
			wsRun = max(wsRun, run)
			continue
		}
		run = 0
		switch c {
		case '"':
			inStr = true
		case '{', '[':
			d++
			depth = max(depth, d)
		case '}', ']':
			d--
		}
	}
	return depth, wsRun
}

// checkAgainstStdlib compares the automaton with encoding/json on one document.
func checkAgainstStdlib(t *testing.T, doc []byte) {
	_, ok := feed(doc)
	valid := json.Valid(doc)
	if ok && !valid {
		t.Fatalf("PDA accepts %q, json.Valid rejects it", doc)
	}
	if !valid {
		return
	}
	depth, ws := jsonShape(doc)
	// The documented restrictions: no trailing whitespace, the depth and whitespace caps, valid UTF-8.
	want := depth <= MaxDepth && ws <= MaxWhitespace && utf8.Valid(doc) &&
		len(bytes.TrimRight(doc, " \t\r\n")) == len(doc)
	if want && !ok {
		t.Fatalf("PDA rejects %q, which is valid JSON within the grammar's limits", doc)
	}
	if ok && !want {
		t.Fatalf("PDA accepts %q, outside the grammar's limits", doc)
	}
}

func FuzzPDA(f *testing.F) {
	for _, d := range validDocs {
		f.Add([]byte(d))
	}
	for _, d := range invalidDocs {
		f.Add([]byte(d))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		checkAgainstStdlib(t, doc)
		// Every prefix accepted so far can be closed by its closing text.
		st := start()
		for _, c := range doc {
			if !st.step(c) {
				break
			}
			closeAndCheck(t, st)
		}
	})
}

// closeAndCheck feeds st's closing text byte by byte: each byte must be accepted and lower the closing
// length by exactly one, and the result must be a finished document.
func closeAndCheck(t *testing.T, st State) {
	cl := st.closing(nil)
	for i, c := range cl {
		before := len(st.closing(nil))
		if !st.step(c) {
			t.Fatalf("closing %q: byte %d rejected", cl, i)
		}
		if after := len(st.closing(nil)); after != before-1 {
			t.Fatalf("closing %q: byte %d took the closing length from %d to %d", cl, i, before, after)
		}
	}
	if !st.Complete() {
		t.Fatalf("closing %q does not finish the document", cl)
	}
}

// TestPDAGenerated compares with encoding/json on documents made by encoding/json itself, and on their
// mutations (a byte dropped, duplicated or replaced), which are mostly invalid.
func TestPDAGenerated(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for range 3000 {
		v := randomValue(r, 0, true)
		doc, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if r.IntN(2) == 0 {
			var buf bytes.Buffer
			json.Indent(&buf, doc, "", "  ")
			doc = buf.Bytes()
		}
		checkAgainstStdlib(t, doc)
		if _, ok := feed(doc); !ok {
			depth, ws := jsonShape(doc)
			if depth <= MaxDepth && ws <= MaxWhitespace {
				t.Fatalf("rejected %q", doc)
			}
		}
		for range 5 {
			m := bytes.Clone(doc)
			i := r.IntN(len(m))
			switch r.IntN(3) {
			case 0:
				m = append(m[:i], m[i+1:]...)
			case 1:
				m = append(m[:i+1], m[i:]...)
			case 2:
				m[i] = `{}[]":,.-+eE0123456789 \tn"\u`[r.IntN(28)]
			}
			checkAgainstStdlib(t, m)
		}
	}
}

func randomValue(r *rand.Rand, depth int, top bool) any {
	k := r.IntN(8)
	if top {
		k = r.IntN(2)
	}
	if depth > 5 {
		k = 2 + r.IntN(6)
	}
	switch k {
	case 0:
		m := map[string]any{}
		for range r.IntN(4) {
			m[randomString(r)] = randomValue(r, depth+1, false)
		}
		return m
	case 1:
		a := []any{}
		for range r.IntN(4) {
			a = append(a, randomValue(r, depth+1, false))
		}
		return a
	case 2:
		return randomString(r)
	case 3:
		return r.NormFloat64() * math.Pow(10, float64(r.IntN(40)-20))
	case 4:
		return r.IntN(2000) - 1000
	case 5:
		return r.IntN(2) == 0
	case 6:
		return nil
	}
	return json.Number(fmt.Sprintf("%d.%de%+d", r.IntN(100), r.IntN(100), r.IntN(20)-10))
}

func randomString(r *rand.Rand) string {
	const alphabet = "ab \"\\/\n\t\x01é日😀<>&\u2028"
	rs := []rune(alphabet)
	var sb strings.Builder
	for range r.IntN(6) {
		sb.WriteRune(rs[r.IntN(len(rs))])
	}
	return sb.String()
}

func TestClosingConsistent(t *testing.T) {
	for _, d := range validDocs {
		st := start()
		closeAndCheck(t, st)
		for _, c := range []byte(d) {
			if !st.step(c) {
				t.Fatalf("%q rejected", d)
			}
			closeAndCheck(t, st)
		}
	}
	// Every mode that can be reached, including mid-UTF-8 and mid-escape states.
	for _, prefix := range []string{`["\u12`, `{"\`, "{\"\xf0\x9f", "[\"\xe2", `[-`, `[1.`, `[1e`, `[1e-`, `{"a":fa`, `{"a"`, `{"a":1,`} {
		st := start()
		for _, c := range []byte(prefix) {
			if !st.step(c) {
				t.Fatalf("%q rejected", prefix)
			}
		}
		closeAndCheck(t, st)
	}
}

func TestStateSize(t *testing.T) {
	// The state is copied at every trie node: keep it small.
	if size := unsafe.Sizeof(State{}); size > 16 {
		t.Fatalf("State is %d bytes", size)
	}
}

// ---------------------------------------------------------------------------------------------------------
// Vocabulary-level tests.

// synthVocab builds a deterministic synthetic vocabulary of about n pieces: every single byte (as byte
// fallback gives), control tokens, JSON punctuation clusters, literals, numbers, words and UTF-8 pieces,
// some of them incomplete sequences.
func synthVocab(n int, seed uint64) (pieces [][]byte, eos int) {
	r := rand.New(rand.NewPCG(seed, 99))
	seen := map[string]bool{}
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			pieces = append(pieces, []byte(s))
		}
	}
	pieces = append(pieces, nil, nil, nil) // <unk> <s> </s>
	eos = 2
	for c := range 256 {
		add(string([]byte{byte(c)}))
	}
	for _, s := range []string{"{}", "[]", `{"`, `["`, `":`, `": `, `",`, `", "`, `","`, `":"`, `"}`, `"]`, `},`,
		`}]`, `]}`, `}}`, `]]`, `},{"`, `}, {"`, `[{"`, `[[`, "\n  ", "\n    ", "  ", " ", ",\n", "true", "false",
		"null", " true", " false", " null", `\u`, `\n`, `\"`, `\\`, "e+", "E-", ".5", "-1", "0.", "00", "12",
		"é", "日本", "😀", "\xe2\x80", "\x80\x99", "\xf0\x9f", "tr", "ue", "fal", "se", "nu", "ll", `"name`, `"age":`} {
		add(s)
	}
	const chars = "{}[]\":,0123456789-+.eEtrufalsn \n\\/abxyz"
	words := []string{"the", "cat", "name", "age", "color", "is", "a", "value", "key", "list", "Once", "upon", "time"}
	for len(pieces) < n {
		switch r.IntN(4) {
		case 0, 1:
			var b []byte
			for range 2 + r.IntN(2) {
				b = append(b, chars[r.IntN(len(chars))])
			}
			add(string(b))
		case 2:
			w := words[r.IntN(len(words))]
			switch r.IntN(4) {
			case 0:
				w = " " + w
			case 1:
				w = `"` + w
			case 2:
				w = w + `"`
			}
			add(w + strings.Repeat(string(rune('a'+r.IntN(26))), r.IntN(3)))
		case 3:
			var b []byte
			for range 1 + r.IntN(6) {
				b = append(b, byte('a'+r.IntN(26)))
			}
			add(string(b))
		}
	}
	return pieces, eos
}

// bruteAllowed is Mask's specification: token by token.
func bruteAllowed(g *Grammar, st *State, id, remaining int) bool {
	if st.Done() {
		return id == g.eos
	}
	if id == g.eos {
		return st.Complete()
	}
	if len(g.pieces[id]) == 0 {
		return false
	}
	// next returns the closing cost after token j, ok false if the grammar does not allow it. At the start
	// the top-level value must be an object or array while one of them fits: a token that opens one, or
	// whitespace (which keeps that choice open).
	containerOnly := false
	next := func(j int) (int, bool) {
		s := *st
		if j == g.eos || len(g.pieces[j]) == 0 || g.Accept(&s, j) != nil {
			return 0, false
		}
		if containerOnly {
			switch v := bytes.TrimLeft(g.pieces[j], " \t\r\n"); {
			case len(v) == 0:
				return g.objCost, true
			case v[0] != '{' && v[0] != '[':
				return 0, false
			}
		}
		return g.cost(&s), true
	}
	limit := remaining - 1
	if st.mode == mStart {
		containerOnly = true
		fits := false
		for j := range g.pieces {
			if c, ok := next(j); ok && c <= limit {
				fits = true
				break
			}
		}
		containerOnly = fits
	}
	cost := g.cost(st)
	if containerOnly {
		cost = g.objCost
	}
	if cost > remaining {
		limit = infCost
		for j := range g.pieces {
			if c, ok := next(j); ok {
				limit = min(limit, c)
			}
		}
	}
	c, ok := next(id)
	return ok && c <= limit
}

func allowedSet(logits []float32) []int {
	var ids []int
	for i, v := range logits {
		if !math.IsInf(float64(v), -1) {
			ids = append(ids, i)
		}
	}
	return ids
}

// TestMaskMatchesBruteForce checks Mask against the token-by-token definition along random walks.
func TestMaskMatchesBruteForce(t *testing.T) {
	pieces, eos := synthVocab(3000, 1)
	maskMatchesBruteForce(t, pieces, eos, 60)
	t.Run("llama-spm", func(t *testing.T) {
		pieces, eos, err := readSPMVocab(shareddata.Path(t, "ggml-vocab-llama-spm.gguf"))
		if err != nil {
			t.Skip(err)
		}
		maskMatchesBruteForce(t, pieces, eos, 6)
	})
}

func maskMatchesBruteForce(t *testing.T, pieces [][]byte, eos, walks int) {
	g := NewJSON(pieces, eos)
	r := rand.New(rand.NewPCG(5, 6))
	logits := make([]float32, len(pieces))
	for walk := range walks {
		st := g.Start()
		budget := 1 + r.IntN(40)
		for remaining := budget; remaining > 0 && !st.Done(); remaining-- {
			for i := range logits {
				logits[i] = float32(r.NormFloat64())
			}
			g.Mask(&st, logits, remaining)
			for id := range pieces {
				got := !math.IsInf(float64(logits[id]), -1)
				if want := bruteAllowed(g, &st, id, remaining); got != want {
					t.Fatalf("walk %d, state %s (remaining %d): token %d %q: Mask allows=%v, brute force=%v",
						walk, &st, remaining, id, pieces[id], got, want)
				}
			}
			ids := allowedSet(logits)
			if len(ids) == 0 {
				t.Fatalf("walk %d: nothing allowed in %s with %d remaining", walk, &st, remaining)
			}
			if err := g.Accept(&st, ids[r.IntN(len(ids))]); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestRandomGenerations: 2000 generations with a random sampler, each with a random budget (tiny ones
// included): every output must be valid JSON within the budget.
func TestRandomGenerations(t *testing.T) {
	pieces, eos := synthVocab(4000, 2)
	randomGenerations(t, pieces, eos, 2000)
}

// TestRandomGenerationsRealVocab runs the same walks over the real SentencePiece vocabularies of the
// shared test data, whose pieces mix JSON punctuation, spaces and words the way a model's output does.
func TestRandomGenerationsRealVocab(t *testing.T) {
	for _, name := range []string{"ggml-vocab-llama-spm.gguf", "stories260K.gguf", "llama-2-tiny-random.gguf"} {
		t.Run(name, func(t *testing.T) {
			pieces, eos, err := readSPMVocab(shareddata.Path(t, name))
			if err != nil {
				t.Skip(err)
			}
			g := NewJSON(pieces, eos)
			st := g.Start()
			if c := g.ClosingCost(&st); c != 1 {
				t.Fatalf("ClosingCost at the start = %d, want 1 (a one-token value: a digit)", c)
			}
			n := 300
			if testing.Short() {
				n = 50
			}
			randomGenerations(t, pieces, eos, n)
		})
	}
}

// randomGenerations makes count generations with a random sampler, each with a random budget (tiny ones
// included, down to 1): every output must be complete valid JSON within the budget, an object or array
// whenever one fits.
func randomGenerations(t *testing.T, pieces [][]byte, eos, count int) {
	g := NewJSON(pieces, eos)
	r := rand.New(rand.NewPCG(7, uint64(len(pieces))))
	minBudget := 1
	logits := make([]float32, len(pieces))
	base := make([]float32, len(pieces))
	lengths, bare := 0, 0
	var last []byte
	for gen := range count {
		budget := minBudget + r.IntN(8)
		if gen%2 == 0 {
			budget = minBudget + r.IntN(120)
		}
		// A random preference per token for this generation, sometimes biased toward opening brackets
		// and strings; fresh noise at every step.
		bias := r.Float32() * 4
		for i := range base {
			base[i] = r.Float32() * 3
			if p := pieces[i]; len(p) > 0 && (p[0] == '{' || p[0] == '[' || p[0] == '"') {
				base[i] += bias
			}
		}
		noise := r.Uint64() | 1
		st := g.Start()
		var out []byte
		n := 0
		for ; n < budget && !st.Done(); n++ {
			if st.Complete() && r.IntN(3) == 0 {
				break // a bare number may end anywhere (its end-of-generation token)
			}
			if c := g.ClosingCost(&st); c > budget-n && n > 0 {
				t.Fatalf("gen %d: closing cost %d exceeds the %d tokens left", gen, c, budget-n)
			}
			copy(logits, base)
			g.Mask(&st, logits, budget-n)
			id := pickNoisy(logits, &noise)
			if id < 0 {
				t.Fatalf("gen %d: no token allowed after %q", gen, out)
			}
			if err := g.Accept(&st, id); err != nil {
				t.Fatalf("gen %d: %v", gen, err)
			}
			out = append(out, pieces[id]...)
		}
		if !st.Complete() || !json.Valid(out) {
			t.Fatalf("gen %d (budget %d): output %q is not complete JSON (state %s)", gen, budget, out, &st)
		}
		if n > budget {
			t.Fatalf("gen %d: %d tokens for a budget of %d", gen, n, budget)
		}
		if v := bytes.TrimLeft(out, " \t\r\n"); budget >= g.objCost && v[0] != '{' && v[0] != '[' {
			t.Fatalf("gen %d (budget %d): %q is not an object or array, and one takes %d tokens", gen, budget, out, g.objCost)
		}
		if budget < g.objCost {
			bare++
		}
		// After the close, only EOS (a bare number also allows more digits).
		clear(logits)
		g.Mask(&st, logits, 1)
		if ids := allowedSet(logits); !slices.Contains(ids, eos) || st.Done() && len(ids) != 1 {
			t.Fatalf("gen %d: after the close, allowed %v", gen, ids)
		}
		if err := g.Accept(&st, eos); err != nil {
			t.Fatal(err)
		}
		lengths += len(out)
		last = out
	}
	t.Logf("%d generations (%d with too small a budget for an object or array), %d bytes in all; the last: %q", count, bare, lengths, last)
}

// pickNoisy returns the allowed token with the highest logit plus uniform noise in [0, 4) (a random
// sampler that is cheap enough for thousands of generations), or -1 if none is allowed.
func pickNoisy(logits []float32, x *uint64) int {
	best, bv := -1, float32(math.Inf(-1))
	for i, v := range logits {
		if math.IsInf(float64(v), -1) {
			continue
		}
		*x ^= *x << 13
		*x ^= *x >> 7
		*x ^= *x << 17
		if s := v + float32(*x>>40)*(4.0/(1<<24)); s > bv {
			best, bv = i, s
		}
	}
	return best
}

func TestAcceptErrors(t *testing.T) {
	pieces, eos := synthVocab(400, 3)
	g := NewJSON(pieces, eos)
	id := func(s string) int {
		for i, p := range pieces {
			if string(p) == s {
				return i
			}
		}
		t.Fatalf("no piece %q", s)
		return -1
	}
	st := g.Start()
	for _, bad := range []int{-1, len(pieces), 0, eos, id("a"), id("}")} {
		before := st
		if err := g.Accept(&st, bad); !errors.Is(err, ErrRejected) {
			t.Errorf("Accept(%d) = %v, want ErrRejected", bad, err)
		}
		if st != before {
			t.Errorf("a rejected token changed the state")
		}
	}
	for _, s := range []string{"{", `"name`, `":`, "12", "}"} {
		if err := g.Accept(&st, id(s)); err != nil {
			t.Fatal(err)
		}
	}
	if !st.Done() {
		t.Fatal("not done")
	}
	if err := g.Accept(&st, eos); err != nil {
		t.Fatal(err)
	}
	if err := g.Accept(&st, id(" ")); !errors.Is(err, ErrRejected) {
		t.Fatal("whitespace after the document accepted")
	}
}

func TestMaskLogitsLength(t *testing.T) {
	pieces, eos := synthVocab(400, 3)
	g := NewJSON(pieces, eos)
	st := g.Start()
	short := make([]float32, 10)
	g.Mask(&st, short, 100)
	if len(allowedSet(short)) != 0 {
		t.Fatal("a short logits row must be masked entirely")
	}
	long := make([]float32, len(pieces)+5)
	g.Mask(&st, long, 100)
	for _, i := range allowedSet(long) {
		if i >= len(pieces) {
			t.Fatalf("entry %d past the vocabulary allowed", i)
		}
	}
}

// TestMissingSingleByteTokens: with no single-byte tokens at all the closing cost inside a container is
// unknown (infinite), the start's is that of the one-token documents; Mask still allows what brings the
// cost lowest and never panics.
func TestMissingSingleByteTokens(t *testing.T) {
	pieces := [][]byte{nil, []byte(`{"a":1}`), []byte(`[1,2]`), []byte(`{"`), []byte(`ab`)}
	g := NewJSON(pieces, 0)
	st := g.Start()
	if c := g.ClosingCost(&st); c != 1 {
		t.Fatalf("ClosingCost at the start = %d, want 1", c)
	}
	if s := st; g.Accept(&s, 3) != nil || g.ClosingCost(&s) != infCost {
		t.Fatalf("ClosingCost after {\" = %d, want infCost", g.ClosingCost(&s))
	}
	logits := make([]float32, len(pieces))
	g.Mask(&st, logits, 1)
	ids := allowedSet(logits)
	if len(ids) != 2 || ids[0] != 1 || ids[1] != 2 {
		t.Fatalf("allowed %v, want the two complete documents [1 2]", ids)
	}
}

func TestNoAllocs(t *testing.T) {
	pieces, eos := synthVocab(32000, 4)
	g := NewJSON(pieces, eos)
	logits := make([]float32, len(pieces))
	st := g.Start()
	for _, s := range []string{"{", `"name`, `":`} {
		for i, p := range pieces {
			if string(p) == s {
				if err := g.Accept(&st, i); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if a := testing.AllocsPerRun(20, func() { g.Mask(&st, logits, 50) }); a != 0 {
		t.Errorf("Mask: %v allocations", a)
	}
	if a := testing.AllocsPerRun(20, func() { g.Mask(&st, logits, 1) }); a != 0 {
		t.Errorf("Mask over budget: %v allocations", a)
	}
	id := 0
	for i, p := range pieces {
		if string(p) == "12" {
			id = i
		}
	}
	if a := testing.AllocsPerRun(100, func() { s := st; _ = g.Accept(&s, id) }); a != 0 {
		t.Errorf("Accept: %v allocations", a)
	}
}
