package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/picolm/picolm-wasm/gguf"
	"github.com/picolm/picolm-wasm/gguf/tools/quantize"
	"github.com/picolm/picolm-wasm/gguf/tools/synth"
	"github.com/picolm/picolm-wasm/quant"
	"github.com/picolm/picolm-wasm/scripts/shareddata"
)

// archRef is one line of testdata/arch-refs.jsonl or format-refs.jsonl:
// llama.cpp's greedy continuation of a prompt on a synthetic model, with the
// spec the model is generated from (see scripts/llamaref/README.md).
type archRef struct {
	shareddata.Reference
	Spec   synth.Spec `json:"spec"`
	SHA256 string     `json:"sha256"`
	CPU    string     `json:"cpu"` // the CPU llama.cpp ran on; "" where not recorded
}

// TestArchitecturesMatchLlamaCpp regenerates every synthetic model of
// testdata/arch-refs.jsonl (Llama 3 rope_freqs, Qwen2 biases and NeoX rope,
// Phi-3 fused QKV and gate/up, SmolLM tied output), checks it is the file
// llama.cpp ran, and compares the prompt's tokens and the greedy continuation
// with llama.cpp's, token for token. A divergence is accepted only at a step
// whose llama.cpp top-1/top-2 margin was below 0.01.
func TestArchitecturesMatchLlamaCpp(t *testing.T) {
	refs := readSynthRefs(t, "arch-refs.jsonl", 10)
	dir := t.TempDir()
	models := map[string]*Model{}
	matched := map[string][2]int{}
	var order []string
	for _, r := range refs {
		m, ok := models[r.Model]
		if !ok {
			m = writeArchModel(t, dir, r)
			models[r.Model] = m
			order = append(order, r.Model)
		}
		step, got := firstDivergence(t, m, r)
		if step >= 0 {
			if r.Margins[step] < 0.01 {
				t.Logf("%s %q: diverged at step %d where llama.cpp's margin is %.4g (accepted)", r.Model, r.Prompt, step, r.Margins[step])
			} else {
				t.Errorf("%s %q: step %d: token %d, llama.cpp %d (margin %.4g)", r.Model, r.Prompt, step, got, r.IDs[step], r.Margins[step])
			}
		}
		n := matched[r.Model]
		n[1]++
		if step < 0 {
			n[0]++
		}
		matched[r.Model] = n
	}
	for _, name := range order {
		t.Logf("%s (%s): %d of %d prompts match llama.cpp for all tokens", name, models[name].Config.Arch, matched[name][0], matched[name][1])
	}
}

// firstDivergence checks m's tokens of r's prompt against llama.cpp's, runs
// the prompt and then llama.cpp's greedy tokens through m (one session, one
// thread), and returns the first step where m's greedy choice differs from
// llama.cpp's and m's token there; -1 if every step agrees.
func firstDivergence(t *testing.T, m *Model, r archRef) (step, got int) {
	t.Helper()
	if got := m.Tokenizer.Encode(r.Prompt, true); !slices.Equal(got, r.PromptIDs) {
		t.Errorf("%s %q: prompt tokens %v, llama.cpp %v", r.Model, r.Prompt, got, r.PromptIDs)
	}
	s := newSession(t, m, SessionOptions{Threads: 1})
	var logits []float32
	var err error
	for _, id := range r.PromptIDs {
		if logits, err = s.Forward(id); err != nil {
			t.Fatal(err)
		}
	}
	for i, want := range r.IDs {
		if got, _ := top2(logits); got != want {
			return i, got
		}
		if i+1 < len(r.IDs) {
			if logits, err = s.Forward(want); err != nil {
				t.Fatal(err)
			}
		}
	}
	return -1, 0
}

// readSynthRefs reads testdata/name, which must hold at least min cases,
// each with as many margins as ids.
func readSynthRefs(t *testing.T, name string, min int) []archRef {
	t.Helper()
	refs := shareddata.ReadJSONL[archRef](t, filepath.Join("testdata", name))
	for _, r := range refs {
		if len(r.IDs) == 0 || len(r.Margins) != len(r.IDs) {
			t.Fatalf("%s: %s %q: %d ids, %d margins", name, r.Model, r.Prompt, len(r.IDs), len(r.Margins))
		}
	}
	if len(refs) < min {
		t.Fatalf("%s: only %d reference cases", name, len(refs))
	}
	return refs
}

