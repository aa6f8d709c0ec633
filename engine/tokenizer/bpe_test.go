package tokenizer

import "testing"

// TestBPEVocabVectors: llama.cpp's test-tokenizer-0 vectors for byte-level
// BPE vocabularies (add_special=false, parse_special=false).
func TestBPEVocabVectors(t *testing.T) {
	for _, name := range []string{"ggml-vocab-gpt-2.gguf"} {
		t.Run(name, func(t *testing.T) {
			tok := load(t, name)
			cases := readVocabCases(t, name)
			if len(cases) < 40 {
				t.Fatalf("only %d cases", len(cases))
			}
			for i, c := range cases {
				got := tok.encode(nil, c.in, false, false)
				if !equalIDs(got, c.ids) {
					t.Errorf("case %d %q:\n got %v\nwant %v", i, c.in, got, c.ids)
				}
			}
		})
	}
}
