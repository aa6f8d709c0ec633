package engine

import (
	"errors"
	"fmt"
	"math"

	"github.com/picolm/picolm-wasm/gguf"
)

// Config holds a model's hyperparameters, read from GGUF metadata.
type Config struct {
	Arch        string  // general.architecture ("llama")
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
)

func readConfig(f *gguf.File) (Config, error) {
	var c Config
	arch, err := f.String("general.architecture")
	if err != nil {
		return c, fmt.Errorf("%w: %v", ErrArch, err)
	}
	if arch != "llama" {
		return c, fmt.Errorf("%w %q (this engine runs llama-architecture models)", ErrArch, arch)
	}
	c.Arch = arch
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
	return c, nil
}