// writeArchModel generates r's model, checks its bytes are those llama.cpp
// ran, and loads it.
func writeArchModel(t *testing.T, dir string, r archRef) *Model {
	t.Helper()
	path := filepath.Join(dir, r.Model+".gguf")
	if err := r.Spec.Write(path, shareddata.Dir(t)); err != nil {
		t.Fatalf("%s: %v", r.Model, err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != r.SHA256 {
		t.Fatalf("%s: the generator now writes other bytes (sha256 %x, llama.cpp ran %s): regenerate the references (scripts/llamaref/README.md)", r.Model, sum, r.SHA256)
	}
	return loadPath(t, path)
}

// TestArchRefused: what the engine cannot run is refused with an error that
// names it, never run wrong.
func TestArchRefused(t *testing.T) {
	v, err := gguf.Open(shareddata.Path(t, "ggml-vocab-llama-spm.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	shape := synth.Shape{Embd: 32, Layers: 1, Heads: 2, KVHeads: 1, FF: 64, Context: 64}
	ft, err := quantize.ParseFileType("F32")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		arch   synth.Arch
		edit   func(kv []gguf.KeyValue, p *quantize.Plan) []gguf.KeyValue
		target error
		text   string
	}{
		{"unknown architecture", synth.Arch{}, func(kv []gguf.KeyValue, p *quantize.Plan) []gguf.KeyValue {
			return setKV(kv, "general.architecture", gguf.String("gpt2"))
		}, ErrArch, `"gpt2"`},
		{"mixture of experts", synth.Arch{}, func(kv []gguf.KeyValue, p *quantize.Plan) []gguf.KeyValue {
			return setKV(kv, "llama.expert_count", gguf.Uint32(8))
		}, ErrArch, "mixture-of-experts"},
		{"yarn", synth.Arch{Name: "qwen2", QKVBias: true}, func(kv []gguf.KeyValue, p *quantize.Plan) []gguf.KeyValue {
			return setKV(kv, "qwen2.rope.scaling.type", gguf.String("yarn"))
		}, ErrHyperparam, `"yarn"`},
		{"qwen2 without biases", synth.Arch{Name: "qwen2"}, nil, ErrMissing, "blk.0.attn_q.bias"},
		{"an FFN bias", synth.Arch{}, func(kv []gguf.KeyValue, p *quantize.Plan) []gguf.KeyValue {
			p.Tensors = append(p.Tensors, quantize.Tensor{Name: "blk.0.ffn_up.bias", Dims: []uint64{64}, Type: quant.F32,
				Rows: func(dst []float32, _ int) error { clear(dst); return nil }})
			p.Types = append(p.Types, quant.F32)
			return kv
		}, ErrTensor, "blk.0.ffn_up.bias"},
		{"phi3 LongRoPE", synth.Arch{Name: "phi3", FusedQKV: true, FusedFFN: true}, func(kv []gguf.KeyValue, p *quantize.Plan) []gguf.KeyValue {
			p.Tensors = append(p.Tensors, quantize.Tensor{Name: "rope_factors_long.weight", Dims: []uint64{8}, Type: quant.F32,
				Rows: func(dst []float32, _ int) error { clear(dst); return nil }})
			p.Types = append(p.Types, quant.F32)
			return kv
		}, ErrTensor, "rope_factors_long.weight"},
	} {
		m := synth.ArchModel{Model: synth.Model{Shape: shape, Seed: 1, Vocab: v}, Arch: c.arch}
		p, kv, err := m.Plan(ft, quantize.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if c.edit != nil {
			kv = c.edit(kv, p)
		}
		path := filepath.Join(t.TempDir(), "m.gguf")
		if _, err := quantize.WriteFile(path, kv, p, quantize.Options{}); err != nil {
			t.Fatal(err)
		}
		f, err := gguf.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Load(f)
		f.Close()
		if !errors.Is(err, c.target) || !strings.Contains(fmt.Sprint(err), c.text) {
			t.Errorf("%s: Load: %v, want %v naming %s", c.name, err, c.target, c.text)
		}
	}
}

// setKV sets key to v, appending it if it is not there.
func setKV(kv []gguf.KeyValue, key string, v gguf.Value) []gguf.KeyValue {
	for i := range kv {
		if kv[i].Key == key {
			kv[i].Value = v
			return kv
		}
	}
	return append(kv, gguf.KeyValue{Key: key, Value: v})
}

// TestRopeTablesScaling: a frequency factor f (rope_freqs) and a linear
// scale 1/f both turn position p·f's angles into position p's.
func TestRopeTablesScaling(t *testing.T) {
	const ctx, dim = 16, 8
	cos, sin := ropeTables(ctx, dim, 10000, 1, nil)
	lcos, lsin := ropeTables(ctx, dim, 10000, 0.5, nil)
	fcos, fsin := ropeTables(ctx, dim, 10000, 1, []float32{1, 2, 4, 2})
	for p := 0; p < ctx/4; p++ {
		for i := 0; i < dim/2; i++ {
			if lcos[2*p*dim/2+i] != cos[p*dim/2+i] || lsin[2*p*dim/2+i] != sin[p*dim/2+i] {
				t.Errorf("linear 0.5: position %d pair %d differs from position %d", 2*p, i, p)
			}
		}
		f := []int{1, 2, 4, 2}
		for i := 0; i < dim/2; i++ {
			q := p * f[i]
			if fcos[q*dim/2+i] != cos[p*dim/2+i] || fsin[q*dim/2+i] != sin[p*dim/2+i] {
				t.Errorf("factor %d: position %d pair %d differs from position %d", f[i], q, i, p)
			}
		}
	}
}
