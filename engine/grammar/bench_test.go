package grammar

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/picolm/picolm-wasm/scripts/shareddata"
)

// readSPMVocab is a throwaway GGUF reader for benchmarks: it returns the pieces of a SentencePiece
// ("llama") vocabulary as the bytes each token emits (▁ as a space, <0xXX> byte tokens as their byte,
// control and unknown tokens empty) and the EOS id.
func readSPMVocab(path string) (pieces [][]byte, eos int, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, err
	}
	off := 0
	fail := errors.New("truncated or unsupported gguf")
	u32 := func() uint32 {
		if off+4 > len(b) {
			panic(fail)
		}
		off += 4
		return binary.LittleEndian.Uint32(b[off-4:])
	}
	u64 := func() uint64 {
		if off+8 > len(b) {
			panic(fail)
		}
		off += 8
		return binary.LittleEndian.Uint64(b[off-8:])
	}
	str := func() string {
		n := int(u64())
		if n < 0 || off+n > len(b) {
			panic(fail)
		}
		off += n
		return string(b[off-n : off])
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: %v", path, r)
		}
	}()
	if string(b[:4]) != "GGUF" {
		return nil, 0, fmt.Errorf("%s: not gguf", path)
	}
	off = 4
	if v := u32(); v != 3 && v != 2 {
		return nil, 0, fmt.Errorf("%s: gguf version %d", path, v)
	}
	u64() // tensors
	nkv := u64()
	size := map[uint32]int{0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
	var tokens []string
	var types []int32
	eos = -1
	var skip func(typ uint32) any
	skip = func(typ uint32) any {
		switch {
		case typ == 8:
			return str()
		case typ == 9:
			et, n := u32(), u64()
			var out []any
			for range n {
				out = append(out, skip(et))
			}
			return out
		case size[typ] > 0:
			off += size[typ]
			if off > len(b) {
				panic(fail)
			}
			if typ == 4 || typ == 5 {
				return int64(int32(binary.LittleEndian.Uint32(b[off-4:])))
			}
			return nil
		}
		panic(fmt.Errorf("type %d", typ))
	}
	for range nkv {
		key := str()
		v := skip(u32())
		switch key {
		case "tokenizer.ggml.tokens":
			for _, s := range v.([]any) {
				tokens = append(tokens, s.(string))
			}
		case "tokenizer.ggml.token_type":
			for _, x := range v.([]any) {
				types = append(types, int32(x.(int64)))
			}
		case "tokenizer.ggml.eos_token_id":
			eos = int(v.(int64))
		}
	}
	for i, tok := range tokens {
		typ := int32(1)
		if i < len(types) {
			typ = types[i]
		}
		var p []byte
		switch typ {
		case 1, 4:
			p = []byte(strings.ReplaceAll(tok, "▁", " "))
		case 6:
			var c byte
			if _, err := fmt.Sscanf(tok, "<0x%02X>", &c); err != nil {
				return nil, 0, fmt.Errorf("byte token %q", tok)
			}
			p = []byte{c}
		}
		pieces = append(pieces, p)
	}
	return pieces, eos, nil
}

// benchStates are the states masking typically sees, reached by feeding the given text.
var benchStates = []struct{ name, text string }{
	{"start", ``},
	{"object-first", `{`},
	{"in-key", `{"na`},
	{"colon", `{"name"`},
	{"value", `{"name":`},
	{"in-string", `{"name": "Tom the c`},
	{"number", `{"age": 12`},
	{"after-value", `{"name": "Tom"`},
	{"nested", `{"a": [{"b": [1, 2, {"c": `},
}

func benchMask(b *testing.B, pieces [][]byte, eos int) {
	g := NewJSON(pieces, eos)
	logits := make([]float32, len(pieces))
	for _, bs := range benchStates {
		st := g.Start()
		for _, c := range []byte(bs.text) {
			if !st.step(c) {
				b.Fatalf("%q rejected", bs.text)
			}
		}
		for _, budget := range []int{1000, 4} {
			b.Run(fmt.Sprintf("%s/budget=%d", bs.name, budget), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					g.Mask(&st, logits, budget)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(pieces)), "ns/token")
			})
		}
	}
}

// BenchmarkMask masks a synthetic 32k-piece vocabulary.
func BenchmarkMask(b *testing.B) {
	pieces, eos := synthVocab(32000, 4)
	benchMask(b, pieces, eos)
}

// BenchmarkMaskLlama masks the real 32k LLaMA SentencePiece vocabulary from the shared test data.
func BenchmarkMaskLlama(b *testing.B) {
	pieces, eos, err := readSPMVocab(shareddata.Path(b, "ggml-vocab-llama-spm.gguf"))
	if err != nil {
		b.Skip(err)
	}
	benchMask(b, pieces, eos)
}

func BenchmarkNewJSON(b *testing.B) {
	pieces, eos, err := readSPMVocab(shareddata.Path(b, "ggml-vocab-llama-spm.gguf"))
	if err != nil {
		b.Skip(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		NewJSON(pieces, eos)
	}
}
