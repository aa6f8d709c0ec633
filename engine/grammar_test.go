package engine

import (
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/picolm/picolm-wasm/engine/grammar"
	"github.com/picolm/picolm-wasm/engine/sample"
)

// TestGrammarGenerate: generations under a GBNF grammar (llama.cpp's json.gbnf, and a JSON Schema's
// grammar) at temperature 1 on two models, with budgets from tiny to generous, are all sentences of the
// grammar within the budget; a session reuses its matcher across generations; a grammar that cannot fit
// is refused before generating.
func TestGrammarGenerate(t *testing.T) {
	src, err := os.ReadFile("grammar/testdata/gbnf/json.gbnf")
	if err != nil {
		t.Fatal(err)
	}
	jsonG, err := grammar.ParseGBNF(string(src))
	if err != nil {
		t.Fatal(err)
	}
	schemaG, err := grammar.FromJSONSchema([]byte(`{"type": "object", "properties": {"n": {"type": "integer", "minimum": 1, "maximum": 9}, "s": {"type": "string", "maxLength": 5}}, "required": ["n", "s"], "additionalProperties": false}`))
	if err != nil {
		t.Fatal(err)
	}
	budgets := []int{12, 16, 40, 120}
	for _, name := range []string{"stories260K.gguf", "llama-2-tiny-random.gguf"} {
		m := loadModel(t, name)
		s := newSession(t, m, SessionOptions{Context: 512, Threads: 1})
		prompt := m.Tokenizer.Encode("Once upon a time", true)
		stops := map[StopReason]int{}
		for i := range 24 {
			g := jsonG
			if i%2 == 1 {
				g = schemaG
			}
			n := budgets[i%len(budgets)]
			out, count, st, err := generateAll(s, prompt, GenerateOptions{MaxTokens: n, Grammar: g,
				Sampling: sample.Params{Temperature: 1.0, TopP: 1.0, Seed: uint64(i + 1)}})
			if err != nil {
				t.Fatalf("%s run %d: %v", name, i, err)
			}
			stops[st.Stop]++
			if count > n || !g.Recognise(string(out)) {
				t.Errorf("%s run %d (n=%d, %d tokens, stop %s): %q is not a sentence of the grammar", name, i, n, count, st.Stop, out)
			}
			if g == schemaG && !json.Valid(out) {
				t.Errorf("%s run %d: invalid JSON %q", name, i, out)
			}
		}
		t.Logf("%s: stop reasons %v", name, stops)
		_, err := s.Generate(prompt, GenerateOptions{MaxTokens: 3, Grammar: schemaG}, func(int, []byte) bool { return true })
		if !errors.Is(err, ErrGrammarBudget) {
			t.Errorf("%s: a budget of 3 for the schema: %v", name, err)
		}
		_, err = s.Generate(prompt, GenerateOptions{MaxTokens: 30, Grammar: schemaG, JSON: true}, func(int, []byte) bool { return true })
		if err == nil {
			t.Errorf("%s: JSON and Grammar together accepted", name)
		}
	}
}
