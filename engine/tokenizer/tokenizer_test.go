package tokenizer

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/picolm/picolm-wasm/gguf"
	"github.com/picolm/picolm-wasm/scripts/shareddata"
)

var (
	loadMu sync.Mutex
	loaded = map[string]*Tokenizer{}
)

// load returns the tokenizer of a GGUF file in the shared test data.
func load(t testing.TB, name string) *Tokenizer {
	t.Helper()
	loadMu.Lock()
	defer loadMu.Unlock()
	if tok, ok := loaded[name]; ok {
		return tok
	}
	f, err := gguf.Open(shareddata.Path(t, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tok, err := FromGGUF(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	loaded[name] = tok
	return tok
}

// vocabCase is one of llama.cpp's test-tokenizer-0 vectors.
type vocabCase struct {
	in  string
	ids []int
}

// readVocabCases parses NAME.inp / NAME.out the way test-tokenizer-0.cpp
// does: inputs separated by "\n__ggml_vocab_test__\n", one line of
// space-separated ids per input.
func readVocabCases(t *testing.T, name string) []vocabCase {
	t.Helper()
	inp, err := os.ReadFile(shareddata.Path(t, name+".inp"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.ReadFile(shareddata.Path(t, name+".out"))
	if err != nil {
		t.Fatal(err)
	}
	const sep = "\n__ggml_vocab_test__\n"
	var ins []string
	for s := string(inp); len(s) > 0; {
		i := strings.Index(s, sep)
		if i < 0 {
			ins = append(ins, s)
			break
		}
		ins = append(ins, s[:i])
		s = s[i+len(sep):]
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(ins) != len(lines) {
		t.Fatalf("%s: %d inputs but %d outputs", name, len(ins), len(lines))
	}
	cases := make([]vocabCase, len(ins))
	for i, line := range lines {
		cases[i].in = ins[i]
		for _, f := range strings.Fields(line) {
			id, err := strconv.Atoi(f)
			if err != nil {
				t.Fatalf("%s.out line %d: %v", name, i+1, err)
			}
			cases[i].ids = append(cases[i].ids, id)
		}
	}
	return cases
}

// TestVocabVectors: llama.cpp's tokenizer vectors for SentencePiece (llama,
// phi-3) and byte-level BPE (gpt-2) vocabularies, tokenized as
// test-tokenizer-0 does (add_special=false, parse_special=false).
func TestVocabVectors(t *testing.T) {
	for _, name := range []string{"ggml-vocab-llama-spm.gguf", "ggml-vocab-phi-3.gguf", "ggml-vocab-gpt-2.gguf"} {
		t.Run(name, func(t *testing.T) {
			tok := load(t, name)
			cases := readVocabCases(t, name)
			if len(cases) < 40 {
				t.Fatalf("only %d cases", len(cases))
			}
			for i, c := range cases {
				got := tok.encode(nil, c.in, false, false)
				if !slices.Equal(got, c.ids) {
					t.Errorf("case %d %q:\n got %v\nwant %v", i, c.in, got, c.ids)
				}
			}
		})
	}
}

// TestReferencePrompts: Encode(prompt, true) equals llama.cpp's prompt ids,
// and decoding llama.cpp's generated ids gives the text it printed.
func TestReferencePrompts(t *testing.T) {
	for _, name := range []string{"stories260K-greedy.jsonl", "llama-2-tiny-random-greedy.jsonl"} {
		t.Run(name, func(t *testing.T) {
			for _, r := range shareddata.References(t, "reference/"+name) {
				tok := load(t, r.Model)
				if got := tok.Encode(r.Prompt, true); !slices.Equal(got, r.PromptIDs) {
					t.Errorf("Encode(%q):\n got %v\nwant %v", r.Prompt, got, r.PromptIDs)
				}
				if r.Continuation == "" {
					continue
				}
				// llama.cpp ends its output with a newline after the last token.
				if got := tok.Decode(r.IDs) + "\n"; got != r.Continuation {
					t.Errorf("Decode after %q:\n got %q\nwant %q", r.Prompt, got, r.Continuation)
				}
			}
		})
	}
}
