package tokenizer

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// Special tokens written in the text, as llama.cpp's tokenizer_st_partition
// and tokenize(add_special, parse_special) handle them. Expected ids follow
// from the vocabularies: <unk> 0, <s> 1, </s> 2, "▁Hello" 15043, "▁▁" 259,
// "▁" 29871, "▁x" 921; Phi-3: <|endoftext|> 32000 (EOS), <|assistant|> 32001,
// <|end|> 32007, <|user|> 32010, whose special tokens strip the whitespace
// after them.
func TestSpecialTokens(t *testing.T) {
	spm := load(t, "ggml-vocab-llama-spm.gguf")
	phi := load(t, "ggml-vocab-phi-3.gguf")
	for _, c := range []struct {
		tok          *Tokenizer
		text         string
		add, special bool
		want         []int
	}{
		{spm, "", true, true, []int{1}},
		{spm, "", false, true, nil},
		{spm, "Hello", true, true, []int{1, 15043}},
		// a text fragment after a special token gets the dummy prefix again
		{spm, "<s>Hello</s> <unk>", false, true, []int{1, 15043, 2, 259, 0}},
		{spm, "<s><s>", true, true, []int{1, 1, 1}},
		// without parse_special, control tokens are plain text
		{spm, "<s>Hello</s> <unk>", false, false, []int{529, 29879, 29958, 10994, 829, 29879, 29958, 529, 2960, 29958}},
		{phi, "<|user|>\nHello<|end|>\n<|assistant|>\n", true, true, []int{1, 32010, 15043, 32007, 32001}},
		{phi, "<|user|> Hello <|end|>  <|assistant|>", true, true, []int{1, 32010, 15043, 29871, 32007, 32001}},
		// <|endoftext|> is exempt from stripping: " x" keeps its space
		{phi, "<|endoftext|> x", false, true, []int{32000, 29871, 921}}, // "▁" "▁x"
	} {
		got := c.tok.encode(nil, c.text, c.add, c.special)
		if !slices.Equal(got, c.want) {
			t.Errorf("encode(%q, add_special=%v, parse_special=%v) = %v, want %v", c.text, c.add, c.special, got, c.want)
		}
	}
	// Encode is add_special / parse_special.
	if got, want := spm.Encode("<s>Hi", true), spm.encode(nil, "<s>Hi", true, true); !slices.Equal(got, want) {
		t.Errorf("Encode = %v, want %v", got, want)
	}
}

func TestTokenProperties(t *testing.T) {
	spm := load(t, "ggml-vocab-llama-spm.gguf")
	phi := load(t, "ggml-vocab-phi-3.gguf")
	if spm.VocabSize() != 32000 || phi.VocabSize() != 32064 {
		t.Errorf("vocab sizes %d %d", spm.VocabSize(), phi.VocabSize())
	}
	if spm.BOS() != 1 || spm.EOS() != 2 || phi.EOS() != 32000 {
		t.Errorf("BOS %d EOS %d phi EOS %d", spm.BOS(), spm.EOS(), phi.EOS())
	}
	for _, c := range []struct {
		tok     *Tokenizer
		id      int
		piece   string
		control bool
		eog     bool
	}{
		{spm, 0, "", false, false}, // <unk>
		{spm, 1, "", true, false},  // <s>
		{spm, 2, "", true, true},   // </s>
		{spm, 13, "\n", false, false},
		{spm, 258, "\xff", false, false},
		{spm, 15043, " Hello", false, false},
		{spm, 29871, " ", false, false},
		{phi, 32000, "", true, true}, // <|endoftext|>
		{phi, 32007, "", true, true}, // <|end|>
		{phi, 32001, "", true, false},
		{spm, -1, "", false, false},
		{spm, 32000, "", false, false},
	} {
		if got := string(c.tok.Piece(c.id)); got != c.piece {
			t.Errorf("Piece(%d) = %q, want %q", c.id, got, c.piece)
		}
		if got := c.tok.IsControl(c.id); got != c.control {
			t.Errorf("IsControl(%d) = %v", c.id, got)
		}
		if got := c.tok.IsEOG(c.id); got != c.eog {
			t.Errorf("IsEOG(%d) = %v", c.id, got)
		}
	}
}

