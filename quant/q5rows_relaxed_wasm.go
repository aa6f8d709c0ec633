//go:build goexperiment.simd && relaxedsimd

package quant

// The relaxed-SIMD DotRows and DotRowsN kernels of Q5_0, Q5_1 and Q4_1:
// the drivers of the SIMD128 ones (dotRowsQ5, dotRowsNQ5 in
// q5rows_wasm.go) with the activations prepared by q5PrepRelaxed and the
// rows summed by the kernels of q5rows_relaxed_wasm.s, which make ggml's
// fused multiply-adds with f32x4.relaxed_madd.

//go:noescape
func q5PrepRelaxed(dst, src *byte, tab *float32, nb, ysize int)

//go:noescape
func q5_0RowsRelaxed(x, yp *byte, tab *float32, nb, rows int, out *float32)

//go:noescape
func q5_1RowsRelaxed(x, yp *byte, tab *float32, nb, rows int, out *float32)

//go:noescape
func q4_1RowsRelaxed(x, yp *byte, tab *float32, nb, rows int, out *float32)

//go:noescape
func q5PrepQuadRelaxed(dst *byte, ys *[4]*byte, tab *float32, nb, ysize int)

//go:noescape
func q5_0RowNRelaxed(x, yp *byte, tab *float32, nb, quads int, out *float32, wd *byte)

//go:noescape
func q5_1RowNRelaxed(x, yp *byte, tab *float32, nb, quads int, out *float32, wd *byte)

//go:noescape
func q4_1RowNRelaxed(x, yp *byte, tab *float32, nb, quads int, out *float32, wd *byte)

// q5RowsRelaxed sums rows rows of type t at x against the activation
// prepared at yp (q5PrepRelaxed), as q5_0RowsF and its twins.
func q5RowsRelaxed(t Type, x, yp *byte, tab *float32, nb, rows int, out *float32) {
	switch t {
	case Q5_0:
		q5_0RowsRelaxed(x, yp, tab, nb, rows, out)
	case Q5_1:
		q5_1RowsRelaxed(x, yp, tab, nb, rows, out)
	default:
		q4_1RowsRelaxed(x, yp, tab, nb, rows, out)
	}
}

// q5RowNRelaxed sums the row of type t at x against the quads prepared
// at yp (q5PrepQuadRelaxed), quad q's sums at out+36q (q5ResultQuad).
func q5RowNRelaxed(t Type, x, yp *byte, tab *float32, nb, quads int, out *float32, wd *byte) {
	switch t {
	case Q5_0:
		q5_0RowNRelaxed(x, yp, tab, nb, quads, out, wd)
	case Q5_1:
		q5_1RowNRelaxed(x, yp, tab, nb, quads, out, wd)
	default:
		q4_1RowNRelaxed(x, yp, tab, nb, quads, out, wd)
	}
}

func dotRowsQ5_0Relaxed(n int, w, act []byte, out []float32) { dotRowsQ5(Q5_0, true, n, w, act, out) }
func dotRowsQ5_1Relaxed(n int, w, act []byte, out []float32) { dotRowsQ5(Q5_1, true, n, w, act, out) }
func dotRowsQ4_1Relaxed(n int, w, act []byte, out []float32) { dotRowsQ5(Q4_1, true, n, w, act, out) }

func dotRowsNQ5_0Relaxed(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	dotRowsNQ5(Q5_0, true, n, w, acts, outs, at)
}
func dotRowsNQ5_1Relaxed(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	dotRowsNQ5(Q5_1, true, n, w, acts, outs, at)
}
func dotRowsNQ4_1Relaxed(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	dotRowsNQ5(Q4_1, true, n, w, acts, outs, at)
}
