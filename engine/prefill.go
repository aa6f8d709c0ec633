package engine

import (
	"fmt"

	"github.com/picolm/picolm-wasm/quant"
)

// prefillBatch is the number of prompt positions Prefill runs together: each
// weight row is read once per batch and dotted with every position's
// activation while it is in cache.
const prefillBatch = 16

// batch holds the activations of up to prefillBatch consecutive positions
// (the batched twins of Session's x, xb, ... buffers).
type batch struct {
	x    [][]float32 // [n][dim] residual streams
	xb   [][]float32 // [n][dim] normed inputs, then attention outputs
	xb2  [][]float32 // [n][dim] sublayer outputs
	q    [][]float32 // [n][dim]
	k    [][]float32 // [n][kvDim]
	v    [][]float32 // [n][kvDim]
	hb   [][]float32 // [n][hidden]
	hb2  [][]float32 // [n][hidden]
	qh   [][]float32 // [n][headDim] attention scratch
	acts []activation
	qa   [][]byte // [n] the activations in one matrix's VecDotType

	start int // the position of the first token of the last chunk run

	// The per-position steps between the matrix products, run for the
	// positions of a chunk over the pool (made once, see Session.bindBatch):
	// attention of position start+b in layer l, then its activation; and
	// silu(gate)*up, then its activation.
	l          int
	attnStep   func(b int)
	swigluStep func(b int)
}

func newBatch(m *Model) *batch {
	c := &m.Config
	rows := func(n int) [][]float32 {
		buf := make([]float32, prefillBatch*n)
		r := make([][]float32, prefillBatch)
		for b := range r {
			r[b] = buf[b*n : (b+1)*n : (b+1)*n]
		}
		return r
	}
	bt := &batch{
		x: rows(c.Dim), xb: rows(c.Dim), xb2: rows(c.Dim), q: rows(c.Dim),
		k: rows(c.KVDim), v: rows(c.KVDim), hb: rows(c.HiddenDim), hb2: rows(c.HiddenDim), qh: rows(c.HeadDim),
		acts: make([]activation, prefillBatch),
		qa:   make([][]byte, prefillBatch),
	}
	for b := range bt.acts {
		bt.acts[b].init(m.vecTypes, max(c.Dim, c.HiddenDim))
	}
	return bt
}

// Prefill runs tokens through the model at the next positions and returns
// the logits after the last one ([vocab], owned by the session, valid until
// the next call). It computes exactly what calling Forward for each token
// does, bit for bit, but in batches of prefillBatch positions: every matrix
// product is a matrix-matrix product that reads each weight row once per
// batch. Its buffers are made by the first call.
func (s *Session) Prefill(tokens []int) ([]float32, error) {
	c := &s.m.Config
	if len(tokens) == 0 {
		return nil, ErrEmptyPrompt
	}
	if err := s.partsErr(); err != nil {
		return nil, err
	}
	if pos := len(s.tokens); len(tokens) > s.ctx-pos {
		return nil, fmt.Errorf("%w: %d tokens at position %d, the context holds %d", ErrContext, len(tokens), pos, s.ctx)
	}
	for _, tok := range tokens {
		if tok < 0 || tok >= c.VocabSize {
			return nil, fmt.Errorf("token id %d outside the vocabulary of %d", tok, c.VocabSize)
		}
	}
	if s.batch == nil {
		s.batch = newBatch(s.m)
		s.bindBatch()
	}
	for len(tokens) > 0 {
		n := min(len(tokens), prefillBatch)
		s.prefillChunk(tokens[:n])
		tokens = tokens[n:]
	}

	// logits = Wout rmsnorm(x) of the last position, as Forward does.
	copy(s.x, s.batch.x[len(s.tokens)-1-s.batch.start])
	rmsnorm(s.x, s.x, s.m.outNorm, c.NormEps)
	s.act.set(s.x)
	s.matvec(s.logits, &s.m.output)
	if err := s.partsErr(); err != nil {
		return nil, err
	}
	return s.logits, nil
}