func TestErrors(t *testing.T) {
	gpt2 := load(t, "ggml-vocab-gpt-2.gguf")
	if gpt2.bpe == nil || gpt2.addBOS || gpt2.BOS() != 50256 {
		t.Errorf("gpt2 vocabulary: bpe=%v addBOS=%v bos=%d", gpt2.bpe != nil, gpt2.addBOS, gpt2.BOS())
	}
	ok := Vocab{Tokens: []string{"<unk>", "<s>", "</s>", "a"}, BOS: 1, EOS: 2, UNK: 0, AddBOS: true}
	if _, err := New(ok); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		edit func(*Vocab)
		want error
	}{
		"model":     {func(v *Vocab) { v.Model = "bert" }, ErrUnsupportedModel},
		"pre":       {func(v *Vocab) { v.Model, v.Merges, v.Pre = "gpt2", []string{}, "no-such-pre" }, ErrUnsupportedModel},
		"merges":    {func(v *Vocab) { v.Model, v.Pre = "gpt2", "gpt-2" }, ErrInvalidVocab},
		"merge":     {func(v *Vocab) { v.Model, v.Pre, v.Merges = "gpt2", "gpt-2", []string{"ab"} }, ErrInvalidVocab},
		"empty":     {func(v *Vocab) { v.Tokens = nil }, ErrInvalidVocab},
		"duplicate": {func(v *Vocab) { v.Tokens = []string{"<unk>", "<s>", "</s>", "<s>"} }, ErrInvalidVocab},
		"scores":    {func(v *Vocab) { v.Scores = []float32{0} }, ErrInvalidVocab},
		"types":     {func(v *Vocab) { v.Types = []int32{1, 1} }, ErrInvalidVocab},
		"no bos":    {func(v *Vocab) { v.BOS = 7 }, ErrInvalidVocab},
		"no eos":    {func(v *Vocab) { v.EOS = -1; v.AddEOS = true }, ErrInvalidVocab},
	} {
		v := ok
		c.edit(&v)
		if _, err := New(v); !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", name, err, c.want)
		}
	}
}

// The streaming decoder on characters split across tokens and invalid bytes.
// Expectations match Python's bytes.decode("utf-8", "replace").
func TestDecoder(t *testing.T) {
	spm := load(t, "ggml-vocab-llama-spm.gguf")
	byteTok := func(s string) []int {
		var ids []int
		for _, b := range []byte(s) {
			ids = append(ids, int(spm.byteTok[b]))
		}
		return ids
	}
	for _, c := range []struct{ in, want string }{
		{"\xe2\x96\x81", "▁"},
		{"a\xf0\x9f\x98\x81b", "a😁b"},
		{"\xe2\x96", "\ufffd"},
		{"\xe2A", "\ufffdA"},
		{"\xff", "\ufffd"},
		{"\xed\xa0\x80", "\ufffd\ufffd\ufffd"}, // surrogate
		{"\xf0\x9f\x98A", "\ufffdA"},
		{"\xc0\xaf", "\ufffd\ufffd"}, // overlong
		{"\xf4\x90\x80\x80", "\ufffd\ufffd\ufffd\ufffd"},
		{"\xe0\x80\xaf", "\ufffd\ufffd\ufffd"},
		{"\x80\x80", "\ufffd\ufffd"},
		{"\xf0\x9f\x98", "\ufffd"},
	} {
		if got := spm.Decode(byteTok(c.in)); got != c.want {
			t.Errorf("Decode(bytes %q) = %q, want %q", c.in, got, c.want)
		}
	}

	// Streaming: nothing is emitted until the character is complete.
	d := spm.NewDecoder()
	var out []byte
	ids := append([]int{15043}, byteTok("\xf0\x9f\xa6\x99")...) // " Hello🦙"
	for i, id := range ids {
		out = d.Append(out, id)
		want := " Hello"
		if i == len(ids)-1 {
			want = " Hello🦙"
		}
		if string(out) != want {
			t.Fatalf("after token %d: %q, want %q", i, out, want)
		}
	}
	if out = d.Flush(out); string(out) != " Hello🦙" {
		t.Errorf("after Flush: %q", out)
	}
	// An incomplete character is emitted as U+FFFD by Flush, then the
	// decoder starts clean.
	out = d.Append(out[:0], ids[1])
	if len(out) != 0 || !d.Pending() {
		t.Errorf("lead byte alone: %q pending=%v", out, d.Pending())
	}
	if out = d.Flush(out); string(out) != "\ufffd" || d.Pending() {
		t.Errorf("Flush of a lead byte: %q", out)
	}
	if out = d.Append(out[:0], 15043); string(out) != " Hello" {
		t.Errorf("after Flush: %q", out)
	}

	// No allocation per token when dst has room.
	buf := make([]byte, 0, 64)
	allocs := testing.AllocsPerRun(100, func() {
		b := buf[:0]
		for _, id := range ids {
			b = d.Append(b, id)
		}
		_ = d.Flush(b)
	})
	if allocs != 0 {
		t.Errorf("Decoder.Append allocates %.1f times per run", allocs)
	}
}

