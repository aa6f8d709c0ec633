package engine

import (
	"crypto/sha256"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/picolm/picolm-wasm/engine/tokenizer"
	"github.com/picolm/picolm-wasm/gguf"
	"github.com/picolm/picolm-wasm/quant"
)

// matrix is a weight matrix W[rows][cols], stored row-major in its GGUF type.
// An instance holds the rows [lo, hi) of it (all of them unless the model is
// split over instances, see LoadOptions.Parts): row r (lo <= r < hi) is
// data[(r-lo)*rowBytes : (r-lo+1)*rowBytes]. data is a view into the model
// file (never a copy) unless the file was read through a reader, or the
// loader had to convert the tensor (see loadMatrix).
type matrix struct {
	name     string
	rows     int
	cols     int
	lo, hi   int // the rows this instance holds
	unit     int // rows split over instances in whole units of unit rows (heads of wq, wk, wv; else 1)
	typ      quant.Type
	tr       quant.Traits
	rowBytes int
	data     []byte
}

func (w *matrix) row(r int) []byte { return w.data[(r-w.lo)*w.rowBytes : (r-w.lo+1)*w.rowBytes] }

// part is the view of rows [lo, hi) of w, which holds them (the lead's part
// of a tied output matrix, which is the whole token_embd).
func (w matrix) part(lo, hi int) matrix {
	w.data = w.data[(lo-w.lo)*w.rowBytes : (hi-w.lo)*w.rowBytes]
	w.lo, w.hi = lo, hi
	return w
}

// partRows are the items [lo, hi) that part k of n holds of rows items:
// contiguous, in order, as equal as can be.
func partRows(rows, k, n int) (lo, hi int) {
	return rows * k / n, rows * (k + 1) / n
}

// partOf are the rows [lo, hi) that part k of n holds of w: its share of
// w's units (a whole number of them, as equal as can be).
func (w *matrix) partOf(k, n int) (lo, hi int) {
	u := max(w.unit, 1)
	lo, hi = partRows(w.rows/u, k, n)
	return lo * u, hi * u
}

// partHeads are the KV heads [lo, hi) that part k of n of a model with
// kvHeads of them computes attention for, with the query heads
// [lo·kvMul, hi·kvMul) that read them: the rows it holds of wq, wk and wv
// and the slice of the KV cache it keeps. A part beyond the number of KV
// heads has none.
func partHeads(kvHeads, k, n int) (lo, hi int) { return partRows(kvHeads, k, n) }

// A layer's biases are nil when the file has none (then adding them is a
// no-op). Its products are made of its matrices at load.
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

	qkv     product // wq, wk, wv
	attnOut product // wo
	gateUp  product // gate, up
	ffnOut  product // down
}

// Model is a loaded, read-only model: configuration, weights (views into the
// GGUF bytes) and tokenizer. It is safe to share between Sessions.
type Model struct {
	Config    Config
	Tokenizer *tokenizer.Tokenizer // nil in parts 1.. of a split model (LoadOptions.Part)

	file    *gguf.File
	tokEmbd matrix    // [vocab][dim]
	layers  []layer   // [layers]
	outNorm []float32 // [dim]
	output  matrix    // [vocab][dim]; token_embd when tied
	cls     product   // output (llama2.c's wcls)
	spec    archSpec
	// ropeFreqs divide the rotation frequency of each pair
	// (rope_freqs.weight, Llama 3.1+); nil when the file has none.
	ropeFreqs []float32 // [ropeDim/2]

	// The model may be split over instances (LoadOptions.Parts): this one
	// is part of parts and holds only its rows of every matrix of a product
	// (the layers' wq, wk, wv, wo, gate, up, down, then output). Part 0, the
	// lead, also holds everything else and runs Sessions.
	part, parts int
	groups      []group // every product's groups, by id: in the order of the forward pass

	identity [32]byte // hash of the metadata and tensor table: names this model in cache files
	vecTypes []quant.Type
	grammar  jsonGrammar
	chat     chatTemplate
}

// Load builds a Model over a parsed GGUF file. The weights stay views into
// f's bytes, so f must stay open for as long as the Model is used.
func Load(f *gguf.File) (*Model, error) { return LoadWith(f, LoadOptions{}) }

