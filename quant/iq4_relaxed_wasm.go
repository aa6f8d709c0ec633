//go:build goexperiment.simd && relaxedsimd

package quant

// The relaxed-SIMD kernels of IQ4_XS and IQ4_NL (iq4_relaxed_wasm.s): the
// relaxed int8 dot with the activation's signs moved onto the levels, and
// f32x4.relaxed_madd for the references' fused multiply-adds. An
// activation byte of -128, which ggml's quantizers never write, has no
// magnitude in 0..127: the call then takes the SIMD128 kernel, so every
// result is the reference's bits.

//go:noescape
func iq4XSDotRelaxed(x, y *byte, tab *float32, nb int, out *float32) bool

//go:noescape
func absSignQ8_K(dst, src *byte, nb int) bool

//go:noescape
func iq4XSRowsRelaxed(x, y, yp *byte, tab *float32, nb, rows int, out *float32)

//go:noescape
func iq4XSRowsNRelaxed(x *byte, nb int, yp *byte, k int, d *float32, acc *[MaxDotN][8]float32, lanes *[MaxDotN][8]int32)

//go:noescape
func iq4NLRows4Relaxed(x, yp *byte, yd, tab *float32, nb, rowBytes, groups int, out *float32)

//go:noescape
func iq4NLRowsNRelaxed(x, yq *byte, tab *float32, nb, rows, quads int, out *float32)

// dotIQ4_XSRelaxed is the IQ4_XS Dot kernel: iq4XSDotRelaxed, or the
// SIMD128 kernel for an activation with a byte of -128.
func dotIQ4_XSRelaxed(n int, w, act []byte) float32 {
	nb := n / qkK
	if nb == 0 {
		return 0
	}
	w, act = w[:nb*iq4_XSBytes], act[:nb*q8_KBytes]
	var sum float32
	if !iq4XSDotRelaxed(&w[0], &act[0], &fp16ToFP32Table[0], nb, &sum) {
		return dotIQ4_XSSIMD128(n, w, act)
	}
	return sum
}

// dotRowsIQ4_XSRelaxed is the IQ4_XS DotRows kernel: the activation's
// magnitudes and signs prepared once (absSignQ8_K), then every row in one
// call (iq4XSRowsRelaxed).
func dotRowsIQ4_XSRelaxed(n int, w, act []byte, out []float32) {
	nb := n / qkK
	rowBytes := nb * iq4_XSBytes
	if n > dotRowsMaxCols || nb == 0 || len(out) == 0 {
		dotRowsIQ4_XSSIMD128(n, w, act, out)
		return
	}
	w, act = w[:len(out)*rowBytes], act[:nb*q8_KBytes]
	var yp [dotRowsMaxCols / qkK * 2 * qkK]byte
	if !absSignQ8_K(&yp[0], &act[0], nb) {
		dotRowsIQ4_XSSIMD128(n, w, act, out)
		return
	}
	iq4XSRowsRelaxed(&w[0], &act[0], &yp[0], &fp16ToFP32Table[0], nb, len(out), &out[0])
}

// dotRowsNIQ4_XSRelaxed is the IQ4_XS DotRowsN kernel: the SIMD128 one's
// (dotRowsNIQ4_XS) with iq4XSRowsNRelaxed.
func dotRowsNIQ4_XSRelaxed(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	dotRowsNIQ4_XS(true, n, w, acts, outs, at)
}

// dotRowsIQ4_NLRelaxed is the IQ4_NL DotRows kernel: dotRowsIQ4_NLSIMD128
// with the activation prepared by absSignQ8_0 and iq4NLRows4Relaxed.
func dotRowsIQ4_NLRelaxed(n int, w, act []byte, out []float32) {
	var a q8_0Act
	if !a.prepareScales(n, iq4_NLBytes, w, act, out) || !absSignQ8_0(&a.yp[0], &act[0], a.nb) {
		dotRowsIQ4_NLSIMD128(n, w, act, out)
		return
	}
	if g := len(out) / 4; g > 0 {
		iq4NLRows4Relaxed(&w[0], &a.yp[0], &a.yd[0], &fp16ToFP32Table[0], a.nb, a.rowBytes, g, &out[0])
	}
	a.tail(dotIQ4_NLSIMD128, n, w, act, out)
}

// dotRowsNIQ4_NLRelaxed is the IQ4_NL DotRowsN kernel: the activations
// prepared by prepQ8_0Quad, the rows by iq4NLRowsNRelaxed
// (dotRowsNQ8Relaxed).
func dotRowsNIQ4_NLRelaxed(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	if nb := n / qk; nb == 0 || nb > dotRowsNQ8Blocks {
		dotRowsNIQ4_NLSIMD128(n, w, acts, outs, at)
		return
	}
	dotRowsNQ8Relaxed(true, n, w, acts, outs, at)
}
