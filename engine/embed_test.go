package engine

import (
	"bytes"
	"errors"
	"math"
	"os"
	"testing"

	"github.com/picolm/picolm-wasm/gguf"
	"github.com/picolm/picolm-wasm/scripts/shareddata"
)

// finalStates runs tokens one at a time with Forward and returns the final
// norm's output at every position: what Embed pools, computed the long way.
func finalStates(t *testing.T, m *Model, tokens []int) [][]float32 {
	s := newSession(t, m, SessionOptions{Context: 256, Threads: 1})
	out := make([][]float32, len(tokens))
	for p, tok := range tokens {
		if _, err := s.Forward(tok); err != nil {
			t.Fatal(err)
		}
		out[p] = make([]float32, m.Config.Dim)
		rmsnorm(out[p], s.x[0], m.outNorm, m.Config.NormEps)
	}
	return out
}

func unit(v []float32) []float32 {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	inv := float32(1 / math.Sqrt(ss))
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = x * inv
	}
	return out
}

// withPooling is the stories260K file with <arch>.pooling_type set to p.
func withPooling(t *testing.T, p uint32) *Model {
	b, err := os.ReadFile(shareddata.Path(t, "stories260K.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	kv := append(append([]gguf.KeyValue(nil), f.KV...), gguf.KeyValue{Key: "llama.pooling_type", Value: gguf.Uint32(p)})
	var w bytes.Buffer
	if err := gguf.Write(&w, kv, f.Tensors, 0); err != nil {
		t.Fatal(err)
	}
	g, err := gguf.Parse(w.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	m, err := Load(g)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestEmbedPooling(t *testing.T) {
	m := loadModel(t, "stories260K.gguf")
	// Over 32 tokens: three batches of Prefill's 16, the last one partial.
	tokens := m.Tokenizer.Encode("Once upon a time there was a little girl named Lily who loved to play in the park with her dog. One day she saw a big red ball.", true)
	if len(tokens) <= 2*maxBatch {
		t.Fatalf("%d tokens: want more than two batches", len(tokens))
	}
	states := finalStates(t, m, tokens)
	dim := m.Config.Dim

	mean := make([]float32, dim)
	for _, st := range states {
		for i, v := range st {
			mean[i] += v
		}
	}
	for i := range mean {
		mean[i] *= 1 / float32(len(tokens))
	}
	for _, c := range []struct {
		name string
		m    *Model
		want []float32
	}{
		{"no pooling_type: mean", m, unit(mean)},
		{"pooling_type 1: mean", withPooling(t, 1), unit(mean)},
		{"pooling_type 2: cls", withPooling(t, 2), unit(states[0])},
		{"pooling_type 3: last", withPooling(t, 3), unit(states[len(states)-1])},
	} {
		s := newSession(t, c.m, SessionOptions{Context: 256, Threads: 2})
		// Something else in the cache first: Embed starts at position 0.
		if _, err := s.Prefill(tokens[:5]); err != nil {
			t.Fatal(err)
		}
		got := make([]float32, dim)
		if err := s.Embed(tokens, got); err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if math.Abs(float64(got[i]-c.want[i])) > 1e-6 {
				t.Fatalf("%s: [%d] = %v, want %v", c.name, i, got[i], c.want[i])
			}
		}
		if s.Pos() != len(tokens) {
			t.Errorf("%s: the cache holds %d positions after Embed, want %d", c.name, s.Pos(), len(tokens))
		}
		// The cache is valid: greedy generation after it equals a fresh session's.
		want, _ := greedy(t, newSession(t, c.m, SessionOptions{Context: 256, Threads: 1}), tokens, 4)
		gotIDs, _ := greedy(t, s, tokens, 4)
		if !equalInts(gotIDs, want) {
			t.Errorf("%s: generation after Embed %v, want %v", c.name, gotIDs, want)
		}
		// Nothing is allocated per token: the long input costs what 3 tokens do.
		long := testing.AllocsPerRun(3, func() {
			if err := s.Embed(tokens, got); err != nil {
				t.Fatal(err)
			}
		})
		short := testing.AllocsPerRun(3, func() {
			if err := s.Embed(tokens[:3], got); err != nil {
				t.Fatal(err)
			}
		})
		if long != short || long > 8 {
			t.Errorf("%s: %.1f allocations per Embed of %d tokens, %.1f of 3", c.name, long, len(tokens), short)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestEmbedRefusals(t *testing.T) {
	for _, p := range []uint32{0, 4, 99} {
		m := withPooling(t, p)
		_, err := m.Pooling()
		if !errors.Is(err, ErrNoEmbedding) {
			t.Errorf("pooling_type %d: %v, want ErrNoEmbedding", p, err)
		}
		s := newSession(t, m, SessionOptions{Context: 64, Threads: 1})
		if err := s.Embed([]int{1, 2}, make([]float32, m.Config.Dim)); !errors.Is(err, ErrNoEmbedding) {
			t.Errorf("pooling_type %d: Embed: %v", p, err)
		}
	}
	m := loadModel(t, "stories260K.gguf")
	s := newSession(t, m, SessionOptions{Context: 8, Threads: 1})
	out := make([]float32, m.Config.Dim)
	for _, c := range []struct {
		name   string
		tokens []int
		out    []float32
	}{
		{"empty", nil, out},
		{"longer than the context", make([]int, 9), out},
		{"token out of range", []int{1, m.Config.VocabSize}, out},
		{"negative token", []int{-1}, out},
		{"short out", []int{1}, out[:3]},
	} {
		if err := s.Embed(c.tokens, c.out); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}
