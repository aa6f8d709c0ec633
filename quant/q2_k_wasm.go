//go:build goexperiment.simd

package quant

// The wasm SIMD128 DotRows kernel of Q2_K (kernels_wasm.go): the
// activation prepared once per call, then all the rows by q2KDotRows
// (q2_k_wasm.s), which sums in the reference's order (kDotRows).

//go:noescape
func q2KDotRows(x *byte, nb, rows int, yp *byte, yd, tab, out *float32)

// dotRowsQ2_KSIMD128 is the Q2_K DotRows kernel; rows longer than
// dotRowsMaxCols take the Dot.
func dotRowsQ2_KSIMD128(n int, w, act []byte, out []float32) {
	kDotRows(Q2_K, n, w, act, out)
}

//go:noescape
func q2KRowsN(x *byte, nb, rows int, yp *byte, k int, yd, tab *float32, st *byte, out *float32)

// dotRowsNQ2_KSIMD128 is the Q2_K DotRowsN kernel (kRowsN).
func dotRowsNQ2_KSIMD128(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	kRowsN(Q2_K, false, n, w, acts, outs, at)
}
