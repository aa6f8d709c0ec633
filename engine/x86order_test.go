package engine

import (
	"math"
	"strings"
	"testing"

	"github.com/picolm/picolm-wasm/gguf"
	"github.com/picolm/picolm-wasm/scripts/shareddata"
)

// TestX86OrderMarginsMatchLlamaCpp: on the synth models whose matrices are
// in a format whose dot follows ggml's x86 float order (quant's
// x86order.go: IQ4_XS among the shared models), the dots are llama.cpp's
// bit for bit, so the top-2 margin equals llama.cpp's at every one of the
// 32 steps (teacher-forced on its tokens), up to the 5 significant digits
// the references print, and the top token is its token. With the generic
// C order (one float term per sub-block) the IQ4_XS margins left
// llama.cpp's by 1e-4 to 0.012 from step 15 or 17 on.
func TestX86OrderMarginsMatchLlamaCpp(t *testing.T) {
	const tol = 2e-4
	checked := 0
	for _, c := range shareddata.References(t, "synth/greedy.jsonl") {
		if !strings.Contains(c.Model, "IQ4_XS") {
			continue
		}
		f, err := gguf.Open(c.File)
		if err != nil {
			t.Fatal(err)
		}
		m, err := Load(f)
		if err != nil {
			f.Close()
			t.Fatal(err)
		}
		s := newSession(t, m, SessionOptions{Threads: 1})
		var logits []float32
		for _, id := range c.PromptIDs {
			if logits, err = s.Forward(id); err != nil {
				t.Fatal(err)
			}
		}
		for i, want := range c.IDs {
			top, margin := top2(logits)
			if top != want || math.Abs(float64(margin)-c.Margins[i]) > tol {
				t.Errorf("%s %q step %d: token %d margin %.5f, llama.cpp token %d margin %.5g", c.Model, c.Prompt, i, top, margin, want, c.Margins[i])
			}
			if logits, err = s.Forward(want); err != nil {
				t.Fatal(err)
			}
		}
		checked++
		f.Close()
	}
	if checked == 0 {
		t.Error("no IQ4_XS reference in synth/greedy.jsonl")
	}
}
