//go:build goexperiment.simd && !relaxedsimd

package quant

// Outside the relaxedsimd build the drivers of q5rows_wasm.go are only
// called with relaxed false: these are never called.

func q5PrepRelaxed(dst, src *byte, tab *float32, nb, ysize int) {
	panic("quant: relaxed-SIMD kernel outside the relaxedsimd build")
}

func q5RowsRelaxed(t Type, x, yp *byte, tab *float32, nb, rows int, out *float32) {
	panic("quant: relaxed-SIMD kernel outside the relaxedsimd build")
}

func q5PrepQuadRelaxed(dst *byte, ys *[4]*byte, tab *float32, nb, ysize int) {
	panic("quant: relaxed-SIMD kernel outside the relaxedsimd build")
}

func q5RowNRelaxed(t Type, x, yp *byte, tab *float32, nb, quads int, out *float32, wd *byte) {
	panic("quant: relaxed-SIMD kernel outside the relaxedsimd build")
}
