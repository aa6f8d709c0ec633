package engine

import (
	"fmt"
	"strings"

	"github.com/picolm/picolm-wasm/gguf"
	"github.com/picolm/picolm-wasm/quant"
)

// PartBytes is how many bytes of tensor data part of parts of the model in
// f reads through LoadOptions.Data (f from gguf.ParseHeader: no Data), from
// the header alone: what LoadWith copies of every tensor for that part (its
// rows of each matrix, split as matrix.partOf splits them; the lead's whole
// token_embd; every part's norms and biases), plus the few bytes of each
// tensor the model's identity samples. A planner sizes each instance's
// memory with it before any weight is read; a test holds it equal to what
// LoadWith reads.
func PartBytes(f *gguf.File, part, parts int) (int64, error) {
	c, parts, err := planConfig(f, part, parts)
	if err != nil {
		return 0, err
	}
	_, tied := f.Tensor("output.weight")
	tied = !tied
	fused := archs[c.Arch].fusedFFN
	qUnit := c.KVMul * c.HeadDim
	var n int64
	for i := range f.Tensors {
		t := &f.Tensors[i]
		tr := quant.TraitsOf(t.Type)
		if !tr.Valid() || tr.BlockSize == 0 {
			return 0, fmt.Errorf("%w: %s is %s", ErrQuantType, t.Name, t.Type)
		}
		size := int64(t.Elements()) / int64(tr.BlockSize) * int64(tr.TypeSize)
		n += min(size, 64) // modelIdentity's sample
		if len(t.Dims) != 2 {
			n += size // a norm or a bias: every part reads it whole
			continue
		}
		cols, rows := int(t.Dims[0]), int(t.Dims[1])
		// mat reads rows [first+lo, first+hi) of the tensor for the part's
		// units of a sub-matrix of rows rows.
		mat := func(first, rows, unit int) {
			w := matrix{rows: rows, unit: unit}
			lo, hi := w.partOf(part, parts)
			if unit == 0 {
				lo, hi = 0, rows
			}
			if cols%tr.BlockSize != 0 { // read whole and dequantized (loader.matrix)
				if hi > lo {
					n += size
				}
				return
			}
			n += int64(hi-lo) * int64(cols/tr.BlockSize*tr.TypeSize)
		}
		name := t.Name
		if b, ok := strings.CutPrefix(name, "blk."); ok {
			if _, rest, ok := strings.Cut(b, "."); ok {
				name = rest
			}
		}
		switch name {
		case "token_embd.weight":
			switch {
			case part == 0:
				mat(0, rows, 0)
			case tied:
				mat(0, rows, 1)
			}
		case "attn_q.weight":
			mat(0, rows, qUnit)
		case "attn_k.weight", "attn_v.weight":
			mat(0, rows, c.HeadDim)
		case "attn_qkv.weight":
			mat(0, c.Dim, qUnit)
			mat(c.Dim, c.KVDim, c.HeadDim)
			mat(c.Dim+c.KVDim, c.KVDim, c.HeadDim)
		case "ffn_up.weight":
			if fused {
				mat(0, c.HiddenDim, 1)
				mat(c.HiddenDim, c.HiddenDim, 1)
			} else {
				mat(0, rows, 1)
			}
		default:
			mat(0, rows, 1)
		}
	}
	return n, nil
}

// KVBytes is the size of the KV cache part of parts of the model in f keeps
// for a session of o (its KV heads' slice; the lead's whole cache when
// parts is 1), with the rotary tables beside it.
func KVBytes(f *gguf.File, part, parts int, o SessionOptions) (int64, error) {
	c, parts, err := planConfig(f, part, parts)
	if err != nil {
		return 0, err
	}
	m := Model{Config: c}
	ctx, err := m.contextFor(o)
	if err != nil {
		return 0, err
	}
	lo, hi := partHeads(c.KVHeads, part, parts)
	kv := 2 * int64(c.Layers) * int64(ctx) * int64((hi-lo)*c.HeadDim) * 2 // K and V, fp16
	rope := 2 * int64(ctx) * int64(c.RopeDim) * 4
	return kv + rope, nil
}

// planConfig is the model config of f and the parts count (at least 1) of a
// plan for part of parts, or why that part cannot be planned.
func planConfig(f *gguf.File, part, parts int) (Config, int, error) {
	c, err := readConfig(f)
	if err != nil {
		return Config{}, 0, err
	}
	parts = max(parts, 1)
	if part < 0 || part >= parts || parts > maxParts {
		return Config{}, 0, fmt.Errorf("%w: part %d of %d (at most %d parts)", ErrShard, part, parts, maxParts)
	}
	return c, parts, nil
}
