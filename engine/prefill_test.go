package engine

import (
	"math"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/picolm/picolm-wasm/gguf/tools/synth"
	"github.com/picolm/picolm-wasm/scripts/shareddata"
)

// testThreads is the pool sizes the heavier equality tests run: 1 and 2
// natively; only 1 under wasm (GOOS=js and wasip1 have one OS thread, so the
// 2-thread partition there is the same Go code the native run checks, and
// these tests are the slowest part of CI under Node and wazero).
func testThreads() []int {
	if runtime.GOARCH == "wasm" {
		return []int{1}
	}
	return []int{1, 2}
}

// TestPrefillMatchesForward: Prefill must compute what Forward does for
// each token, bit for bit: the logits after the prompt, and (through the KV
// cache it leaves) the logits of the tokens after it. Checked on every
// quantized type the TinyLlama-shaped benchmarks use, the f32 and q8_0
// stories models, and the synthetic models of the other architectures
// (biases, NeoX rope, fused QKV, tied output), with prompts that end inside,
// at and across batch boundaries and split over several calls, on testThreads' pool
// sizes.
func TestPrefillMatchesForward(t *testing.T) {
	models := map[string]*Model{
		"stories260K-f32":  loadModel(t, "stories260K.gguf"),
		"stories260K-q8_0": loadModel(t, "tinyllamas-stories-260k-q8_0.gguf"),
	}
	dir := t.TempDir()
	for _, typ := range []string{"Q4_K_M", "Q4_0", "Q8_0"} {
		sp := synth.Spec{Name: "small-" + typ, Shape: synth.Small, Seed: 3, Type: typ, Vocab: "ggml-vocab-llama-spm.gguf"}
		sp.Shape.Layers = 1
		models[sp.Name] = writeSpecModel(t, dir, sp)
	}
	for _, r := range readSynthRefs(t, "arch-refs.jsonl", 10) {
		if _, ok := models[r.Model]; !ok {
			models[r.Model] = writeArchModel(t, dir, r)
		}
	}
	for name, m := range models {
		vocab := m.Config.VocabSize
		prompt := make([]int, 2*maxBatch+3)
		for i := range prompt {
			prompt[i] = (i*7919 + 11) % vocab
		}
		next := []int{(13 * 31) % vocab, 5 % vocab}
		for _, split := range [][]int{{2*maxBatch + 3}, {1, maxBatch, maxBatch + 2}, {maxBatch - 1, 4}} {
			for _, threads := range testThreads() {
				ref := newSession(t, m, SessionOptions{Context: 64, Threads: threads})
				got := newSession(t, m, SessionOptions{Context: 64, Threads: threads})
				var want, have []float32
				var err error
				at := 0
				for _, n := range split {
					for _, tok := range prompt[at : at+n] {
						if want, err = ref.Forward(tok); err != nil {
							t.Fatal(err)
						}
					}
					if have, err = got.Prefill(prompt[at : at+n]); err != nil {
						t.Fatal(err)
					}
					at += n
					sameLogits(t, name, at, want, have)
				}
				for _, tok := range next {
					want, _ = ref.Forward(tok)
					have, _ = got.Forward(tok)
					at++
					sameLogits(t, name, at, want, have)
				}
			}
		}
	}
}

func sameLogits(t *testing.T, model string, pos int, want, have []float32) {
	t.Helper()
	for i := range want {
		if math.Float32bits(want[i]) != math.Float32bits(have[i]) {
			t.Fatalf("%s after %d tokens: logit %d = %g, Forward's %g", model, pos, i, have[i], want[i])
		}
	}
}

func writeSpecModel(t *testing.T, dir string, sp synth.Spec) *Model {
	t.Helper()
	path := filepath.Join(dir, sp.Name+".gguf")
	if err := sp.Write(path, shareddata.Dir(t)); err != nil {
		t.Fatalf("%s: %v", sp.Name, err)
	}
	return loadPath(t, path)
}

func TestPrefillErrors(t *testing.T) {
	m := loadModel(t, "stories260K.gguf")
	s := newSession(t, m, SessionOptions{Context: 8, Threads: 1})
	if _, err := s.Prefill(nil); err != ErrEmptyPrompt {
		t.Errorf("empty: %v", err)
	}
	if _, err := s.Prefill(make([]int, 9)); err == nil {
		t.Error("9 tokens in a context of 8: no error")
	}
	if _, err := s.Prefill([]int{1, m.Config.VocabSize}); err == nil || s.Pos() != 0 {
		t.Errorf("token outside the vocabulary: %v, position %d", err, s.Pos())
	}
	if _, err := s.Prefill([]int{1, 2, 3}); err != nil || s.Pos() != 3 {
		t.Fatalf("%v, position %d", err, s.Pos())
	}
	if _, err := s.Prefill(make([]int, 6)); err == nil || s.Pos() != 3 {
		t.Errorf("6 more tokens at position 3 of 8: %v, position %d", err, s.Pos())
	}
}
