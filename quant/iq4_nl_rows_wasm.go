//go:build goexperiment.simd

package quant

// iq4NLRows4 sets out[0:4·groups] to the dots of the IQ4_NL rows at x
// (rowBytes apart, nb ≥ 1 blocks each) with the activation split by
// splitQ8_0 at yp (yd its blocks' scales as float32, tab
// fp16ToFP32Table), four rows a pass; in iq4_nl_rows_wasm.s.
//
//go:noescape
func iq4NLRows4(x, yp *byte, yd, tab *float32, nb, rowBytes, groups int, out *float32)

// dotRowsIQ4_NLSIMD128 is the IQ4_NL DotRows kernel: the activation split
// once, the rows four at a time in asm (iq4NLRows4: integer and float
// part), the last len(out)%4 by the Dot.
func dotRowsIQ4_NLSIMD128(n int, w, act []byte, out []float32) {
	nb := n / qk
	rowBytes := nb * iq4_NLBytes
	if n > dotRowsMaxCols || nb == 0 {
		dotRows(dotIQ4_NLSIMD128, n, rowBytes, w, act, out)
		return
	}
	w, act = w[:len(out)*rowBytes], act[:nb*q8_0Bytes]
	var yp [2 * dotRowsMaxCols]byte
	var ysum [dotRowsMaxCols / qk]int32
	splitQ8_0(&yp[0], &ysum[0], &act[0], nb)
	var dy [dotRowsMaxCols / qk]float32
	for j := range nb {
		dy[j] = fp16At(act[j*q8_0Bytes:])
	}
	if g := len(out) / 4; g > 0 {
		iq4NLRows4(&w[0], &yp[0], &dy[0], &fp16ToFP32Table[0], nb, rowBytes, g, &out[0])
	}
	for r := len(out) &^ 3; r < len(out); r++ {
		out[r] = dotIQ4_NLSIMD128(n, w[r*rowBytes:], act)
	}
}
