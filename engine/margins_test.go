package engine

import (
	"math"
	"testing"

	"github.com/picolm/picolm-wasm/gguf"
	"github.com/picolm/picolm-wasm/scripts/shareddata"
)

// TestQuantizedMarginsMatchLlamaCpp: on the quantized synth models, the gap
// between the two largest logits at the first steps equals llama.cpp's
// (teacher-forced on llama.cpp's tokens). This fails by up to 0.2 if the
// attention weights are not rounded to fp16 as ggml's mul_mat does, or if the
// Q8_0 activations are quantized with the reference rules instead of the x86
// ones. Only the first steps are compared: later on, a last-bit difference
// in some matrix-vector sum (the kernels' float summation order is not
// ggml's SIMD order) eventually crosses a rounding boundary of an 8-bit
// activation, and from then on the logits differ by quantization noise
// (measured: from step 4 to 17, depending on the model and prompt).
func TestQuantizedMarginsMatchLlamaCpp(t *testing.T) {
	const steps, tol = 3, 2e-3
	checked := 0
	for _, c := range shareddata.References(t, "synth/greedy.jsonl") {
		f, err := gguf.Open(c.File)
		if err != nil {
			t.Fatal(err)
		}
		m, err := Load(f)
		if err != nil {
			f.Close()
			t.Logf("%s: skipped: %v", c.Model, err)
			continue
		}
		s := newSession(t, m, SessionOptions{Threads: 1})
		var logits []float32
		for _, id := range c.PromptIDs {
			if logits, err = s.Forward(id); err != nil {
				t.Fatal(err)
			}
		}
		for i := 0; i < steps; i++ {
			top, margin := top2(logits)
			if top != c.IDs[i] || math.Abs(float64(margin)-c.Margins[i]) > tol {
				t.Errorf("%s %q step %d: token %d margin %.5f, llama.cpp token %d margin %.5f", c.Model, c.Prompt, i, top, margin, c.IDs[i], c.Margins[i])
			}
			if logits, err = s.Forward(c.IDs[i]); err != nil {
				t.Fatal(err)
			}
		}
		checked++
		f.Close()
	}
	if checked < 10 {
		t.Errorf("only %d cases checked", checked)
	}
}

// top2 returns the index of the largest logit and its lead over the second.
func top2(l []float32) (int, float32) {
	best, second := 0, float32(math.Inf(-1))
	for i, v := range l[1:] {
		if v > l[best] {
			second, best = l[best], i+1
		} else if v > second {
			second = v
		}
	}
	return best, l[best] - second
}
