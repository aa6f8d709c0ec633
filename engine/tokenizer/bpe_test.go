package tokenizer

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// preSplit returns the words pre-tokenizer p makes of text.
func preSplit(p preType, text string) []string {
	st := new(encodeState)
	var runes []rune
	var flags []uint8
	var offs []int
	for i, r := range text {
		runes = append(runes, r)
		flags = append(flags, cpFlags(r))
		offs = append(offs, i)
	}
	offs = append(offs, len(text))
	sp := splitter{runes: runes, flags: flags}
	var words []string
	start := 0
	for _, end := range p.split(&sp, st) {
		words = append(words, text[offs[start]:offs[end]])
		start = int(end)
	}
	if start != len(runes) {
		words = append(words, "<<uncovered "+text[offs[start]:]+">>")
	}
	return words
}

// TestPreTokenizers compares the hand-written scanners with the regular
// expressions they stand for, on splits made by JavaScript's regexp engine
// (testdata/gen_pretok.cjs): llama.cpp's vectors plus 400 random strings of
// contractions, digits, letters, marks, symbols and whitespace.
func TestPreTokenizers(t *testing.T) {
	b, err := os.ReadFile("testdata/pretok.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []map[string]any
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 400 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, name := range []string{"gpt-2", "llama-bpe", "qwen2", "smollm"} {
		fails := 0
		for _, c := range cases {
			in := c["in"].(string)
			var want []string
			for _, w := range c[name].([]any) {
				want = append(want, w.(string))
			}
			got := preSplit(preTypes[name], in)
			if strings.Join(got, "\x00") != strings.Join(want, "\x00") || len(got) != len(want) {
				if fails++; fails <= 5 {
					t.Errorf("%s %q:\n got %q\nwant %q", name, in, got, want)
				}
			}
		}
		if fails > 0 {
			t.Errorf("%s: %d of %d cases differ", name, fails, len(cases))
		}
	}
}

func TestPreTokenizerDefault(t *testing.T) {
	// llama.cpp's default: punctuation runs, then GPT-2, then digit runs,
	// then groups of three ASCII digits.
	for in, want := range map[string][]string{
		"Hello, world!!": {"Hello", ",", " world", "!!"},
		"1234567 a$b":    {"123", "456", "7", " a", "$", "b"},
		"":               nil,
	} {
		got := preSplit(preDefault, in)
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}

func TestBPEPiecesAndSpecials(t *testing.T) {
	tok := load(t, "ggml-vocab-gpt-2.gguf")
	for text, want := range map[string]string{"Ġhello": " hello", "Ċ": "\n", "ĉ": "\t", "<|endoftext|>": "", "Ã©": "é", "Ġâ": " \xe2"} {
		id, ok := tok.ids[text]
		if !ok {
			t.Fatalf("no token %q", text)
		}
		if got := string(tok.Piece(int(id))); got != want {
			t.Errorf("Piece(%q) = %q, want %q", text, got, want)
		}
	}
	// Every byte round-trips through its byte-level token.
	for b := 0; b < 256; b++ {
		if p := tok.Piece(int(tok.byteTok[b])); len(p) != 1 || p[0] != byte(b) {
			t.Errorf("byte %#x: piece %q", b, p)
		}
	}
	// Special tokens are cut out before the pre-tokenizer with parse_special.
	ids := tok.Encode("Hello<|endoftext|> world", true)
	if want := []int{15496, 50256, 995}; !slices.Equal(ids, want) {
		t.Errorf("Encode with special = %v, want %v", ids, want)
	}
	if ids := tok.encode(nil, "<|endoftext|>", false, false); len(ids) < 2 {
		t.Errorf("without parse_special the text must not become the special token: %v", ids)
	}
	if tok.IsEOG(50256) == false || tok.IsControl(50256) == false {
		t.Error("<|endoftext|> should be a control, end-of-generation token")
	}
	// Invalid UTF-8 becomes U+FFFD, as llama.cpp does.
	if got, want := tok.Decode(tok.Encode("a\xffb", false)), "a\uFFFDb"; got != want {
		t.Errorf("invalid UTF-8: %q, want %q", got, want)
	}
}

// A tiny vocabulary where the merges do not lead to a word that is itself a
// token: Llama-3-style pre-tokenizers take the word whole (ignore_merges).
func TestBPEIgnoreMerges(t *testing.T) {
	var toks []string
	for b := 0; b < 256; b++ {
		toks = append(toks, string(byteRunes[b]))
	}
	toks = append(toks, "ab", "abc", "Ġab")
	v := Vocab{Model: ModelBPE, Tokens: toks, Merges: []string{"a b", "Ġ ab"}, BOS: -1, EOS: -1, UNK: -1}
	for pre, want := range map[string][]int{
		"gpt-2":     {256, 'c'},
		"llama-bpe": {257},
	} {
		v.Pre = pre
		tok, err := New(v)
		if err != nil {
			t.Fatal(err)
		}
		if got := tok.Encode("abc", false); !slices.Equal(got, want) {
			t.Errorf("%s: Encode(abc) = %v, want %v", pre, got, want)
		}
		if got := tok.Encode(" ab", false); !slices.Equal(got, []int{258}) {
			t.Errorf("%s: Encode(' ab') = %v, want [258]", pre, got)
		}
		if got := tok.Decode(tok.Encode("x abc!", false)); got != "x abc!" {
			t.Errorf("%s: round trip %q", pre, got)
		}
	}
}

func TestBPEEncodeAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool is randomised under -race")
	}
	tok := load(t, "ggml-vocab-gpt-2.gguf")
	text := strings.Repeat("Hello world, this is a test of 1234 tokens! ", 20)
	dst := tok.AppendEncode(nil, text, true)
	allocs := testing.AllocsPerRun(50, func() { tok.AppendEncode(dst[:0], text, true) })
	if allocs > 1 {
		t.Errorf("AppendEncode allocates %.1f times per call", allocs)
	}
}

// FuzzBPERoundTrip: byte-level BPE is lossless, so decoding the encoding of
// valid UTF-8 gives the text back exactly.
func FuzzBPERoundTrip(f *testing.F) {
	tok := load(f, "ggml-vocab-gpt-2.gguf")
	for _, s := range []string{"", " ", "Hello world", "  \t\n", "нещо на Български", "🚀 (normal) 😶‍🌫️ ✅", "\x00\x01", "3..3", "I'm 123456", "<|endoftext|>x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		ids := tok.encode(nil, s, false, false)
		if got := tok.Decode(ids); got != s {
			t.Fatalf("Decode(encode(%q)) = %q (ids %v)", s, got, ids)
		}
		for _, pre := range []preType{preDefault, preGPT2, preLlama3, preQwen2, preSmolLM} {
			if got := strings.Join(preSplit(pre, s), ""); got != s {
				t.Fatalf("pre-tokenizer %d loses text: %q -> %q", pre, s, got)
			}
		}
		for _, id := range tok.Encode(s, true) {
			if id < 0 || id >= tok.VocabSize() {
				t.Fatalf("Encode(%q): id %d out of range", s, id)
			}
		}
	})
}

func BenchmarkBPEEncode(b *testing.B) {
	tok := load(b, "ggml-vocab-gpt-2.gguf")
	text := strings.Repeat("Hello, y'all! How are you 😁 ?我想在apple工作1314151天～ ", 100)
	dst := tok.AppendEncode(nil, text, true)
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		dst = tok.AppendEncode(dst[:0], text, true)
	}
}
