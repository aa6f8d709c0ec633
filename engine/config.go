package engine

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/picolm/picolm-wasm/gguf"
)

// Config holds a model's hyperparameters, read from GGUF metadata.
type Config struct {
	Arch        string  // general.architecture: a key of archs
	Name        string  // general.name, informational
	Dim         int     // embedding_length: width of the residual stream
	HiddenDim   int     // feed_forward_length: width of the SwiGLU hidden layer
	Layers      int     // block_count
	Heads       int     // attention.head_count
	KVHeads     int     // attention.head_count_kv (grouped-query attention when < Heads)
	HeadDim     int     // Dim / Heads
	RopeDim     int     // rope.dimension_count: leading dims of each head that are rotated
	VocabSize   int     // rows of token_embd
	TrainCtx    int     // context_length the model was trained with
	RopeBase    float32 // rope.freq_base, default 10000
	RopeScale   float32 // rotation angles are multiplied by it: 1/rope.scaling.factor for "linear" scaling, else 1
	RopeNeoX    bool    // rotate (x[i], x[i+RopeDim/2]) pairs instead of (x[2i], x[2i+1])
	RopeFreqs   bool    // rope_freqs.weight divides each pair's frequency (Llama 3.1+ "llama3" scaling)
	NormEps     float32 // attention.layer_norm_rms_epsilon, default 1e-5
	KVDim       int     // KVHeads * HeadDim
	KVMul       int     // Heads / KVHeads: query heads sharing one KV head
	TiedOutput  bool    // no output.weight: logits use token_embd
	FileTypeStr string  // the weight types present, for the stats line
}

// Errors the loader returns; wrapped with detail.
var (
	ErrArch       = errors.New("unsupported architecture")
	ErrMissing    = errors.New("missing tensor")
	ErrShape      = errors.New("tensor shape mismatch")
	ErrQuantType  = errors.New("unsupported tensor type")
	ErrHyperparam = errors.New("bad hyperparameter")
	ErrContext    = errors.New("context length exceeded")
	ErrTensor     = errors.New("unexpected tensor")
)

// archSpec is everything that distinguishes one architecture's forward pass
// from another's; the loader and Forward read it, nothing else does.
// Every architecture also takes, when the file has them, fused attn_qkv and
// separate q/k/v/o biases (llama.cpp treats them as optional), a missing
// output.weight (tied to token_embd) and rope_freqs.weight.
type archSpec struct {
	neox     bool // rope pairs (x[i], x[i+ropeDim/2]) (GPT-NeoX, LLAMA_ROPE_TYPE_NEOX), not (x[2i], x[2i+1])
	qkvBias  bool // attn_q/k/v.bias are required (qwen2)
	fusedFFN bool // ffn_up.weight is [2·hidden][dim]: the gate rows, then the up rows; no ffn_gate (phi3)
	// scaleQ: the query is multiplied by 1/sqrt(headDim) before it is
	// rounded to fp16 for K·q, instead of scaling the scores after
	// (llama.cpp's phi3 graph does ggml_scale(q) and attention scale 1).
	scaleQ bool
}

// archs are the supported values of general.architecture. Mistral, SmolLM
// and Llama 3 GGUFs are "llama"; Qwen2 and Qwen2.5 are "qwen2"; Phi-3 and
// Phi-3.5 (without LongRoPE factors) are "phi3".
var archs = map[string]archSpec{
	"llama": {},
	"qwen2": {neox: true, qkvBias: true},
	"phi3":  {neox: true, fusedFFN: true, scaleQ: true},
}

