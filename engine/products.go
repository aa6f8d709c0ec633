package engine

import (
	"time"

	"github.com/picolm/picolm-wasm/quant"
)

// The products layer: every matrix product of the forward pass is one call
// of products.run with a product (the matrices of a step that take the same
// input, grouped at load) and the activations of a batch: one (decoding,
// the MatVec kernels) or several (a prompt batch, the MatMul kernels). An
// instance computes the rows it holds over its pool: all of them in a
// whole model; in a model split over instances (shard.go) its own, which
// the parts then exchange. A layer's q, k and v are the exception: each
// part multiplies its own heads' rows (products.local) for its own
// attention (attend).

// group is matrices multiplied by the same activations in one format (their
// cols and activation types agree). A model's groups are numbered at load
// in the order of the forward pass (Model.groups[id]).
type group struct {
	id   int
	mats []*matrix
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
	parts *parts           // this part's side of a split model; nil when whole
	rows  rowsTask         // the product on the pool
	qa    [maxBatch][]byte // the batch's activations in a group's format
	at    [maxBatch][]float32
}

// run sets outs[i][b][r] = W_i[r]·acts[b] for the rows r this instance
// holds of the i-th matrix W_i of p (all of them in a whole model) and
// every activation b of the batch: outs[i] is [len(acts)][W_i's rows].
func (ps *products) run(p product, acts []activation, outs ...[][]float32) {
	var t time.Time
	if ps.parts != nil {
		t = time.Now()
	}
	for i := range p {
		g := &p[i]
		qa := ps.quantized(g, acts)
		for j, w := range g.mats {
			o := outs[j]
			if w.lo != 0 { // the instance's rows from row w.lo on
				for b := range o {
					ps.at[b] = o[b][w.lo:]
				}
				o = ps.at[:len(o)]
			}
			ps.matrix(w, qa, o)
		}
		outs = outs[len(g.mats):]
	}
	if ps.parts != nil {
		ps.parts.stats.Products += time.Since(t)
	}
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
// outs[j] is the j-th matrix's, from row W_j.lo on.
func (ps *products) group(g *group, qa [][]byte, outs [][][]float32) {
	for j, w := range g.mats {
		ps.matrix(w, qa, outs[j])
	}
}

// matrix multiplies this instance's rows of w by qa on the pool: outs is
// [len(qa)][w's rows from w.lo on].
func (ps *products) matrix(w *matrix, qa [][]byte, outs [][]float32) {
	rows := w.hi - w.lo
	if rows == 0 {
		return
	}
	ps.rows = rowsTask{w: w, acts: qa, outs: outs}
	ps.pool.run(&ps.rows, rows, ps.pool.productChunk(rows, len(qa)))
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