// Whatever the token boundaries, valid UTF-8 comes out unchanged.
func TestDecoderSplits(t *testing.T) {
	spm := load(t, "ggml-vocab-llama-spm.gguf")
	text := "a😁é€\u0800\U0010FFFFz"
	for cut := 0; cut <= len(text); cut++ {
		d := spm.NewDecoder()
		out := d.AppendBytes(nil, []byte(text[:cut]))
		out = d.AppendBytes(out, []byte(text[cut:]))
		if out = d.Flush(out); string(out) != text {
			t.Errorf("cut at %d: %q", cut, out)
		}
	}
}

func TestEncodeAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool is randomised under -race")
	}
	spm := load(t, "ggml-vocab-llama-spm.gguf")
	text := strings.Repeat("Hello, y'all! How are you 😁 ?我想在apple工作1314151天～ ", 20)
	dst := make([]int, 0, 4096)
	spm.AppendEncode(dst, text, true) // warm the scratch
	allocs := testing.AllocsPerRun(50, func() { spm.AppendEncode(dst[:0], text, true) })
	if allocs > 1 {
		t.Errorf("AppendEncode allocates %.1f times per call", allocs)
	}
}

// FuzzRoundTrip: for valid UTF-8 without special tokens, decoding the
// encoding gives the text back, behind the dummy-prefix space.
func FuzzRoundTrip(f *testing.F) {
	spm := load(f, "ggml-vocab-llama-spm.gguf")
	phi := load(f, "ggml-vocab-phi-3.gguf")
	for _, s := range []string{"", " ", "Hello world", "  \t\n", "нещо на Български", "🚀 (normal) 😶‍🌫️ ✅", "\x00\x01", "ሰላም", "3..3", "\u2581x", "<s>x</s>", "<|user|> hi<|end|>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		ids := spm.encode(nil, s, false, false)
		want := s
		if s != "" {
			want = " " + s
		}
		want = strings.ReplaceAll(want, "\u2581", " ") // "▁" in the text reads back as a space, as in llama.cpp
		if got := spm.Decode(ids); got != want {
			t.Fatalf("Decode(encode(%q)) = %q (ids %v)", s, got, ids)
		}
		// With special-token parsing, any text encodes to valid ids.
		for _, tok := range []*Tokenizer{spm, phi} {
			for _, id := range tok.Encode(s, true) {
				if id < 0 || id >= tok.VocabSize() {
					t.Fatalf("Encode(%q): id %d out of range", s, id)
				}
			}
		}
	})
}

// The tokenizer is shared by goroutines (run with -race).
func TestConcurrentEncode(t *testing.T) {
	phi := load(t, "ggml-vocab-phi-3.gguf")
	texts := []string{"<|user|>\nHello<|end|>\n<|assistant|>\n", "нещо на Български", strings.Repeat("3333 ", 100)}
	want := make([][]int, len(texts))
	for i, s := range texts {
		want[i] = phi.Encode(s, true)
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; n < 50; n++ {
				i := n % len(texts)
				if got := phi.Encode(texts[i], true); !slices.Equal(got, want[i]) {
					t.Errorf("concurrent Encode(%q) = %v, want %v", texts[i], got, want[i])
					return
				}
			}
		}()
	}
	wg.Wait()
}

func BenchmarkEncode(b *testing.B) {
	spm := load(b, "ggml-vocab-llama-spm.gguf")
	para := "Once upon a time, there was a little girl named Lily. She loved to play outside in the park. 我想在apple工作 😁\n"
	for _, size := range []int{1 << 10, 10 << 10, 100 << 10} {
		text := strings.Repeat(para, size/len(para)+1)[:size]
		b.Run(byteSize(size), func(b *testing.B) {
			dst := make([]int, 0, size)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				dst = spm.AppendEncode(dst[:0], text, true)
			}
		})
	}
	// no spaces at all: one long SentencePiece word
	text := strings.Repeat("a", 10<<10)
	b.Run("10KB-one-word", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		b.ReportAllocs()
		dst := make([]int, 0, len(text))
		for b.Loop() {
			dst = spm.AppendEncode(dst[:0], text, true)
		}
	})
}

func byteSize(n int) string { return fmt.Sprintf("%dKB", n>>10) }
