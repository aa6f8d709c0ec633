package tokenizer

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/picolm/picolm-wasm/gguf"
)

// parseKV writes a vocabulary-only GGUF file with the given metadata and
// parses it.
func parseKV(t *testing.T, kv ...gguf.KeyValue) *gguf.File {
	t.Helper()
	var buf bytes.Buffer
	if err := gguf.Write(&buf, kv, nil, 0); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// fromKV loads the tokenizer of parseKV's file.
func fromKV(t *testing.T, kv []gguf.KeyValue) (*Tokenizer, error) {
	t.Helper()
	return FromGGUF(parseKV(t, kv...))
}

func TestFromGGUFMetadata(t *testing.T) {
	tokens := gguf.Strings([]string{"<unk>", "<s>", "</s>", "\u2581a", "a", "\u2581"})
	base := func(extra ...gguf.KeyValue) []gguf.KeyValue {
		return append([]gguf.KeyValue{
			{Key: "tokenizer.ggml.model", Value: gguf.String("llama")},
			{Key: "tokenizer.ggml.tokens", Value: tokens},
		}, extra...)
	}

	// Only model and tokens: llama.cpp's SPM defaults (BOS 1, EOS 2, UNK 0,
	// add BOS, dummy prefix); no scores and types means score 0, normal.
	tok, err := fromKV(t, base())
	if err != nil {
		t.Fatal(err)
	}
	if tok.BOS() != 1 || tok.EOS() != 2 || tok.unk != 0 || !tok.addBOS || tok.addEOS || !tok.addSpacePrefix {
		t.Errorf("defaults: bos %d eos %d unk %d add_bos %v add_eos %v prefix %v", tok.BOS(), tok.EOS(), tok.unk, tok.addBOS, tok.addEOS, tok.addSpacePrefix)
	}
	// All tokens normal: "<s>" is plain text; characters without a token and
	// without byte tokens become UNK.
	if got, want := tok.Encode("a<s>b", true), []int{1, 3, 0, 0, 0, 0}; !slices.Equal(got, want) {
		t.Errorf("Encode = %v, want %v", got, want)
	}

	// Explicit flags and ids; an out-of-range id keeps the default (llama.cpp).
	tok, err = fromKV(t, base(
		gguf.KeyValue{Key: "tokenizer.ggml.token_type", Value: gguf.Int32s([]int32{2, 3, 3, 1, 1, 1})},
		gguf.KeyValue{Key: "tokenizer.ggml.scores", Value: gguf.Int32s([]int32{0, 0, 0, -1, -2, -3})},
		gguf.KeyValue{Key: "tokenizer.ggml.bos_token_id", Value: gguf.Uint32(99)},
		gguf.KeyValue{Key: "tokenizer.ggml.eos_token_id", Value: gguf.Uint32(1)},
		gguf.KeyValue{Key: "tokenizer.ggml.eot_token_id", Value: gguf.Uint32(5)},
		gguf.KeyValue{Key: "tokenizer.ggml.add_bos_token", Value: gguf.Bool(false)},
		gguf.KeyValue{Key: "tokenizer.ggml.add_eos_token", Value: gguf.Bool(true)},
		gguf.KeyValue{Key: "tokenizer.ggml.add_space_prefix", Value: gguf.Bool(false)},
	))
	if err != nil {
		t.Fatal(err)
	}
	if tok.BOS() != 1 || tok.EOS() != 1 || !tok.IsEOG(5) || !tok.IsEOG(1) || !tok.IsEOG(2) || tok.IsEOG(3) {
		// ("</s>" ends generation by its text, as in llama.cpp)
		t.Errorf("ids: bos %d eos %d eog(5) %v", tok.BOS(), tok.EOS(), tok.IsEOG(5))
	}
	// no BOS added, no dummy prefix, EOS appended, "<s>" parsed as control
	if got, want := tok.Encode("a<s>a", true), []int{4, 1, 4, 1}; !slices.Equal(got, want) {
		t.Errorf("Encode = %v, want %v", got, want)
	}

	for name, kv := range map[string][]gguf.KeyValue{
		"no model":    {{Key: "tokenizer.ggml.tokens", Value: tokens}},
		"no tokens":   {{Key: "tokenizer.ggml.model", Value: gguf.String("llama")}},
		"tokens type": {{Key: "tokenizer.ggml.model", Value: gguf.String("llama")}, {Key: "tokenizer.ggml.tokens", Value: gguf.Int32s([]int32{1})}},
		"bos type":    base(gguf.KeyValue{Key: "tokenizer.ggml.bos_token_id", Value: gguf.String("1")}),
		"short types": base(gguf.KeyValue{Key: "tokenizer.ggml.token_type", Value: gguf.Int32s([]int32{1})}),
	} {
		if _, err := fromKV(t, kv); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := fromKV(t, []gguf.KeyValue{
		{Key: "tokenizer.ggml.model", Value: gguf.String("t5")}, {Key: "tokenizer.ggml.tokens", Value: tokens},
	}); !errors.Is(err, ErrUnsupportedModel) {
		t.Errorf("t5: err = %v", err)
	}
}

// VocabSize counts what FromGGUF builds, and refuses what it refuses.
func TestVocabSize(t *testing.T) {
	f := parseKV(t, gguf.KeyValue{Key: "tokenizer.ggml.model", Value: gguf.String("llama")},
		gguf.KeyValue{Key: "tokenizer.ggml.tokens", Value: gguf.Strings([]string{"<unk>", "<s>", "</s>", "a"})})
	tok, err := FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := VocabSize(f); err != nil || n != tok.VocabSize() || n != 4 {
		t.Errorf("VocabSize = %d, %v; FromGGUF's %d", n, err, tok.VocabSize())
	}
	if _, err := VocabSize(parseKV(t, gguf.KeyValue{Key: "tokenizer.ggml.model", Value: gguf.String("llama")})); !errors.Is(err, gguf.ErrNotFound) {
		t.Errorf("no tokens: %v, want ErrNotFound", err)
	}
	if _, err := VocabSize(parseKV(t, gguf.KeyValue{Key: "tokenizer.ggml.tokens", Value: gguf.Int32s([]int32{1, 2})})); !errors.Is(err, gguf.ErrWrongType) {
		t.Errorf("int32 tokens: %v, want ErrWrongType", err)
	}
}
