package synth

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/picolm/picolm-wasm/gguf"
	"github.com/picolm/picolm-wasm/gguf/tools/quantize"
	"github.com/picolm/picolm-wasm/quant"
)

// Arch is what a generated model's architecture changes from a plain Llama:
// the general.architecture name (and so the metadata key prefix), the
// tensors llama.cpp's converter writes for it, and a few hyperparameters.
// The zero value is a Llama model.
type Arch struct {
	Name     string  `json:"name,omitempty"`      // general.architecture: "llama" (default), "qwen2", "phi3"
	Tied     bool    `json:"tied,omitempty"`      // no output.weight: the logits use token_embd (SmolLM, Qwen2-0.5B, Llama 3.2)
	QKVBias  bool    `json:"qkv_bias,omitempty"`  // attn_q/k/v.bias, N(0, BiasStd²) (qwen2)
	FusedQKV bool    `json:"fused_qkv,omitempty"` // one attn_qkv.weight [dim+2·kvDim] instead of attn_q/k/v (phi3)
	FusedFFN bool    `json:"fused_ffn,omitempty"` // one ffn_up.weight [2·FF]: gate rows, then up rows; no ffn_gate (phi3)
	RopeBase float32 `json:"rope_base,omitempty"` // rope.freq_base; 0 means 10000
	NormEps  float32 `json:"norm_eps,omitempty"`  // attention.layer_norm_rms_epsilon; 0 means 1e-5
	// Llama3 writes rope_freqs.weight as llama.cpp's convert_hf_to_gguf.py
	// does for Llama 3.1+'s "llama3" rope scaling.
	Llama3 *Llama3Rope `json:"llama3,omitempty"`
	Pre    string      `json:"pre,omitempty"`     // replaces tokenizer.ggml.pre when set
	AddBOS *bool       `json:"add_bos,omitempty"` // sets tokenizer.ggml.add_bos_token when set
}

// Llama3Rope is Llama 3.1's rope_scaling block of config.json.
type Llama3Rope struct {
	Factor          float64 `json:"factor"`           // 8
	LowFreqFactor   float64 `json:"low_freq_factor"`  // 1
	HighFreqFactor  float64 `json:"high_freq_factor"` // 4
	OriginalContext int     `json:"original_context"` // original_max_position_embeddings: 8192
}

// BiasStd is the standard deviation of generated biases: large enough that a
// forward pass that ignored them would pick other tokens.
const BiasStd = 0.5

// Factors returns the per-pair frequency divisors of rope_freqs.weight for a
// rope of ropeDim dims with base theta, computed as convert_hf_to_gguf.py
// does: 1 for wavelengths below OriginalContext/HighFreqFactor, Factor above
// OriginalContext/LowFreqFactor, and a smooth blend between.
func (r *Llama3Rope) Factors(ropeDim int, base float64) []float32 {
	lowWave := float64(r.OriginalContext) / r.LowFreqFactor
	highWave := float64(r.OriginalContext) / r.HighFreqFactor
	out := make([]float32, ropeDim/2)
	for i := range out {
		freq := 1 / math.Pow(base, float64(float32(2*i)/float32(ropeDim)))
		freq = float64(float32(freq)) // torch computes the frequencies in float32
		wave := 2 * math.Pi / freq
		switch {
		case wave < highWave:
			out[i] = 1
		case wave > lowWave:
			out[i] = float32(r.Factor)
		default:
			smooth := (float64(r.OriginalContext)/wave - r.LowFreqFactor) / (r.HighFreqFactor - r.LowFreqFactor)
			out[i] = float32(1 / ((1-smooth)/r.Factor + smooth))
		}
	}
	return out
}

// ArchModel is a Model of an architecture other than plain Llama.
type ArchModel struct {
	Model
	Arch Arch
}

func (m *ArchModel) name() string {
	if m.Arch.Name == "" {
		return "llama"
	}
	return m.Arch.Name
}

func (m *ArchModel) check() error {
	switch m.name() {
	case "llama", "qwen2", "phi3":
	default:
		return fmt.Errorf("%w: architecture %q", ErrShape, m.name())
	}
	if r := m.Arch.Llama3; r != nil && (!(r.Factor > 0) || !(r.LowFreqFactor > 0) || !(r.HighFreqFactor > r.LowFreqFactor) || r.OriginalContext <= 0) {
		return fmt.Errorf("%w: llama3 rope %+v", ErrShape, *r)
	}
	return nil
}