// LoadOptions choose how much of a model an instance loads.
type LoadOptions struct {
	// Data reads the tensors' bytes (at f.Pos: file offsets, or for a split
	// model offsets in its shards laid end to end) when f comes from
	// gguf.ParseHeader or gguf.ParseHeaderSet, whose tensors have no Data.
	// The bytes an instance holds are then copied out of it (only those).
	Data io.ReaderAt
	// Part of Parts splits every weight matrix over Parts instances by
	// rows: this one loads the rows [rows·Part/Parts, rows·(Part+1)/Parts)
	// of each, so the model exists once in total. Part 0, the lead, also
	// loads everything else (embeddings, norms) and runs Sessions with the
	// other parts as its Peers (SessionOptions.Peers); parts 1.. are served
	// by a Shard. Parts 0 or 1: the whole model.
	Part, Parts int
	// SkipWeightCheck skips the check for NaN and infinite weights
	// (ErrWeights; see checkWeights): one pass over the block scales.
	SkipWeightCheck bool
}

// LoadWith is Load with options.
func LoadWith(f *gguf.File, o LoadOptions) (*Model, error) {
	// One shard of a split model alone has only some of the tensors (the
	// later ones none of the metadata): say so rather than name a tensor.
	if f.Shards == nil {
		if no, count, ok, err := f.SplitKeys(); err != nil {
			return nil, err
		} else if ok && count > 1 {
			return nil, fmt.Errorf("%w: the file is shard %d of %d of a split model: load all its shards together (gguf.OpenSet finds them by name)", gguf.ErrShardMissing, no+1, count)
		}
	}
	cfg, err := readConfig(f)
	if err != nil {
		return nil, err
	}
	parts := max(o.Parts, 1)
	if o.Part < 0 || o.Part >= parts || parts > maxParts {
		return nil, fmt.Errorf("%w: part %d of %d (at most %d parts)", ErrShard, o.Part, o.Parts, maxParts)
	}
	m := &Model{Config: cfg, file: f, spec: archs[cfg.Arch], part: o.Part, parts: parts}
	// Only the lead tokenizes (parts 1.. serve a Shard, never a Session):
	// the others count the vocabulary without building the tokenizer (a
	// 128k-token one is about 30 MB of strings and tables).
	vocab := 0
	if o.Part == 0 {
		if m.Tokenizer, err = tokenizer.FromGGUF(f); err != nil {
			return nil, err
		}
		vocab = m.Tokenizer.VocabSize()
	} else if vocab, err = tokenizer.VocabSize(f); err != nil {
		return nil, err
	}
	ld := loader{f: f, r: o.Data, part: o.Part, parts: parts}
	// Every tensor of the file must be used: a tensor this engine does not
	// know (an FFN bias, a MoE router) would otherwise be silently ignored
	// and the output wrong.
	used := map[string]bool{}
	types := map[quant.Type]int{}
	// mat loads rows [first, first+rows) of the tensor name, which is
	// [tensorRows][cols] (several matrices when fused), as one matrix: this
	// instance's part of it, split in units of unit rows (the attention
	// matrices by heads: a part's q, k and v rows are its heads').
	mat := func(name string, tensorRows, first, rows, cols, unit int) (matrix, error) {
		w, err := ld.matrix(name, tensorRows, first, rows, cols, unit)
		if err == nil {
			types[w.typ] += w.rows * w.cols
			used[name] = true
		}
		return w, err
	}
	vec := func(name string, n int) ([]float32, error) {
		used[name] = true
		return ld.vector(name, n)
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
	if c.VocabSize != vocab {
		return nil, fmt.Errorf("%w: token_embd.weight has %d rows but the vocabulary has %d tokens", ErrShape, c.VocabSize, vocab)
	}
	c.TiedOutput = !has("output.weight")
	// The lead holds every row of token_embd (it looks tokens up); the
	// others only the rows they serve when it is the output matrix too.
	used["token_embd.weight"] = true
	if o.Part == 0 {
		if m.tokEmbd, err = ld.matrix("token_embd.weight", c.VocabSize, 0, c.VocabSize, c.Dim, 0); err != nil {
			return nil, err
		}
		types[m.tokEmbd.typ] += c.VocabSize * c.Dim
	} else {
		// Only the shape and type checks.
		w, err := ld.matrix("token_embd.weight", c.VocabSize, 0, 0, c.Dim, 0)
		if err != nil {
			return nil, err
		}
		types[w.typ] += c.VocabSize * c.Dim
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
	// A part holds the q, k and v rows of its heads (partHeads): the query
	// heads of its KV heads, KVMul per KV head.
	qUnit := c.KVMul * c.HeadDim
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
			name, n := p+"attn_qkv.weight", c.Dim+2*c.KVDim
			if L.wq, err = mat(name, n, 0, c.Dim, c.Dim, qUnit); err != nil {
				return nil, err
			}
			if L.wk, err = mat(name, n, c.Dim, c.KVDim, c.Dim, c.HeadDim); err != nil {
				return nil, err
			}
			if L.wv, err = mat(name, n, c.Dim+c.KVDim, c.KVDim, c.Dim, c.HeadDim); err != nil {
				return nil, err
			}
		} else {
			for _, q := range []struct {
				w          *matrix
				name       string
				rows, unit int
			}{{&L.wq, "attn_q.weight", c.Dim, qUnit}, {&L.wk, "attn_k.weight", c.KVDim, c.HeadDim}, {&L.wv, "attn_v.weight", c.KVDim, c.HeadDim}} {
				if *q.w, err = mat(p+q.name, q.rows, 0, q.rows, c.Dim, q.unit); err != nil {
					return nil, err
				}
			}
		}
		if L.wo, err = mat(p+"attn_output.weight", c.Dim, 0, c.Dim, c.Dim, 1); err != nil {
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
			name, n := p+"ffn_up.weight", 2*c.HiddenDim
			if L.gate, err = mat(name, n, 0, c.HiddenDim, c.Dim, 1); err != nil {
				return nil, err
			}
			if L.up, err = mat(name, n, c.HiddenDim, c.HiddenDim, c.Dim, 1); err != nil {
				return nil, err
			}
		} else {
			if L.gate, err = mat(p+"ffn_gate.weight", c.HiddenDim, 0, c.HiddenDim, c.Dim, 1); err != nil {
				return nil, err
			}
			if L.up, err = mat(p+"ffn_up.weight", c.HiddenDim, 0, c.HiddenDim, c.Dim, 1); err != nil {
				return nil, err
			}
		}
		if L.down, err = mat(p+"ffn_down.weight", c.Dim, 0, c.Dim, c.HiddenDim, 1); err != nil {
			return nil, err
		}
	}
	// The output matrix: output.weight, or token_embd's rows again.
	switch {
	case !c.TiedOutput:
		if m.output, err = mat("output.weight", c.VocabSize, 0, c.VocabSize, c.Dim, 1); err != nil {
			return nil, err
		}
	case o.Part == 0:
		m.tokEmbd.unit = 1
		lo, hi := m.tokEmbd.partOf(0, parts)
		m.output = m.tokEmbd.part(lo, hi)
	default:
		if m.output, err = mat("token_embd.weight", c.VocabSize, 0, c.VocabSize, c.Dim, 1); err != nil {
			return nil, err
		}
		types[m.output.typ] -= c.VocabSize * c.Dim // counted once, as the embedding
	}
	for i := range m.layers {
		L := &m.layers[i]
		L.qkv = m.product(&L.wq, &L.wk, &L.wv)
		L.attnOut = m.product(&L.wo)
		L.gateUp = m.product(&L.gate, &L.up)
		L.ffnOut = m.product(&L.down)
	}
	m.cls = m.product(&m.output)
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
	if m.identity, err = modelIdentity(&ld); err != nil {
		return nil, err
	}
	if err := m.checkWeights(o); err != nil {
		return nil, err
	}
	return m, nil
}