func readConfig(f *gguf.File) (Config, error) {
	var c Config
	arch, err := f.String("general.architecture")
	if err != nil {
		return c, fmt.Errorf("%w: %v", ErrArch, err)
	}
	spec, ok := archs[arch]
	if !ok {
		return c, fmt.Errorf("%w %q (this engine runs %s)", ErrArch, arch, archNames())
	}
	c.Arch = arch
	c.RopeNeoX = spec.neox
	c.Name, _ = f.String("general.name")
	key := func(k string) string { return arch + "." + k }
	need := func(k string, dst *int) error {
		v, err := f.Uint(key(k))
		if err != nil {
			return fmt.Errorf("%w: %v", ErrHyperparam, err)
		}
		if v == 0 || v > 1<<20 {
			return fmt.Errorf("%w: %s = %d", ErrHyperparam, key(k), v)
		}
		*dst = int(v)
		return nil
	}
	for _, p := range []struct {
		k string
		d *int
	}{
		{"embedding_length", &c.Dim},
		{"feed_forward_length", &c.HiddenDim},
		{"block_count", &c.Layers},
		{"attention.head_count", &c.Heads},
	} {
		if err := need(p.k, p.d); err != nil {
			return c, err
		}
	}
	c.KVHeads = c.Heads
	if _, ok := f.Lookup(key("attention.head_count_kv")); ok {
		if err := need("attention.head_count_kv", &c.KVHeads); err != nil {
			return c, err
		}
	}
	if c.Dim%c.Heads != 0 || c.Heads%c.KVHeads != 0 {
		return c, fmt.Errorf("%w: embedding %d, heads %d, kv heads %d do not divide", ErrHyperparam, c.Dim, c.Heads, c.KVHeads)
	}
	c.HeadDim = c.Dim / c.Heads
	c.KVDim = c.KVHeads * c.HeadDim
	c.KVMul = c.Heads / c.KVHeads
	c.RopeDim = c.HeadDim
	if _, ok := f.Lookup(key("rope.dimension_count")); ok {
		if err := need("rope.dimension_count", &c.RopeDim); err != nil {
			return c, err
		}
	}
	if c.RopeDim > c.HeadDim || c.RopeDim%2 != 0 {
		return c, fmt.Errorf("%w: rope.dimension_count %d with head size %d", ErrHyperparam, c.RopeDim, c.HeadDim)
	}
	c.TrainCtx = 2048
	if _, ok := f.Lookup(key("context_length")); ok {
		if err := need("context_length", &c.TrainCtx); err != nil {
			return c, err
		}
	}
	c.RopeBase = 10000
	if _, ok := f.Lookup(key("rope.freq_base")); ok {
		if c.RopeBase, err = f.Float32(key("rope.freq_base")); err != nil {
			return c, fmt.Errorf("%w: %v", ErrHyperparam, err)
		}
	}
	c.NormEps = 1e-5
	if _, ok := f.Lookup(key("attention.layer_norm_rms_epsilon")); ok {
		if c.NormEps, err = f.Float32(key("attention.layer_norm_rms_epsilon")); err != nil {
			return c, fmt.Errorf("%w: %v", ErrHyperparam, err)
		}
	}
	if !(c.RopeBase > 0) || math.IsInf(float64(c.RopeBase), 0) || !(c.NormEps > 0) || c.NormEps > 1 {
		return c, fmt.Errorf("%w: rope base %g, rms eps %g", ErrHyperparam, c.RopeBase, c.NormEps)
	}
	if err := readRopeScaling(f, key, &c); err != nil {
		return c, err
	}
	if v, err := f.Uint(key("expert_count")); err == nil && v > 0 {
		return c, fmt.Errorf("%w: %s.expert_count = %d: mixture-of-experts models are not supported", ErrArch, arch, v)
	}
	return c, nil
}

// readRopeScaling reads rope.scaling.type and rope.scaling.factor as
// llama.cpp does: a missing type is "linear"; for "linear" the factor (or
// the older rope.scale_linear) divides every rotation angle, for "none" it is
// ignored. YaRN and LongRoPE are refused. Llama 3.1+ files carry their
// "llama3" scaling as the rope_freqs.weight tensor (see Load), not as keys.
func readRopeScaling(f *gguf.File, key func(string) string, c *Config) error {
	c.RopeScale = 1
	typ := "linear"
	if _, ok := f.Lookup(key("rope.scaling.type")); ok {
		s, err := f.String(key("rope.scaling.type"))
		if err != nil {
			return fmt.Errorf("%w: %v", ErrHyperparam, err)
		}
		typ = s
	}
	switch typ {
	case "none":
		return nil
	case "linear":
	default:
		return fmt.Errorf("%w: %s = %q: only linear rope scaling is supported", ErrHyperparam, key("rope.scaling.type"), typ)
	}
	for _, k := range []string{"rope.scaling.factor", "rope.scale_linear"} {
		if _, ok := f.Lookup(key(k)); !ok {
			continue
		}
		factor, err := f.Float32(key(k))
		if err != nil {
			return fmt.Errorf("%w: %v", ErrHyperparam, err)
		}
		if !(factor >= 0) || math.IsInf(float64(factor), 0) {
			return fmt.Errorf("%w: %s = %g", ErrHyperparam, key(k), factor)
		}
		if factor != 0 { // 0 means unset
			c.RopeScale = 1 / factor
		}
		break
	}
	return nil
}

// archNames lists the supported architectures for error messages.
func archNames() string {
	names := make([]string, 0, len(archs))
	for n := range archs {
		names = append(names, strconv.Quote(n))
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