// Metadata returns the model's metadata: Model's, under the architecture's
// key prefix, with the Arch's settings.
func (m *ArchModel) Metadata() ([]gguf.KeyValue, int, error) {
	if err := m.check(); err != nil {
		return nil, 0, err
	}
	kv, n, err := m.Model.Metadata()
	if err != nil {
		return nil, 0, err
	}
	a, arch := m.Arch, m.name()
	set := map[string]gguf.Value{}
	if a.RopeBase != 0 {
		set["llama.rope.freq_base"] = gguf.Float32(a.RopeBase)
	}
	if a.NormEps != 0 {
		set["llama.attention.layer_norm_rms_epsilon"] = gguf.Float32(a.NormEps)
	}
	if a.Pre != "" {
		set["tokenizer.ggml.pre"] = gguf.String(a.Pre)
	}
	if a.AddBOS != nil {
		set["tokenizer.ggml.add_bos_token"] = gguf.Bool(*a.AddBOS)
	}
	out := kv[:0:0]
	for _, e := range kv {
		if v, ok := set[e.Key]; ok {
			e.Value = v
			delete(set, e.Key)
		}
		if e.Key == "general.architecture" {
			e.Value = gguf.String(arch)
		}
		if rest, ok := strings.CutPrefix(e.Key, "llama."); ok {
			e.Key = arch + "." + rest
		}
		out = append(out, e)
	}
	for _, k := range []string{"tokenizer.ggml.pre", "tokenizer.ggml.add_bos_token"} {
		if v, ok := set[k]; ok {
			out = append(out, gguf.KeyValue{Key: k, Value: v})
		}
	}
	return out, n, nil
}

// Tensors returns the model's tensors: Model's, fused, tied and with biases
// and rope_freqs as the Arch says.
func (m *ArchModel) Tensors(vocab int) []quantize.Tensor {
	a := m.Arch
	d, kvd, ff := uint64(m.Embd), uint64(m.Embd/m.Heads*m.KVHeads), uint64(m.FF)
	var ts []quantize.Tensor
	add := func(name string, std float64, dims ...uint64) {
		ts = append(ts, quantize.Tensor{Name: name, Dims: dims, Type: quant.F32, Rows: m.rows(name, std, int(dims[0]))})
	}
	for _, t := range m.Model.Tensors(vocab) {
		name := t.Name
		base := name[strings.LastIndexByte(name[:len(name)-len(".weight")], '.')+1:]
		p := strings.TrimSuffix(name, base)
		switch {
		case a.Tied && name == "output.weight":
		case a.FusedQKV && base == "attn_q.weight":
			add(p+"attn_qkv.weight", WeightStd, d, d+2*kvd)
		case a.FusedQKV && (base == "attn_k.weight" || base == "attn_v.weight"):
		case a.FusedFFN && base == "ffn_gate.weight":
		case a.FusedFFN && base == "ffn_up.weight":
			add(name, WeightStd, d, 2*ff)
		default:
			ts = append(ts, t)
		}
		if a.QKVBias && base == "attn_v.weight" {
			add(p+"attn_q.bias", BiasStd, d)
			add(p+"attn_k.bias", BiasStd, kvd)
			add(p+"attn_v.bias", BiasStd, kvd)
		}
	}
	if a.Llama3 != nil {
		base := float64(a.RopeBase)
		if base == 0 {
			base = 10000
		}
		f := a.Llama3.Factors(m.Embd/m.Heads, base)
		ts = append(ts, quantize.Tensor{Name: "rope_freqs.weight", Dims: []uint64{uint64(len(f))}, Type: quant.F32,
			Rows: func(dst []float32, first int) error { copy(dst, f[first:]); return nil }})
	}
	return ts
}

// Plan returns the tensors of the model with their output types for file
// type ft, and the metadata to write.
func (m *ArchModel) Plan(ft quantize.FileType, o quantize.Options) (*quantize.Plan, []gguf.KeyValue, error) {
	kv, vocab, err := m.Metadata()
	if err != nil {
		return nil, nil, err
	}
	h := quantize.Hyper{Arch: m.name(), Layers: m.Layers, Heads: m.Heads, KVHeads: m.KVHeads}
	return m.plan(m.Tensors(vocab), kv, h, ft, o)
}

// WriteFile writes the model in file type ft to path (which appears only
// when complete).
func (m *ArchModel) WriteFile(path string, ft quantize.FileType, o quantize.Options) (quantize.Stats, error) {
	p, kv, err := m.Plan(ft, o)
	if err != nil {
		return quantize.Stats{}, err
	}
	return quantize.WriteFile(path, kv, p, o)
}

// Spec names a generated model completely, so that reference files can record
// it and a test regenerate the same bytes.
type Spec struct {
	Name  string `json:"name"`
	Arch  Arch   `json:"arch"`
	Shape Shape  `json:"shape"`
	Seed  uint64 `json:"seed"`
	Type  string `json:"type"`  // a file type of FileTypes: F32, F16, Q8_0, IQ2_XXS, ...
	Vocab string `json:"vocab"` // the GGUF to copy the tokenizer from, relative to the test data directory
}

// Write writes the model to path, the tokenizer read from vocabDir/Vocab.
func (s Spec) Write(path, vocabDir string) error {
	ft, err := ParseFileType(s.Type)
	if err != nil {
		return err
	}
	v, err := gguf.Open(filepath.Join(vocabDir, s.Vocab))
	if err != nil {
		return err
	}
	defer v.Close()
	m := ArchModel{Model: Model{Shape: s.Shape, Seed: s.Seed, Name: s.Name, Vocab: v}, Arch: s.Arch}
	_, err = m.WriteFile(path, ft, quantize.Options{})
	return err
}