// product makes the product of ws, which take the same input: a group per
// run of matrices that take it in one format, numbered on from the
// model's last group.
func (m *Model) product(ws ...*matrix) product {
	var p product
	for len(ws) > 0 {
		n := 1
		for n < len(ws) && ws[n].cols == ws[0].cols && ws[n].tr.VecDotType == ws[0].tr.VecDotType {
			n++
		}
		g := group{id: len(m.groups), mats: ws[:n:n]}
		m.groups = append(m.groups, g)
		p = append(p, g)
		ws = ws[n:]
	}
	return p
}

// Identity is a hash of the model's metadata and tensor table. Two files with
// the same identity hold the same model.
func (m *Model) Identity() [32]byte { return m.identity }

func modelIdentity(ld *loader) ([32]byte, error) {
	f := ld.f
	h := sha256.New()
	// Header, metadata and tensor table: everything before the data section
	// (of every shard of a split model), plus a sample of the data so two
	// models sharing a header differ.
	for _, p := range f.Parts() {
		b := p.Bytes()
		h.Write(b[:min(int(p.DataOffset), len(b))])
	}
	for i := range f.Tensors {
		t := &f.Tensors[i]
		d, err := ld.bytes(t, 0, min(ld.size(t), 64))
		if err != nil {
			return [32]byte{}, err
		}
		h.Write(d)
	}
	var id [32]byte
	h.Sum(id[:0])
	return id, nil
}

// loader reads the tensors of f: views of their Data, or copies read
// through r when f holds no data (gguf.ParseHeader).
type loader struct {
	f           *gguf.File
	r           io.ReaderAt
	part, parts int
}

