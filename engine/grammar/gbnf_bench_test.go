package grammar

import (
	"fmt"
	"testing"

	"github.com/picolm/picolm-wasm/scripts/shareddata"
)

// BenchmarkMaskJSONModes masks the LLaMA 32k vocabulary from the same JSON states with the automaton
// (pda), with jsonGBNF (the automaton's language as GBNF) and with llama.cpp's json.gbnf, to decide which
// drives JSON mode. Run as: go test ./engine/grammar -run '^$' -bench MaskJSONModes -benchmem
func BenchmarkMaskJSONModes(b *testing.B) {
	pieces, eos, err := readSPMVocab(shareddata.Path(b, "ggml-vocab-llama-spm.gguf"))
	if err != nil {
		b.Skip(err)
	}
	v := NewVocab(pieces, eos)
	pda := v.JSON()
	grammars := map[string]*GBNF{"gbnf": mustGBNF(b, jsonGBNF), "llama-json.gbnf": mustGBNF(b, llamaGrammars(b)["json.gbnf"])}
	logits := make([]float32, len(pieces))
	for _, bs := range benchStates {
		if bs.text == "" {
			continue // the automaton's start prefers containers; the grammars' roots differ
		}
		st := pda.Start()
		for _, c := range []byte(bs.text) {
			if !st.step(c) {
				b.Fatalf("%q rejected", bs.text)
			}
		}
		b.Run(bs.name+"/pda", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				pda.Mask(&st, logits, 1000)
			}
		})
		for _, name := range []string{"gbnf", "llama-json.gbnf"} {
			m := NewMatcher(grammars[name], v)
			if !feedMatcher(m, bs.text) {
				b.Fatalf("%s refuses %q", name, bs.text)
			}
			b.Run(fmt.Sprintf("%s/%s", bs.name, name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					m.Mask(logits, 1000)
				}
			})
		}
	}
}

// BenchmarkMaskGBNF masks the LLaMA 32k vocabulary after a typical prefix of each of llama.cpp's
// grammars.
func BenchmarkMaskGBNF(b *testing.B) {
	pieces, eos, err := readSPMVocab(shareddata.Path(b, "ggml-vocab-llama-spm.gguf"))
	if err != nil {
		b.Skip(err)
	}
	v := NewVocab(pieces, eos)
	prefixes := map[string]string{"arithmetic.gbnf": "(x +12", "c.gbnf": "int main(){while(i<3", "chess.gbnf": "1. e4 e5\n2. N",
		"english.gbnf": "Hello, wor", "japanese.gbnf": "こんにち", "json.gbnf": `{"name": "Tom", "age": 1`, "json_arr.gbnf": "[\n{\"a\": [1, ", "list.gbnf": "- milk\n- eg"}
	logits := make([]float32, len(pieces))
	for name, src := range llamaGrammars(b) {
		m := NewMatcher(mustGBNF(b, src), v)
		if !feedMatcher(m, prefixes[name]) {
			b.Fatalf("%s refuses %q", name, prefixes[name])
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				m.Mask(logits, 1000)
			}
		})
	}
}
