//go:build goexperiment.simd

package quant

// The wasm SIMD128 DotRows kernel of Q5_K (kernels_wasm.go): the
// activation prepared once per call (prepareQ8_KX86), then all the rows
// by q5KDotRows (q5_k_wasm.s), which sums in the reference's order.

//go:noescape
func q5KDotRows(x *byte, nb, rows int, yp *byte, yd, tab, out *float32)

// dotRowsQ5_KSIMD128 is the Q5_K DotRows kernel; rows longer than
// dotRowsMaxCols take the Dot.
func dotRowsQ5_KSIMD128(n int, w, act []byte, out []float32) {
	nb := n / qkK
	rowBytes := nb * q5_KBytes
	if n > dotRowsMaxCols || nb == 0 {
		for r := range out {
			out[r] = dotQ5_KSIMD128(n, w[r*rowBytes:], act)
		}
		return
	}
	rows := len(out)
	w, act = w[:rows*rowBytes], act[:nb*q8_KBytes]
	var (
		yp [dotRowsMaxCols / qkK * q8KPrepBytes]byte
		yd [dotRowsMaxCols / qkK]float32
	)
	prepareQ8_KX86(yp[:], act, nb)
	for j := range nb {
		yd[j] = f32At(act[j*q8_KBytes:])
	}
	if rows > 0 {
		q5KDotRows(&w[0], nb, rows, &yp[0], &yd[0], &fp16ToFP32Table[0], &out[0])
	}
}

//go:noescape
func q5KRowsN(x *byte, nb, rows int, yp *byte, k int, yd, tab *float32, st *byte, out *float32)

// kRowsNChunk is how many rows a DotRowsN kernel's asm call covers (its
// results then go to the outputs).
const kRowsNChunk = 64

// dotRowsNQ5_KSIMD128 is the Q5_K DotRowsN kernel (kRowsN, q3_k_wasm.go).
func dotRowsNQ5_KSIMD128(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	kRowsN(Q5_K, false, n, w, acts, outs, at)
}
