package engine

import (
	"crypto/sha256"
	"fmt"
	"math"
	"sort"
	"strings"
	"unsafe"

	"github.com/picolm/picolm-wasm/engine/tokenizer"
	"github.com/picolm/picolm-wasm/gguf"
	"github.com/picolm/picolm-wasm/quant"
)

// matrix is a weight matrix W[rows][cols], stored row-major in its GGUF type:
// row r is data[r*rowBytes : (r+1)*rowBytes]. data is a view into the model
// file (never a copy) unless the loader had to convert the tensor (see
// loadMatrix).
type matrix struct {
	name     string
	rows     int
	cols     int
	typ      quant.Type
	tr       *quant.Traits
	rowBytes int
	data     []byte
}

func (w *matrix) row(r int) []byte { return w.data[r*w.rowBytes : (r+1)*w.rowBytes] }

// rowRange is the view of rows [first, first+n) of w: a fused tensor
// (attn_qkv, phi3's gate-and-up ffn_up) is split into its parts this way,
// without copying.
func (w matrix) rowRange(first, n int) matrix {
	w.data = w.data[first*w.rowBytes : (first+n)*w.rowBytes]
	w.rows = n
	return w
}

// A layer's biases are nil when the file has none (then adding them is a
// no-op).
type layer struct {
	attnNorm []float32 // [dim]
	wq       matrix    // [dim][dim]
	wk       matrix    // [kvDim][dim]
	wv       matrix    // [kvDim][dim]
	wo       matrix    // [dim][dim]
	bq       []float32 // [dim] or nil
	bk       []float32 // [kvDim] or nil
	bv       []float32 // [kvDim] or nil
	bo       []float32 // [dim] or nil
	ffnNorm  []float32 // [dim]
	gate     matrix    // [hidden][dim]  (w1)
	down     matrix    // [dim][hidden]  (w2)
	up       matrix    // [hidden][dim]  (w3)
}

// Model is a loaded, read-only model: configuration, weights (views into the
// GGUF bytes) and tokenizer. It is safe to share between Sessions.
type Model struct {
	Config    Config
	Tokenizer *tokenizer.Tokenizer

	file    *gguf.File
	tokEmbd matrix    // [vocab][dim]
	layers  []layer   // [layers]
	outNorm []float32 // [dim]
	output  matrix    // [vocab][dim]; token_embd when tied
	spec    archSpec
	// ropeFreqs divide the rotation frequency of each pair
	// (rope_freqs.weight, Llama 3.1+); nil when the file has none.
	ropeFreqs []float32 // [ropeDim/2]

	identity [32]byte // hash of the metadata and tensor table: names this model in cache files
	vecTypes []quant.Type
	grammar  jsonGrammar
	chat     chatTemplate
}