// bindBatch makes the batch's per-position steps.
func (s *Session) bindBatch() {
	bt := s.batch
	bt.attnStep = func(b int) {
		s.attend(bt.xb[b], bt.q[b], bt.qh[b], bt.l, bt.start+b)
		bt.acts[b].set(bt.xb[b])
	}
	bt.swigluStep = func(b int) {
		quant.SwiGLU(bt.hb[b], bt.hb2[b])
		bt.acts[b].set(bt.hb[b])
	}
}

// prefillChunk runs up to prefillBatch tokens at the next positions; it is
// Forward's layer loop with every step done for each position of the chunk.
func (s *Session) prefillChunk(tokens []int) {
	c := &s.m.Config
	bt := s.batch
	n := len(tokens)
	p0 := len(s.tokens)
	bt.start = p0
	half := c.RopeDim / 2

	for b, tok := range tokens {
		s.m.tokEmbd.tr.Dequantize(bt.x[b], s.m.tokEmbd.row(tok))
	}
	for l := range s.m.layers {
		L := &s.m.layers[l]

		for b := range n {
			rmsnorm(bt.xb[b], bt.x[b], L.attnNorm, c.NormEps)
			bt.acts[b].set(bt.xb[b])
		}
		s.matmul(bt.q[:n], &L.wq)
		s.matmul(bt.k[:n], &L.wk)
		s.matmul(bt.v[:n], &L.wv)
		for b := range n {
			pos := p0 + b
			add(bt.q[b], L.bq)
			add(bt.k[b], L.bk)
			add(bt.v[b], L.bv)
			cos := s.ropeCos[pos*half : (pos+1)*half]
			sin := s.ropeSin[pos*half : (pos+1)*half]
			s.rope(bt.q[b], c.HeadDim, cos, sin)
			s.rope(bt.k[b], c.HeadDim, cos, sin)
			base := (l*s.ctx + pos) * c.KVDim
			kc := s.keyCache[base : base+c.KVDim]
			vc := s.valCache[base : base+c.KVDim]
			for i := range kc {
				kc[i] = quant.FP32ToFP16(bt.k[b][i])
				vc[i] = quant.FP32ToFP16(bt.v[b][i])
			}
		}
		// Attention of each position over 0..pos (the chunk's later
		// positions are in the cache already but not looked at), the
		// positions over the pool.
		bt.l = l
		s.pool.forEach(n, bt.attnStep)
		s.matmul(bt.xb2[:n], &L.wo)
		for b := range n {
			add(bt.xb2[b], L.bo)
			add(bt.x[b], bt.xb2[b])
			rmsnorm(bt.xb[b], bt.x[b], L.ffnNorm, c.NormEps)
			bt.acts[b].set(bt.xb[b])
		}
		s.matmul(bt.hb[:n], &L.gate)
		s.matmul(bt.hb2[:n], &L.up)
		s.pool.forEach(n, bt.swigluStep)
		s.matmul(bt.xb2[:n], &L.down)
		for b := range n {
			add(bt.x[b], bt.xb2[b])
		}
	}
	s.tokens = append(s.tokens, tokens...)
}

// matmul computes outs[b] = W·x_b for the activations of the batch.
func (s *Session) matmul(outs [][]float32, w *matrix) {
	acts := s.batch.qa[:len(outs)]
	for b := range acts {
		acts[b] = s.batch.acts[b].get(w.tr.VecDotType)
	}
	if s.parts != nil {
		s.matmulParts(outs, w, acts)
		return
	}
	s.pool.matmul(outs, w, acts)
}

// matmul is matvec for a batch: outs[b] = W·acts[b] for the rows this
// instance holds, split over the pool's goroutines.
func (p *pool) matmul(outs [][]float32, w *matrix, acts [][]byte) {
	p.run(job{w: w, outs: outs, acts: acts, lo: w.lo, n: w.hi - w.lo})
}

// runBatch computes rows [lo, hi) of a batch: each weight row, once read
// (and each of its blocks once decoded, see quant.Traits.MatMul), is
// dotted with every activation of the batch.
func runBatch(w *matrix, outs [][]float32, acts [][]byte, lo, hi int) {
	w.tr.MatMul(w.cols, w.data[(lo-w.lo)*w.rowBytes:(hi-w.lo)*w.rowBytes], acts, outs, lo)
}
