package engine

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/picolm/picolm-wasm/engine/sample"
)

// TestJSONTinyBudgets: --json -n 1 printed "[" or "{" (30 of 30 seeds). With
// 1 to 4 tokens, on both test models, greedy and sampled, the output is one
// complete valid JSON value within the budget: on stories260K (no "{}"
// token) a digit at 1 token and an object or array from 2 on; on
// llama-2-tiny-random's 32k vocabulary "{}" or "[]" from 1.
func TestJSONTinyBudgets(t *testing.T) {
	for _, name := range []string{"stories260K.gguf", "llama-2-tiny-random.gguf"} {
		m := loadModel(t, name)
		s := newSession(t, m, SessionOptions{Context: 128, Threads: 1})
		prompt := m.Tokenizer.Encode("Once upon a time", true)
		seen := map[string]bool{}
		for budget := 1; budget <= 4; budget++ {
			for seed := range 30 {
				p := sample.Params{Temperature: 1.0, TopP: 1.0, Seed: uint64(seed + 1)}
				if seed == 0 {
					p = sample.Params{} // greedy
				}
				out, count, st, err := generateAll(s, prompt, GenerateOptions{MaxTokens: budget, JSON: true, Sampling: p})
				if err != nil {
					t.Fatalf("%s -n %d seed %d: %v", name, budget, seed, err)
				}
				if !json.Valid(out) || count > budget {
					t.Errorf("%s -n %d seed %d: %q in %d tokens (stop %s)", name, budget, seed, out, count, st.Stop)
				}
				seen[string(out)] = true
			}
		}
		t.Logf("%s: %d distinct outputs", name, len(seen))
	}
}

// TestJSONNoRoom: when no complete value fits (the prompt fills the
// context), Generate fails before generating anything instead of printing
// half a value.
func TestJSONNoRoom(t *testing.T) {
	m := loadModel(t, "stories260K.gguf")
	s := newSession(t, m, SessionOptions{Context: 8, Threads: 1})
	prompt := m.Tokenizer.Encode("Once upon a time there was a little dog", true)[:8]
	emitted := 0
	_, err := s.Generate(prompt, GenerateOptions{MaxTokens: 4, JSON: true}, func(int, []byte) bool { emitted++; return true })
	if !errors.Is(err, ErrJSONBudget) || emitted != 0 {
		t.Fatalf("err %v, %d tokens emitted; want ErrJSONBudget and none", err, emitted)
	}
	t.Log(err)
	// Without JSON the same run just stops at the full context.
	if st, err := s.Generate(prompt, GenerateOptions{MaxTokens: 4}, func(int, []byte) bool { return true }); err != nil || st.Stop != StopContext {
		t.Fatalf("without JSON: %v, stop %s", err, st.Stop)
	}
}

// generateAll runs Generate and returns the text and the number of tokens
// it emitted.
func generateAll(s *Session, prompt []int, o GenerateOptions) (out []byte, count int, st Stats, err error) {
	st, err = s.Generate(prompt, o, func(id int, b []byte) bool {
		if id >= 0 {
			count++
		}
		out = append(out, b...)
		return true
	})
	return out, count, st, err
}
