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

// archRef is one line of testdata/arch-refs.jsonl: llama.cpp's greedy
// continuation of a prompt on a synthetic model of some architecture, with the
// spec the model is generated from (see scripts/llamaref/README.md).
type archRef struct {
	shareddata.Reference
	Spec   synth.Spec `json:"spec"`
	SHA256 string     `json:"sha256"`
}

// TestArchitecturesMatchLlamaCpp regenerates every synthetic model of
// testdata/arch-refs.jsonl (Llama 3 rope_freqs, Qwen2 biases and NeoX rope,
// Phi-3 fused QKV and gate/up, SmolLM tied output), checks it is the file
// llama.cpp ran, and compares the prompt's tokens and the greedy continuation
// with llama.cpp's, token for token. A divergence is accepted only at a step
// whose llama.cpp top-1/top-2 margin was below 0.01.
func TestArchitecturesMatchLlamaCpp(t *testing.T) {
	refs := readArchRefs(t)
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
		full := true
		for i, want := range r.IDs {
			got, _ := top2(logits)
			if got != want {
				full = false
				if r.Margins[i] < 0.01 {
					t.Logf("%s %q: diverged at step %d where llama.cpp's margin is %.4g (accepted)", r.Model, r.Prompt, i, r.Margins[i])
				} else {
					t.Errorf("%s %q: step %d: token %d, llama.cpp %d (margin %.4g)", r.Model, r.Prompt, i, got, want, r.Margins[i])
				}
				break
			}
			if logits, err = s.Forward(want); err != nil {
				t.Fatal(err)
			}
		}
		n := matched[r.Model]
		n[1]++
		if full {
			n[0]++
		}
		matched[r.Model] = n
	}
	for _, name := range order {
		t.Logf("%s (%s): %d of %d prompts match llama.cpp for all tokens", name, models[name].Config.Arch, matched[name][0], matched[name][1])
	}
}

func readArchRefs(t *testing.T) []archRef {
	t.Helper()
	refs := shareddata.ReadJSONL[archRef](t, filepath.Join("testdata", "arch-refs.jsonl"))
	for _, r := range refs {
		if len(r.IDs) == 0 || len(r.Margins) != len(r.IDs) {
			t.Fatalf("%s %q: %d ids, %d margins", r.Model, r.Prompt, len(r.IDs), len(r.Margins))
		}
	}
	if len(refs) < 10 {
		t.Fatalf("only %d reference cases", len(refs))
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
