package engine

import (
	"time"

	"github.com/picolm/picolm-wasm/quant"
)

// The products layer: every matrix product of the forward pass is one call
// of products.run with a product (the matrices of a step that take the same
// input, grouped at load) and the activations of a batch: one (decoding,
// the MatVec kernels) or several (a prompt batch, the MatMul kernels). The
// session computes its rows of the matrices over its pool; in a model split
// over instances (shard.go) the peers compute theirs meanwhile, one request
// per group. A layer's q, k and v are the exception: each part multiplies
// its own heads' rows (products.local) for its own attention (attend).

// group is matrices multiplied by the same activations in one format (their
// cols and activation types agree): what one request to the other parts of
// a split model computes. A model's groups are numbered at load in the
// order of the forward pass (Model.groups[id]); the parts name a group by
// its id.
type group struct {
	id   int
	mats []*matrix
	// swiglu marks a layer's gate and up as one group: in a split model a
	// part replies with silu(gate)·up of its rows (swigluPart), not with
	// both products, and the lead does the same for its own rows.
	swiglu bool
}

// replyRows is the number of values part of parts replies with per
// activation to a request for g: its rows of g's matrices (of gate alone
// when g.swiglu).
func (g *group) replyRows(part, parts int) int {
	n := 0
	for _, w := range g.replyMats() {
		lo, hi := w.partOf(part, parts)
		n += hi - lo
	}
	return n
}

// replyMats are the matrices of g whose rows a part replies with.
func (g *group) replyMats() []*matrix {
	if g.swiglu {
		return g.mats[:1]
	}
	return g.mats
}

// product is the matrices one step of the forward pass multiplies by its
// input: wq, wk and wv; gate and up; or one matrix. They are one group
// unless the file gives them types whose kernels take the activation in
// different formats (a k-quant mix of a model whose width is not a
// multiple of 256 may): then a group per run of one format.
type product []group

// products computes a session's matrix products.
type products struct {
	pool  *pool
	parts *parts           // the other parts of a split model; nil when whole
	rows  rowsTask         // the product on the pool
	qa    [maxBatch][]byte // the batch's activations in a group's format
	gu    [2][][]float32   // runSwiGLU's outputs: gate (then silu(gate)·up), up

	swigluStep func(b int) // hb[b] = silu(hb[b])·hb2[b] (made once)
}

// run sets outs[i][b] = W_i·acts[b] for the i-th matrix W_i of p and every
// activation b of the batch: outs[i] is [len(acts)][W_i's rows].
func (ps *products) run(p product, acts []activation, outs ...[][]float32) {
	if ps.parts == nil {
		ps.local(p, acts, outs...)
		return
	}
	for i := range p {
		g := &p[i]
		qa := ps.quantized(g, acts)
		ps.parts.start(g, qa)
		t := time.Now()
		ps.group(g, qa, outs)
		ps.parts.stats.Products += time.Since(t)
		ps.parts.finish(g, outs[:len(g.mats)])
		outs = outs[len(g.mats):]
	}
}

// runSwiGLU sets hb[b] = silu(gate·acts[b]) · (up·acts[b]) for a layer's
// p = gate, up (hb2 the up products' room). In a split model whose gate
// and up are one group, each part computes silu(gate)·up of its own rows
// and replies with those; else the products come whole and the SwiGLU is
// run over the positions on the pool.
func (ps *products) runSwiGLU(p product, acts []activation, hb, hb2 [][]float32) {
	if ps.parts == nil || !p[0].swiglu { // (a swiglu group is its product's only one)
		ps.run(p, acts, hb, hb2)
		ps.pool.forEach(len(acts), ps.swigluStep)
		return
	}
	g := &p[0]
	qa := ps.quantized(g, acts)
	ps.parts.start(g, qa)
	t := time.Now()
	ps.gu = [2][][]float32{hb, hb2}
	ps.group(g, qa, ps.gu[:])
	if w := g.mats[0]; w.hi > w.lo {
		for b := range acts {
			swigluPart(hb[b][w.lo:w.hi], hb2[b][w.lo:w.hi], w.lo, w.rows)
		}
	}
	ps.parts.stats.Products += time.Since(t)
	ps.parts.finish(g, ps.gu[:1])
}

// swigluPart sets g[i] = silu(g[i])·u[i] for a slice of a row of n values
// that starts at value lo (g and u hold values lo .. lo+len(g)-1), each
// value as quant.SwiGLU over the whole row computes it: the values before
// n&^15 as its blocks of 16 do (a piece of a block is padded to one), the
// rest as its tail does.
func swigluPart(g, u []float32, lo, n int) {
	u = u[:len(g)]
	v := n&^15 - lo // the end of the whole row's blocks in g
	if e := min(len(g), v); e > 0 {
		a := e &^ 15
		quant.SwiGLU(g[:a], u[:a])
		if a < e {
			var gp, up [16]float32
			copy(gp[:], g[a:e])
			copy(up[:], u[a:e])
			quant.SwiGLU(gp[:], up[:])
			copy(g[a:e], gp[:])
		}
	}
	if s := max(v, 0); s < len(g) {
		quant.SwiGLU(g[s:], u[s:])
	}
}

// local is run for the rows this instance holds alone: outs[i] is
// [len(acts)][W_i's rows here], from row W_i.lo on.
func (ps *products) local(p product, acts []activation, outs ...[][]float32) {
	for i := range p {
		g := &p[i]
		ps.group(g, ps.quantized(g, acts), outs)
		outs = outs[len(g.mats):]
	}
}

// quantized returns the batch's activations in g's format.
func (ps *products) quantized(g *group, acts []activation) [][]byte {
	qa := ps.qa[:len(acts)]
	for b := range acts {
		qa[b] = acts[b].get(g.mats[0].tr.VecDotType)
	}
	return qa
}

// group multiplies this instance's rows of g's matrices by qa on the pool:
// outs[j] is the j-th matrix's.
func (ps *products) group(g *group, qa [][]byte, outs [][][]float32) {
	for j, w := range g.mats {
		rows := w.hi - w.lo
		if rows == 0 {
			continue
		}
		ps.rows = rowsTask{w: w, acts: qa, outs: outs[j]}
		ps.pool.run(&ps.rows, rows, ps.pool.productChunk(rows, len(qa)))
	}
}

// rowsTask is a product on the pool: its items are the rows this instance
// holds of w, from w.lo on.
type rowsTask struct {
	w    *matrix
	acts [][]byte
	outs [][]float32
}

func (t *rowsTask) run(lo, hi int) { t.w.mul(t.acts, t.outs, t.w.lo+lo, t.w.lo+hi) }

// mul sets outs[b][r-w.lo] = W[r]·acts[b] for the rows lo <= r < hi (which
// this instance holds) and every activation: with the decode kernels
// (MatVec: DotRows) for one activation, the batch kernels (MatMul:
// DotRowsN) for several.
func (w *matrix) mul(acts [][]byte, outs [][]float32, lo, hi int) {
	data := w.data[(lo-w.lo)*w.rowBytes : (hi-w.lo)*w.rowBytes]
	if len(acts) == 1 {
		w.tr.MatVec(w.cols, data, acts[0], outs[0][lo-w.lo:hi-w.lo])
		return
	}
	w.tr.MatMul(w.cols, data, acts, outs, lo-w.lo)
}
