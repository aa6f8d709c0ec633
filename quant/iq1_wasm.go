//go:build goexperiment.simd

package quant

// The wasm SIMD128 DotRows and DotRowsN kernels of IQ1_S (iq1_wasm.s);
// its Dot and DotN are iqKernels' (iqk_wasm.go). dotIQ1_SRef is their
// portable twin.

//go:noescape
func iq1sRows(x, yp, y *byte, yd, tab *float32, grid *[8]int8, nb, rows int, out *float32)

//go:noescape
func iq1sRowsN(x, yp *byte, yd *float32, tab *float32, acc *int32, nb, rows, acts int, out *float32, grid *[8]int8)

// iq1SKernels returns IQ1_S's kernels: iqKernels' Dot and DotN, and the
// row kernels below.
func iq1SKernels() kernels {
	k := iqKernels(IQ1_S)
	k.dotRows = dotRowsIQ1_SSIMD128
	k.dotRowsN = dotRowsNIQ1_SSIMD128
	return k
}

// dotIQ1_SSIMD128 and dotNIQ1_SSIMD128 are iqKernels' Dot and DotN of
// IQ1_S, for the rows too long for the row kernels.
func dotIQ1_SSIMD128(n int, w, act []byte) float32 {
	var out [1]float32
	iqDotScaledSIMD128(IQ1_S, n, w, [][]byte{act}, out[:])
	return out[0]
}

func dotNIQ1_SSIMD128(n int, w []byte, acts [][]byte, out []float32) {
	iqDotScaledSIMD128(IQ1_S, n, w, acts, out)
}

// dotRowsIQ1_SSIMD128 and dotRowsNIQ1_SSIMD128 are IQ1_S's DotRows and
// DotRowsN kernels (q8krows_wasm.go: iq1sRows, iq1sRowsN).
func dotRowsIQ1_SSIMD128(n int, w, act []byte, out []float32) {
	q8KRows(IQ1_S, dotIQ1_SSIMD128, n, w, act, out)
}

func dotRowsNIQ1_SSIMD128(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	q8KRowsN(IQ1_S, dotNIQ1_SSIMD128, n, w, acts, outs, at)
}

//go:noescape
func iq1mRows(x, yp *byte, yd, tab *float32, grid *[8]int8, nb, rows int, out *float32)

//go:noescape
func iq1mRowsN(x, yp *byte, yd *float32, tab *float32, acc *int32, nb, rows, acts int, out *float32, grid *[8]int8)

// iq1MKernels returns IQ1_M's kernels: iqKernels' Dot and DotN, and the
// row kernels below.
func iq1MKernels() kernels {
	k := iqKernels(IQ1_M)
	k.dotRows = dotRowsIQ1_MSIMD128
	k.dotRowsN = dotRowsNIQ1_MSIMD128
	return k
}

// dotIQ1_MSIMD128 and dotNIQ1_MSIMD128 are iqKernels' Dot and DotN of
// IQ1_M, for the rows too long for the row kernels.
func dotIQ1_MSIMD128(n int, w, act []byte) float32 {
	var out [1]float32
	iqDotScaledSIMD128(IQ1_M, n, w, [][]byte{act}, out[:])
	return out[0]
}

func dotNIQ1_MSIMD128(n int, w []byte, acts [][]byte, out []float32) {
	iqDotScaledSIMD128(IQ1_M, n, w, acts, out)
}

// dotRowsIQ1_MSIMD128 and dotRowsNIQ1_MSIMD128 are IQ1_M's DotRows and
// DotRowsN kernels (q8krows_wasm.go: iq1mRows, iq1mRowsN).
func dotRowsIQ1_MSIMD128(n int, w, act []byte, out []float32) {
	q8KRows(IQ1_M, dotIQ1_MSIMD128, n, w, act, out)
}

func dotRowsNIQ1_MSIMD128(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	q8KRowsN(IQ1_M, dotNIQ1_MSIMD128, n, w, acts, outs, at)
}