// size is the byte size of t's data.
func (ld *loader) size(t *gguf.TensorInfo) int {
	tr := quant.TraitsOf(t.Type)
	return int(t.Elements()) / tr.BlockSize * tr.TypeSize
}

// bytes returns n bytes of t's data from byte off on.
func (ld *loader) bytes(t *gguf.TensorInfo, off, n int) ([]byte, error) {
	if t.Data != nil {
		return t.Data[off : off+n], nil
	}
	if n == 0 {
		return nil, nil
	}
	if ld.r == nil {
		return nil, fmt.Errorf("%w: %s has no data and no reader was given", ErrMissing, t.Name)
	}
	b := make([]byte, n)
	if _, err := ld.r.ReadAt(b, int64(ld.f.Pos(t))+int64(off)); err != nil {
		return nil, fmt.Errorf("reading %s: %w", t.Name, err)
	}
	return b, nil
}

// matrix finds a 2-D tensor, checks its shape is [tensorRows][cols] (ggml
// dims: ne0 = cols, ne1 = rows) and its type has kernels, and loads the
// matrix of its rows [first, first+rows): this instance's part of them
// (matrix.partOf) when unit > 0, or all of them (unit 0: the embeddings).
//
// A quantized tensor whose rows are not a whole number of blocks (the Q8_0
// stories260K file stores ffn_down's 172-wide rows as one flat block stream)
// cannot be used row by row: it is dequantized once, in flat order, into an
// owned F32 copy. That is exact and small for the models where it happens.
func (ld *loader) matrix(name string, tensorRows, first, rows, cols, unit int) (matrix, error) {
	t, ok := ld.f.Tensor(name)
	if !ok {
		return matrix{}, fmt.Errorf("%w: %s", ErrMissing, name)
	}
	if len(t.Dims) != 2 || t.Dims[0] != uint64(cols) || t.Dims[1] != uint64(tensorRows) {
		return matrix{}, fmt.Errorf("%w: %s is %v, want [%d %d]", ErrShape, name, t.Dims, cols, tensorRows)
	}
	tr := quant.TraitsOf(t.Type)
	if !tr.HasDot() || !tr.HasDequantize() || !quant.TraitsOf(tr.VecDotType).HasFromFloat() {
		return matrix{}, fmt.Errorf("%w: %s is %s", ErrQuantType, name, t.Type)
	}
	w := matrix{name: name, rows: rows, cols: cols, lo: 0, hi: rows, unit: unit, typ: t.Type, tr: tr}
	if unit > 0 {
		w.lo, w.hi = w.partOf(ld.part, ld.parts)
	}
	lo, hi := w.lo, w.hi
	if cols%tr.BlockSize == 0 {
		w.rowBytes = cols / tr.BlockSize * tr.TypeSize
		var err error
		w.data, err = ld.bytes(t, (first+lo)*w.rowBytes, (hi-lo)*w.rowBytes)
		return w, err
	}
	n := tensorRows * cols
	if n%tr.BlockSize != 0 {
		return matrix{}, fmt.Errorf("%w: %s: %d elements are not a whole number of %s blocks", ErrShape, name, n, t.Type)
	}
	if hi == lo {
		return w, nil
	}
	raw, err := ld.bytes(t, 0, ld.size(t))
	if err != nil {
		return matrix{}, err
	}
	flat := make([]float32, n)
	tr.Dequantize(flat, raw)
	w.typ, w.tr = quant.F32, quant.TraitsOf(quant.F32)
	w.rowBytes = cols * 4
	w.data = quant.F32Bytes(slices.Clone(flat[(first+lo)*cols : (first+hi)*cols]))
	return w, nil
}

// vector reads a 1-D tensor of n elements (a norm weight) into an owned
// []float32, whatever its type.
func (ld *loader) vector(name string, n int) ([]float32, error) {
	t, ok := ld.f.Tensor(name)
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrMissing, name)
	}
	if len(t.Dims) != 1 || t.Dims[0] != uint64(n) {
		return nil, fmt.Errorf("%w: %s is %v, want [%d]", ErrShape, name, t.Dims, n)
	}
	tr := quant.TraitsOf(t.Type)
	if !tr.HasDequantize() || n%tr.BlockSize != 0 {
		return nil, fmt.Errorf("%w: %s is %s", ErrQuantType, name, t.Type)
	}
	b, err := ld.bytes(t, 0, ld.size(t))
	if err != nil {
		return nil, err
	}
	v := make([]float32, n)
	tr.Dequantize(v, b)
	return v, nil
}
