//go:build goexperiment.simd

package quant

// The wasm SIMD128 DotRows kernel of Q3_K (kernels_wasm.go): the
// activation prepared once per call (prepareQ8_KX86), then all the rows
// by q3KDotRows (q3_k_wasm.s), which sums in the reference's order.

//go:noescape
func q3KDotRows(x *byte, nb, rows int, yp *byte, yd, tab, out *float32)

// dotRowsQ3_KSIMD128 is the Q3_K DotRows kernel; rows longer than
// dotRowsMaxCols take the Dot.
func dotRowsQ3_KSIMD128(n int, w, act []byte, out []float32) {
	kDotRows(q3_KBytes, q3KDotRows, dotQ3_KSIMD128, n, w, act, out)
}

// kDotRows is the DotRows kernel of a K-quant of size bytes a block with
// the row kernel rows (q3KDotRows, …) and the Dot kernel dot for rows
// longer than dotRowsMaxCols.
func kDotRows(size int, rows func(x *byte, nb, rows int, yp *byte, yd, tab, out *float32), dot func(n int, w, act []byte) float32, n int, w, act []byte, out []float32) {
	nb := n / qkK
	rowBytes := nb * size
	if n > dotRowsMaxCols || nb == 0 {
		for r := range out {
			out[r] = dot(n, w[r*rowBytes:], act)
		}
		return
	}
	if len(out) == 0 {
		return
	}
	w, act = w[:len(out)*rowBytes], act[:nb*q8_KBytes]
	var (
		yp [dotRowsMaxCols / qkK * q8KPrepBytes]byte
		yd [dotRowsMaxCols / qkK]float32
	)
	prepareQ8_KX86(yp[:], act, nb)
	for j := range nb {
		yd[j] = f32At(act[j*q8_KBytes:])
	}
	rows(&w[0], nb, len(out), &yp[0], &yd[0], &fp16ToFP32Table[0], &out[0])
}
