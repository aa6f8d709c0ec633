//go:build goexperiment.simd

package quant

// The wasm SIMD128 DotRows and DotRowsN kernels of E8_IQ3 (e8iq3_wasm.s);
// dotE8IQ3 (its Dot on every platform) is their portable twin.

//go:noescape
func e8Rows(x, yp *byte, yd, tab *float32, grid *[4]uint8, signs *uint8, nb, rows int, out *float32)

//go:noescape
func e8RowsN(x, yp *byte, yd *float32, tab *float32, acc *int32, nb, rows, acts int, out *float32, grid *[4]uint8, signs *uint8)

// e8Kernels are E8_IQ3's row kernels.
var e8Kernels = kernels{dotRows: dotRowsE8IQ3SIMD128, dotRowsN: dotRowsNE8IQ3SIMD128}

// dotRowsE8IQ3SIMD128 and dotRowsNE8IQ3SIMD128 are E8_IQ3's DotRows and
// DotRowsN kernels (q8krows_wasm.go: e8Rows, e8RowsN, each result times
// 0.125 as dotE8IQ3 does).
func dotRowsE8IQ3SIMD128(n int, w, act []byte, out []float32) {
	q8KRows(E8_IQ3, dotE8IQ3, n, w, act, out)
}

// dotNE8IQ3 is dotE8IQ3 per activation.
func dotNE8IQ3(n int, w []byte, acts [][]byte, out []float32) {
	dotEach(dotE8IQ3, n, w, acts, out)
}

func dotRowsNE8IQ3SIMD128(n int, w []byte, acts [][]byte, outs [][]float32, at int) {
	q8KRowsN(E8_IQ3, dotNE8IQ3, n, w, acts, outs, at)
}
