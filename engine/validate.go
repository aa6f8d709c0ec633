package engine

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/picolm/picolm-wasm/quant"
)

// ErrWeights is wrapped by the error of a model whose weights hold a NaN or
// an infinity (in a block scale, or in a float tensor): such a model loads
// but generates garbage (token 0 at every step), so it is refused at load,
// as llama.cpp's ggml_validate_row_data refuses it.
var ErrWeights = errors.New("NaN or infinite weight")

// checkWeights checks every weight this instance holds, where it holds them:
// each matrix's rows (its part of them, when the model is split) through
// quant.Validate, which reads only the scales of quantized blocks, and the
// vectors (norms, biases) as loaded. The error names the tensor, the block
// (counted in the whole tensor) and its row. o.SkipWeightCheck skips it.
func (m *Model) checkWeights(o LoadOptions) error {
	if o.SkipWeightCheck {
		return nil
	}
	// The rows of a tensor before a matrix's: fused tensors (attn_qkv, phi3's
	// ffn_up) hold several matrices, in m.mats order.
	first := map[string]int{}
	check := func(w *matrix, f int) error {
		err := quant.Validate(w.typ, w.data)
		var e *quant.NonFiniteError
		if !errors.As(err, &e) {
			return err
		}
		t, _ := m.file.Tensor(w.name)
		ttr := quant.TraitsOf(t.Type)
		row := f + w.lo
		block := 0
		what := "value"
		if e.Field != "" {
			what = "scale " + e.Field
		}
		if w.typ == t.Type {
			block = row*w.rowBytes/w.tr.TypeSize + e.Block
			row += e.Block * w.tr.TypeSize / w.rowBytes
		} else { // dequantized to F32 when loaded (rows that are not whole blocks): e.Block is an element
			block = (row*w.cols + e.Block) / ttr.BlockSize
			row += e.Block / w.cols
			what = "a dequantized value"
		}
		blocks := int(t.Elements()) / ttr.BlockSize
		return fmt.Errorf("%w: %s (%s) block %d of %d (row %d): %s is %v", ErrWeights, w.name, t.Type, block, blocks, row, what, e.Value)
	}
	var mats []*matrix
	if m.part == 0 {
		mats = append(mats, &m.tokEmbd)
	}
	for _, w := range m.mats {
		if w.name != "token_embd.weight" || m.part != 0 { // else the tied output: token_embd's rows
			mats = append(mats, w)
		}
	}
	// The scan is bound by memory bandwidth (a cache line per block): the
	// matrices are checked on every core at once, the error reported is the
	// first in order.
	offsets := make([]int, len(mats))
	for i, w := range mats {
		offsets[i] = first[w.name]
		first[w.name] += w.rows
	}
	errs := make([]error, len(mats))
	var next atomic.Int32
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(mats)) {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < len(mats); i = int(next.Add(1)) - 1 {
				errs[i] = check(mats[i], offsets[i])
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, e := range errs {
			if e != nil {
				return e
			}
		}
	}
	vec := func(name string, v []float32) error {
		for i, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				t, _ := m.file.Tensor(name)
				bs := quant.TraitsOf(t.Type).BlockSize
				return fmt.Errorf("%w: %s (%s) block %d of %d: element %d is %v", ErrWeights, name, t.Type, i/bs, len(v)/bs, i, x)
			}
		}
		return nil
	}
	if err := vec("output_norm.weight", m.outNorm); err != nil {
		return err
	}
	for i := range m.layers {
		L := &m.layers[i]
		p := fmt.Sprintf("blk.%d.", i)
		for _, v := range []struct {
			name string
			v    []float32
		}{{"attn_norm.weight", L.attnNorm}, {"ffn_norm.weight", L.ffnNorm},
			{"attn_q.bias", L.bq}, {"attn_k.bias", L.bk}, {"attn_v.bias", L.bv}, {"attn_output.bias", L.bo}} {
			if err := vec(p+v.name, v.v); err != nil {
				return err
			}
		}
	}
	return nil
}