// Load builds a Model over a parsed GGUF file. The weights stay views into
// f's bytes, so f must stay open for as long as the Model is used.
func Load(f *gguf.File) (*Model, error) {
	cfg, err := readConfig(f)
	if err != nil {
		return nil, err
	}
	m := &Model{Config: cfg, file: f, spec: archs[cfg.Arch]}
	if m.Tokenizer, err = tokenizer.FromGGUF(f); err != nil {
		return nil, err
	}
	// Every tensor of the file must be used: a tensor this engine does not
	// know (an FFN bias, a MoE router) would otherwise be silently ignored
	// and the output wrong.
	used := map[string]bool{}
	types := map[quant.Type]int{}
	mat := func(name string, rows, cols int) (matrix, error) {
		w, err := loadMatrix(f, name, rows, cols)
		if err == nil {
			types[w.typ] += w.rows * w.cols
			used[name] = true
		}
		return w, err
	}
	vec := func(name string, n int) ([]float32, error) {
		used[name] = true
		return loadVector(f, name, n)
	}
	has := func(name string) bool { _, ok := f.Tensor(name); return ok }
	c := &m.Config
	emb, ok := f.Tensor("token_embd.weight")
	if !ok {
		return nil, fmt.Errorf("%w: token_embd.weight", ErrMissing)
	}
	if len(emb.Dims) != 2 {
		return nil, fmt.Errorf("%w: token_embd.weight has %d dimensions", ErrShape, len(emb.Dims))
	}
	c.VocabSize = int(emb.Dims[1])
	if c.VocabSize != m.Tokenizer.VocabSize() {
		return nil, fmt.Errorf("%w: token_embd.weight has %d rows but the vocabulary has %d tokens", ErrShape, c.VocabSize, m.Tokenizer.VocabSize())
	}
	if m.tokEmbd, err = mat("token_embd.weight", c.VocabSize, c.Dim); err != nil {
		return nil, err
	}
	if has("output.weight") {
		if m.output, err = mat("output.weight", c.VocabSize, c.Dim); err != nil {
			return nil, err
		}
	} else {
		c.TiedOutput = true
		m.output = m.tokEmbd
	}
	if m.outNorm, err = vec("output_norm.weight", c.Dim); err != nil {
		return nil, err
	}
	if has("rope_freqs.weight") {
		if m.ropeFreqs, err = vec("rope_freqs.weight", c.RopeDim/2); err != nil {
			return nil, err
		}
		for i, v := range m.ropeFreqs {
			if !(v > 0) || math.IsInf(float64(v), 0) {
				return nil, fmt.Errorf("%w: rope_freqs.weight[%d] = %g", ErrHyperparam, i, v)
			}
		}
		c.RopeFreqs = true
	}
	m.layers = make([]layer, c.Layers)
	for i := range m.layers {
		L := &m.layers[i]
		p := fmt.Sprintf("blk.%d.", i)
		if L.attnNorm, err = vec(p+"attn_norm.weight", c.Dim); err != nil {
			return nil, err
		}
		if L.ffnNorm, err = vec(p+"ffn_norm.weight", c.Dim); err != nil {
			return nil, err
		}
		// Q, K and V: separate, or one fused [dim+2·kvDim][dim] tensor.
		if has(p + "attn_qkv.weight") {
			qkv, err := mat(p+"attn_qkv.weight", c.Dim+2*c.KVDim, c.Dim)
			if err != nil {
				return nil, err
			}
			L.wq, L.wk, L.wv = qkv.rowRange(0, c.Dim), qkv.rowRange(c.Dim, c.KVDim), qkv.rowRange(c.Dim+c.KVDim, c.KVDim)
		} else {
			if L.wq, err = mat(p+"attn_q.weight", c.Dim, c.Dim); err != nil {
				return nil, err
			}
			if L.wk, err = mat(p+"attn_k.weight", c.KVDim, c.Dim); err != nil {
				return nil, err
			}
			if L.wv, err = mat(p+"attn_v.weight", c.KVDim, c.Dim); err != nil {
				return nil, err
			}
		}
		if L.wo, err = mat(p+"attn_output.weight", c.Dim, c.Dim); err != nil {
			return nil, err
		}
		for _, b := range []struct {
			dst  *[]float32
			name string
			n    int
		}{
			{&L.bq, "attn_q.bias", c.Dim},
			{&L.bk, "attn_k.bias", c.KVDim},
			{&L.bv, "attn_v.bias", c.KVDim},
			{&L.bo, "attn_output.bias", c.Dim},
		} {
			if has(p+b.name) || (m.spec.qkvBias && b.name != "attn_output.bias") {
				if *b.dst, err = vec(p+b.name, b.n); err != nil {
					return nil, err
				}
			}
		}
		// FFN: gate and up separate, or (phi3) one [2·hidden][dim] ffn_up.
		if m.spec.fusedFFN {
			gateUp, err := mat(p+"ffn_up.weight", 2*c.HiddenDim, c.Dim)
			if err != nil {
				return nil, err
			}
			L.gate, L.up = gateUp.rowRange(0, c.HiddenDim), gateUp.rowRange(c.HiddenDim, c.HiddenDim)
		} else {
			if L.gate, err = mat(p+"ffn_gate.weight", c.HiddenDim, c.Dim); err != nil {
				return nil, err
			}
			if L.up, err = mat(p+"ffn_up.weight", c.HiddenDim, c.Dim); err != nil {
				return nil, err
			}
		}
		if L.down, err = mat(p+"ffn_down.weight", c.Dim, c.HiddenDim); err != nil {
			return nil, err
		}
	}
	for _, t := range f.Tensors {
		if !used[t.Name] {
			return nil, fmt.Errorf("%w: %s (%s models, as this engine runs them, have no such tensor)", ErrTensor, t.Name, c.Arch)
		}
	}
	// The activation formats the matrices' dot kernels take.
	seen := map[quant.Type]bool{}
	var names []string
	for t, n := range types {
		names = append(names, fmt.Sprintf("%s:%d", t, n))
		vt := quant.TraitsOf(t).VecDotType
		if !seen[vt] {
			seen[vt] = true
			m.vecTypes = append(m.vecTypes, vt)
		}
	}
	sort.Strings(names)
	c.FileTypeStr = strings.Join(names, " ")
	m.identity = modelIdentity(f)
	return m, nil
}

// Identity is a hash of the model's metadata and tensor table. Two files with
// the same identity hold the same model.
func (m *Model) Identity() [32]byte { return m.identity }

func modelIdentity(f *gguf.File) [32]byte {
	h := sha256.New()
	b := f.Bytes()
	// Header, metadata and tensor table: everything before the data section,
	// plus a sample of the data so two models sharing a header differ.
	end := min(int(f.DataOffset), len(b))
	h.Write(b[:end])
	for _, t := range f.Tensors {
		n := min(len(t.Data), 64)
		h.Write(t.Data[:n])
	}
	var id [32]byte
	h.Sum(id[:0])
	return id
}

// loadMatrix finds a 2-D tensor and checks its shape is [rows][cols] (ggml
// dims: ne0 = cols, ne1 = rows) and its type has kernels.
//
// A quantized tensor whose rows are not a whole number of blocks (the Q8_0
// stories260K file stores ffn_down's 172-wide rows as one flat block stream)
// cannot be used row by row: it is dequantized once, in flat order, into an
// owned F32 copy. That is exact and small for the models where it happens.
func loadMatrix(f *gguf.File, name string, rows, cols int) (matrix, error) {
	t, ok := f.Tensor(name)
	if !ok {
		return matrix{}, fmt.Errorf("%w: %s", ErrMissing, name)
	}
	if len(t.Dims) != 2 || t.Dims[0] != uint64(cols) || t.Dims[1] != uint64(rows) {
		return matrix{}, fmt.Errorf("%w: %s is %v, want [%d %d]", ErrShape, name, t.Dims, cols, rows)
	}
	tr := quant.TraitsOf(t.Type)
	if tr == nil || tr.Dot == nil || tr.Dequantize == nil || quant.TraitsOf(tr.VecDotType).FromFloat == nil {
		return matrix{}, fmt.Errorf("%w: %s is %s", ErrQuantType, name, t.Type)
	}
	w := matrix{name: name, rows: rows, cols: cols, typ: t.Type, tr: tr, data: t.Data}
	if cols%tr.BlockSize == 0 {
		w.rowBytes = cols / tr.BlockSize * tr.TypeSize
		return w, nil
	}
	n := rows * cols
	if n%tr.BlockSize != 0 {
		return matrix{}, fmt.Errorf("%w: %s: %d elements are not a whole number of %s blocks", ErrShape, name, n, t.Type)
	}
	flat := make([]float32, n)
	tr.Dequantize(flat, t.Data)
	w.typ, w.tr = quant.F32, quant.TraitsOf(quant.F32)
	w.rowBytes = cols * 4
	w.data = f32bytes(flat)
	return w, nil
}

// loadVector reads a 1-D tensor of n elements (a norm weight) into an owned
// []float32, whatever its type.
func loadVector(f *gguf.File, name string, n int) ([]float32, error) {
	t, ok := f.Tensor(name)
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrMissing, name)
	}
	if len(t.Dims) != 1 || t.Dims[0] != uint64(n) {
		return nil, fmt.Errorf("%w: %s is %v, want [%d]", ErrShape, name, t.Dims, n)
	}
	tr := quant.TraitsOf(t.Type)
	if tr == nil || tr.Dequantize == nil || n%tr.BlockSize != 0 {
		return nil, fmt.Errorf("%w: %s is %s", ErrQuantType, name, t.Type)
	}
	v := make([]float32, n)
	tr.Dequantize(v, t.Data)
	return v, nil
}

// f32bytes views a []float32 as its bytes (little-endian on every Go wasm and
// amd64/arm64 target).
func f32bytes(v []float32) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v)*4)
}
